"""`raise` in kernels and device functions, and tuples indexed and looped over at run time. On the CPU backend a
raise stops the launch, which raises the exception class the kernel named, its message saying where (function,
file, line, column, thread and block, as Numba's debug mode words it), with or without debug mode. On a GPU a
debug kernel reports the first raise in the same words after the launch; outside debug mode the raising thread
ends and nothing is reported, as Numba does."""

import numpy as np
import pytest

import jiasu

from kernels.kernels_support import TOL, assert_rel, assert_same, poisoned, source_line


class OutOfStock(Exception):
    pass


REASON = "the shelf is empty"
WEIGHTS = (0.5, 1.5, 2.0, 4.0)
OFFSETS = (3, 1, 2, 0)


@jiasu.func
def checked_half(x):
    if x < 0:
        raise ValueError(REASON)
    return x / 2


@jiasu.kernel
def halve(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = checked_half(x[i])


@jiasu.kernel(debug=True)
def halve_checked(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = checked_half(x[i])


@jiasu.kernel(debug=True)
def take(stock, wanted, out):
    i = jiasu.grid(1)
    if i < wanted.size:
        if wanted[i] > stock[i]:
            raise OutOfStock
        out[i] = stock[i] - wanted[i]


@jiasu.kernel
def weighted(x, out):
    i = jiasu.grid(1)
    if i < out.size:
        total = 0.0
        for k, w in enumerate(WEIGHTS):
            total += w * x[i + OFFSETS[k]]
        for w, offset in zip(WEIGHTS, OFFSETS):
            total -= 0.5 * w * x[i + offset]
        out[i] = total


@jiasu.kernel(debug=True)
def axis_from_end(a, out, k):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = a.shape[-k]


def line_of(fragment):
    return source_line(__file__, fragment)


def test_no_raise_runs_through(rng):
    x = rng.random(300)
    out = poisoned(300, np.float64)
    halve[3, 128](jiasu.asarray(x), out)
    assert_same(out, x / 2)


def test_raise_in_device_function_names_class_message_and_place(rng, cpu_only, healthy):
    x = rng.random(300)
    x[257] = -1.0
    with pytest.raises(ValueError) as info:
        halve[3, 128](jiasu.asarray(x), jiasu.zeros(300))
    assert str(info.value) == (f"In function 'checked_half', file {__file__}, line {line_of('raise ValueError')}, "
                               f"column 9, tid=[1, 0, 0] ctaid=[2, 0, 0]: {REASON}")
    healthy()


def test_debug_kernel_reports_a_device_function_raise(rng, healthy):
    x = rng.random(300)
    x[257] = -1.0
    for _ in range(2):  # the second launch takes the repeat path
        with pytest.raises(ValueError) as info:
            halve_checked[3, 128](jiasu.asarray(x), jiasu.zeros(300))
        assert str(info.value) == (f"In function 'checked_half', file {__file__}, line {line_of('raise ValueError')}, "
                                   f"column 9, tid=[1, 0, 0] ctaid=[2, 0, 0]: {REASON}")
    x[257] = 1.0
    out = poisoned(300, np.float64)
    halve_checked[3, 128](jiasu.asarray(x), out)  # the record was cleared: nothing more to report
    assert_same(out, x / 2)
    healthy()


def test_gpu_raise_outside_debug_mode_ends_the_thread(rng, backend):
    if backend == "cpu":
        pytest.skip("the CPU backend reports every raise")
    x = rng.random(300)
    x[257] = -1.0
    out = poisoned(300, np.float64)
    halve[3, 128](jiasu.asarray(x), out)
    got, expected = out.get(), x / 2
    assert_same(got[:257], expected[:257])
    assert_same(got[258:], expected[258:])


def test_user_exception_without_message(rng):
    stock = rng.integers(5, 10, 64)
    wanted = rng.integers(0, 5, 64)
    out = poisoned(64, stock.dtype)
    take[2, 32](jiasu.asarray(stock), jiasu.asarray(wanted), out)
    assert_same(out, stock - wanted)
    wanted[40] = 20
    with pytest.raises(OutOfStock) as info:
        take[2, 32](jiasu.asarray(stock), jiasu.asarray(wanted), jiasu.zeros(64, dtype=stock.dtype))
    assert str(info.value).endswith("tid=[8, 0, 0] ctaid=[1, 0, 0]")
    assert f"line {line_of('raise OutOfStock')}, column 13" in str(info.value)


def test_loops_over_tuple_globals(rng):
    x = rng.random(103)
    out = poisoned(100, np.float64)
    weighted[1, 128](jiasu.asarray(x), out)
    expected = sum(0.5 * w * x[o:o + 100] for w, o in zip(WEIGHTS, OFFSETS))
    assert_rel(out, expected, TOL[np.dtype(np.float64)])


def test_tuple_index_at_run_time(rng):
    a = jiasu.zeros((3, 5, 7))
    out = poisoned(4, np.int64)
    axis_from_end[1, 4](a, out, 1)
    assert_same(out, np.full(4, 7))
    axis_from_end[1, 4](a, out, 3)
    assert_same(out, np.full(4, 3))
    with pytest.raises(IndexError, match="tuple index out of range: index -4 of a tuple of 3 items"):
        axis_from_end[1, 4](a, out, 4)
