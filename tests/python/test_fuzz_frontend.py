"""Builds the front end's libFuzzer target (tests/fuzz) with CMake and clang, and fuzzes it for a bounded
time (JIASU_FUZZ_SECONDS, default 60) from the seed corpus tests/fuzz/corpus, which holds the reproducers
of every bug it found. Any crash, sanitizer report, hang (10 s for one input), leak or wrong outcome (see
tests/fuzz/fuzz_frontend.cpp) fails the test with the reproducer.

Skipped where cmake or a clang with libFuzzer is missing. The build folder is build/fuzz-py under the
repository root, so that later runs are incremental.
"""
import base64
import os
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = REPO / "build" / "fuzz-py"
FUZZ = REPO / "tests" / "fuzz"
SECONDS = int(os.environ.get("JIASU_FUZZ_SECONDS", "60"))


def libfuzzer_missing(tmp_path):
    """Why a fuzz target cannot be built here, or None."""
    if shutil.which("cmake") is None:
        return "cmake is not on PATH"
    if shutil.which("clang++") is None:
        return "clang++ is not on PATH (the fuzzer needs clang's libFuzzer)"
    probe = tmp_path / "probe.cpp"
    probe.write_text('#include <cstddef>\n#include <cstdint>\n'
                     'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n')
    result = subprocess.run(["clang++", "-fsanitize=fuzzer,address,undefined", str(probe), "-o", str(tmp_path / "probe")],
                            capture_output=True, text=True)
    if result.returncode != 0:
        return "clang++ cannot link a libFuzzer target with AddressSanitizer: " + result.stderr.strip()[-300:]
    return None


def run(command, timeout, **kwargs):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{' '.join(map(str, command))} timed out after {timeout} s\n{error.stdout or ''}{error.stderr or ''}")


def report(result):
    return f"$ {' '.join(map(str, result.args))}\n{result.stdout[-4000:]}\n{result.stderr[-8000:]}"


def reproducer(path):
    data = path.read_bytes()
    return (f"--- {path.name} ({len(data)} bytes); rerun it with: {BUILD / 'fuzz_frontend'} {path}\n"
            f"{data.decode('utf-8', 'backslashreplace')}\n--- base64: {base64.b64encode(data).decode()}\n")


def test_the_front_end_survives_fuzzing(tmp_path):
    missing = libfuzzer_missing(tmp_path)
    if missing:
        pytest.skip(missing)
    BUILD.mkdir(parents=True, exist_ok=True)
    configure = ["cmake", "-S", str(REPO), "-B", str(BUILD), "-DCMAKE_CXX_COMPILER=clang++",
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DJIASU_BUILD_PYTHON=OFF", "-DJIASU_BUILD_FUZZER=ON"]
    if not (BUILD / "CMakeCache.txt").exists() and shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    result = run(configure, 300)
    assert result.returncode == 0, "CMake configure failed\n" + report(result)
    jobs = str(os.cpu_count() or 2)
    result = run(["cmake", "--build", str(BUILD), "--target", "fuzz_frontend", "--parallel", jobs], 1800)
    assert result.returncode == 0, "building the fuzzer failed\n" + report(result)

    corpus, artifacts = tmp_path / "corpus", tmp_path / "artifacts"
    corpus.mkdir()
    artifacts.mkdir()
    # New inputs go to the first folder (a temporary one); the seeds are only read.
    command = [str(BUILD / "fuzz_frontend"), f"-max_total_time={SECONDS}", "-timeout=10", "-rss_limit_mb=2048",
               "-max_len=8192", f"-dict={FUZZ / 'frontend.dict'}", f"-artifact_prefix={artifacts}/",
               "-print_final_stats=1", str(corpus), str(FUZZ / "corpus")]
    result = run(command, SECONDS + 600)
    found = "".join(reproducer(path) for path in sorted(artifacts.iterdir()))
    assert result.returncode == 0 and not found, f"the fuzzer found a bug\n{found}\n{report(result)}"
    runs = re.search(r"stat::number_of_executed_units: (\d+)", result.stderr)
    assert runs and int(runs.group(1)) > 0, report(result)
    print(f"{runs.group(1)} inputs in {SECONDS} s, no failure")
