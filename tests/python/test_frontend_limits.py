"""The front end's nesting limits (docs/kernel-language.md, "Limits"), from Python: code past them is a
CompileError at its place instead of a crash, code at them compiles on a thread with a 1 MiB stack, and
long chains at the limit compute what NumPy computes. Each case runs in its own process
(frontend_limits_cases.py), so that a crash fails the test rather than ending pytest.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

CASES = pathlib.Path(__file__).with_name("frontend_limits_cases.py")


def run_case(case, directory, env=None):
    result = subprocess.run([sys.executable, str(CASES), case, str(directory)], capture_output=True, text=True,
                            timeout=900, env=env)
    assert result.returncode == 0, f"{case} exited with {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout.splitlines()


def test_a_10000_term_sum_and_a_50000_branch_elif_are_compile_errors(tmp_path):
    lines = run_case("too_deep", tmp_path)
    # the 999th '+' of "    out[0] = x[0] + x[0] + ..." (at column 19, then every 7) makes 1001 levels
    assert lines[0] == ("sum_10000: CompileError 2:" + str(19 + 7 * 998) + " expression too deeply nested (more "
                        "than 1000 levels, each operator of a chain such as a + b + c counting as one)")
    # elif 999 (line 3 + 2 * 999) would open the 1001st level of blocks
    assert lines[1] == ("elif_50000: CompileError 2001:5 blocks too deeply nested (more than 1000 levels, each elif "
                        "counting as one): split the if/elif chain")


def test_at_the_limits_the_front_end_fits_in_a_thread_with_a_1_mib_stack(tmp_path):
    lines = run_case("at_limits_on_small_stack", tmp_path)
    for name in ("sum_998", "elif_998", "calls_198"):
        assert any(line.startswith(f"{name}: compiled, ") for line in lines), lines
    assert "sum_10000: CompileError 2:7005" in lines
    assert "elif_50000: CompileError 2001:5" in lines


def test_long_chains_at_the_limit_compute_as_numpy(tmp_path):
    assert run_case("long_chains_compute_as_numpy", tmp_path) == [
        "sum float64: equal", "sum float32: equal", "sum int8: equal", "mixed float64: close"]


@pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not on PATH")
def test_long_chains_compile_with_clang_whose_bracket_nesting_is_bounded(tmp_path, tmp_cache):
    # clang refuses brackets nested more than 256 deep: a chain is written without nesting them
    env = dict(os.environ, JIASU_CXX="clang++")
    assert run_case("long_chains_compute_as_numpy", tmp_path, env) == [
        "sum float64: equal", "sum float32: equal", "sum int8: equal", "mixed float64: close"]
