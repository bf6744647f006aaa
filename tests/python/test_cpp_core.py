"""Builds the C++ core's GoogleTest suite (tests/cpp) with CMake and runs it with ctest, in three configurations:
the default compiler, clang, and AddressSanitizer + UBSan. Every run uses more CPU threads than this machine
has cores (JIASU_CPU_THREADS: twice the cores, at least 16) and compiles the CPU backend's kernels with the same compiler (and, for the
sanitizers, instrumented too): a bug that one compiler, C library or core count hides shows up in another.

Then the CPU kernel tests run again in fresh interpreters: with clang for the CPU backend, and with the
extension module and every kernel built under the sanitizers.

Build folders are build/ctest-<configuration> under the repository root, so that later runs are incremental.
"""
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

CONFIGURE_TIMEOUT = 300
BUILD_TIMEOUT = 1800  # a cold build takes a few minutes on 2 cores; leave room for slow CI machines
TEST_TIMEOUT = 1200
THREADS = str(max(16, 2 * (os.cpu_count() or 1)))  # more OS threads than cores

# The core must be free of undefined behaviour; kernels may overflow signed integers and shift as Python code
# asks (documented as wrapping), so those checks stay off for them.
CORE_SANITIZERS = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
KERNEL_SANITIZERS = ("-fsanitize=address,undefined -fno-sanitize=signed-integer-overflow,shift,float-cast-overflow "
                     "-fno-sanitize-recover=all -fno-omit-frame-pointer")
