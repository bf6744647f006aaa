"""Builds the C++ core's GoogleTest suite (tests/cpp) with CMake and runs it with ctest.

The build folder is build/ctest-py under the repository root, so that later runs are incremental.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = REPO / "build" / "ctest-py"

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not on PATH")

CONFIGURE_TIMEOUT = 300
BUILD_TIMEOUT = 1800  # a cold build takes 1-2 minutes on 2 cores; leave room for slow CI machines
TEST_TIMEOUT = 600


def run(command, timeout):
    try:
        result = subprocess.run(command, cwd=BUILD, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{' '.join(map(str, command))} timed out after {timeout} s\n{error.stdout or ''}{error.stderr or ''}")
    return result


def report(result):
    return f"$ {' '.join(map(str, result.args))}\n--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"


def test_cpp_unit_tests_pass():
    assert (REPO / "CMakeLists.txt").is_file() and (REPO / "tests" / "cpp").is_dir(), REPO
    BUILD.mkdir(parents=True, exist_ok=True)
    configure = ["cmake", "-S", str(REPO), "-B", str(BUILD), "-DJIASU_BUILD_PYTHON=OFF", "-DJIASU_BUILD_TESTS=ON"]
    cache = BUILD / "CMakeCache.txt"
    if not cache.exists() and shutil.which("ninja"):
        configure += ["-G", "Ninja"]  # a folder keeps the generator it was first configured with
    result = run(configure, CONFIGURE_TIMEOUT)
    assert result.returncode == 0, "CMake configure failed\n" + report(result)

    jobs = str(os.cpu_count() or 2)
    result = run(["cmake", "--build", str(BUILD), "--parallel", jobs], BUILD_TIMEOUT)
    assert result.returncode == 0, "building the C++ tests failed\n" + report(result)

    result = run(["ctest", "--test-dir", str(BUILD), "--output-on-failure", "--no-tests=error", "-j", jobs],
                 TEST_TIMEOUT)
    assert result.returncode == 0, "ctest failed\n" + report(result)
    assert "100% tests passed" in result.stdout, report(result)
