"""print() in kernels, as Numba's CUDA target prints: integers, bools and string literals as Python's own print
writes them, floats as C's '%f', separated by spaces, one line per call. On the CPU backend the launch's lines come
out before it returns, after what Python printed before it; on a GPU, at the next synchronisation."""
import io

import numpy as np
import pytest

import jiasu

from .kernels_support import blocks_for


@jiasu.func
def show(tag, value):
    print(tag, value)  # a device function prints too
    return value


@jiasu.kernel
def k_print_values(ints, uints, floats, halves, flags):
    i = jiasu.grid(1)
    if i < ints.size:
        print("row", i, ints[i], uints[i], floats[i], halves[i], flags[i], "100% done,", "  spaced  ")
        show(-7, flags[i] and i > 2)


def python_print(*values):
    """What Python's own print writes for these values."""
    buffer = io.StringIO()
    print(*values, file=buffer)
    return buffer.getvalue()


def test_print_writes_what_python_writes_with_floats_as_percent_f(rng, capfd):
    n = 37
    ints = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    ints[:2] = [-(2**63), 2**63 - 1]
    uints = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    uints[:2] = [0, 2**64 - 1]
    floats = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 12, n)).astype(np.float32)
    floats[:4] = [np.inf, -np.inf, -0.0, 1.5]
    halves = rng.standard_normal(n).astype(np.float16)
    flags = rng.random(n) < 0.5
    args = [jiasu.asarray(a) for a in (ints, uints, floats, halves, flags)]
    k_print_values[blocks_for(n, 16), 16](*args)
    jiasu.synchronize()
    expected = []
    for i in range(n):
        expected.append(python_print("row", i, int(ints[i]), int(uints[i]), "%f" % floats[i], "%f" % halves[i],
                                     bool(flags[i]), "100% done,", "  spaced  "))
        expected.append(python_print(-7, bool(flags[i] and i > 2)))
    lines = capfd.readouterr().out.splitlines(keepends=True)
    # blocks run in any order, and a thread's two lines need not be together: compare the lines, sorted
    assert sorted(lines) == sorted(expected)


@jiasu.kernel
def k_print_nothing(n):
    if jiasu.grid(1) < n:
        print()


def test_an_empty_print_is_an_empty_line(capfd):
    k_print_nothing[2, 8](11)
    jiasu.synchronize()
    assert capfd.readouterr().out == "\n" * 11


@jiasu.kernel
def k_print_sum(x):
    if jiasu.grid(1) == 0:
        print("sum", x[0] + x[1])


def test_on_the_cpu_the_lines_come_between_what_python_prints_before_and_after(cpu_only, capfd):
    print("before")
    k_print_sum[1, 32](jiasu.asarray(np.array([2, 3], dtype=np.int32)))
    print("after")
    assert capfd.readouterr().out == "before\nsum 5\nafter\n"


@jiasu.kernel
def k_print_with_sep(z):
    print(z, sep="")


@jiasu.kernel
def k_print_complex(z):
    print(z)


def test_printing_refuses_keywords_and_what_numba_cannot_print():
    with pytest.raises(jiasu.CompileError, match="print\\(\\) in a kernel takes no keyword arguments \\('sep='\\)"):
        k_print_with_sep[1, 1](1.5)
    with pytest.raises(jiasu.CompileError, match="cannot print complex128 values"):
        k_print_complex[1, 1](1 + 2j)