SANITIZER_OPTIONS = {
    # Python and the driver stub leak by design; fibers switch stacks, which ASan cannot follow into its
    # stack-use-after-return bookkeeping.
    "ASAN_OPTIONS": "detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}


def default_cxx():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")


def compiler_wrapper(folder, compiler, flags):
    """A C++ compiler for the CPU backend (JIASU_CXX) that adds flags: kernels built like the code under test."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cxx"
    path.write_text(f'#!/bin/sh\nexec {compiler} {flags} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def configurations():
    gcc = default_cxx()
    clang = shutil.which("clang++")
    return {
        "default": (gcc, "", {}),
        "clang": (clang, "", {}),
        "sanitizers": (gcc, CORE_SANITIZERS, SANITIZER_OPTIONS),
    }


def run(command, cwd, timeout, env=None):
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{' '.join(map(str, command))} timed out after {timeout} s\n{error.stdout or ''}{error.stderr or ''}")


def report(result):
    return f"$ {' '.join(map(str, result.args))}\n--- stdout ---\n{result.stdout[-20000:]}\n--- stderr ---\n{result.stderr[-20000:]}"


def with_python_module(name):
    """The sanitizer configuration builds the C++ suite and the Python module in one folder, so that the core
    (slow to compile under the sanitizers) is compiled once for both; the others build the suite alone."""
    if name != "sanitizers":
        return False
    try:
        import nanobind  # noqa: F401  (the module is built with it, as pip would)
    except ImportError:
        return False
    return True


def build(name, compiler, flags):
    """Configures and builds one configuration's folder (the C++ suite, and the Python module where
    with_python_module says); returns it."""
    folder = REPO / "build" / f"ctest-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    configure = ["cmake", "-S", str(REPO), "-B", str(folder), f"-DCMAKE_CXX_COMPILER={compiler}",
                 f"-DCMAKE_CXX_FLAGS={flags}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo" if flags else "-DCMAKE_BUILD_TYPE=Release",
                 "-DJIASU_BUILD_TESTS=ON"]
    if with_python_module(name):
        configure += ["-DJIASU_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
    else:
        configure += ["-DJIASU_BUILD_PYTHON=OFF"]
    if not (folder / "CMakeCache.txt").exists() and shutil.which("ninja"):
        configure += ["-G", "Ninja"]  # a folder keeps the generator it was first configured with
    result = run(configure, folder, CONFIGURE_TIMEOUT)
    assert result.returncode == 0, "CMake configure failed\n" + report(result)
    result = run(["cmake", "--build", str(folder), "--parallel", str(os.cpu_count() or 2)], folder, BUILD_TIMEOUT)
    assert result.returncode == 0, "the build failed\n" + report(result)
    return folder


def environment(folder, compiler, kernel_flags, extra):
    env = dict(os.environ, JIASU_CPU_THREADS=THREADS, JIASU_CACHE_DIR=str(folder / "kernel-cache"), **extra)
    env["JIASU_CXX"] = compiler_wrapper(folder / "cxx", compiler, kernel_flags) if kernel_flags else compiler
    return env


pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not on PATH")


@pytest.mark.parametrize("name", ["default", "clang", "sanitizers"])
def test_cpp_unit_tests_pass(name):
    compiler, flags, extra = configurations()[name]
    if compiler is None:
        pytest.skip(f"no compiler for the {name} configuration")
    assert (REPO / "CMakeLists.txt").is_file() and (REPO / "tests" / "cpp").is_dir(), REPO
    folder = build(name, compiler, flags)
    env = environment(folder, compiler, KERNEL_SANITIZERS if flags else "", extra)
    jobs = str(os.cpu_count() or 2)
    result = run(["ctest", "--test-dir", str(folder), "--output-on-failure", "--no-tests=error", "-j", jobs],
                 folder, TEST_TIMEOUT, env)
    assert result.returncode == 0, "ctest failed\n" + report(result)
    assert "100% tests passed" in result.stdout, report(result)


# The CPU kernel suite, in fresh interpreters (the installed jiasu, or the given module folder first on the path):
# one per four cores, each a share of the tests (JIASU_TEST_SHARD), since under the sanitizers each kernel takes
# seconds to compile.
def run_kernel_tests(env, logs, package_folder=None):
    if package_folder:
        env["PYTHONPATH"] = os.pathsep.join([str(package_folder), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-k", "cpu",
               str(REPO / "tests" / "python" / "kernels")]
    shards = max(1, (os.cpu_count() or 1) // 4)
    logs.mkdir(parents=True, exist_ok=True)
    outputs = [logs / f"shard-{i}.log" for i in range(shards)]  # files, not pipes: no shard waits on another
    processes = []
    for i, path in enumerate(outputs):
        with open(path, "w") as log:
            processes.append(subprocess.Popen(command, cwd=REPO, env=dict(env, JIASU_TEST_SHARD=f"{i}/{shards}"),
                                              stdout=log, stderr=subprocess.STDOUT))
    deadline = time.monotonic() + TEST_TIMEOUT
    try:
        for p in processes:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        for p in processes:
            p.kill()
            p.wait()
        pytest.fail(f"{' '.join(command)} timed out after {TEST_TIMEOUT} s")
    for i, (p, path) in enumerate(zip(processes, outputs)):
        output = path.read_text(errors="replace")
        shown = f"$ JIASU_TEST_SHARD={i}/{shards} {' '.join(command)}\n{output[-20000:]}"
        assert p.returncode == 0, "the CPU kernel tests failed\n" + shown
        assert " passed" in output and " failed" not in output, shown


def test_cpu_kernels_with_clang(tmp_path):
    compiler = shutil.which("clang++")
    if compiler is None:
        pytest.skip("clang++ is not installed")
    run_kernel_tests(environment(tmp_path, compiler, "", {}), tmp_path / "logs")


def test_cpu_kernels_under_the_sanitizers(tmp_path):
    compiler = default_cxx()
    runtime = subprocess.run([compiler, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not os.path.isfile(runtime):
        pytest.skip(f"{compiler} has no AddressSanitizer runtime")
    if not with_python_module("sanitizers"):
        pytest.skip("nanobind is not installed")
    folder = build("sanitizers", compiler, CORE_SANITIZERS)
    package = tmp_path / "site" / "jiasu"
    shutil.copytree(REPO / "python" / "jiasu", package)
    for module in folder.glob("_core*.so"):
        shutil.copy2(module, package)
    ubsan = subprocess.run([compiler, "-print-file-name=libubsan.so"], capture_output=True, text=True).stdout.strip()
    env = environment(tmp_path, compiler, KERNEL_SANITIZERS, SANITIZER_OPTIONS)
    env["LD_PRELOAD"] = " ".join(p for p in (runtime, ubsan) if os.path.isfile(p))  # before Python's own malloc
    run_kernel_tests(env, tmp_path / "logs", package.parent)
