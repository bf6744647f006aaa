"""Debug mode, @jiasu.kernel(debug=True): on the CPU backend every array index is checked and the first one
out of bounds raises IndexError naming the kernel, the array, the index, the shape and the Python line; on a
GPU the kernel runs unchecked. Kernels that stay in bounds give the same results either way."""

import numpy as np
import pytest

import jiasu

from kernels.kernels_support import assert_same, poisoned, source_line


@jiasu.kernel(debug=True)
def shifted_copy(x, out, shift):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i + shift]


@jiasu.kernel(debug=True)
def transpose(a, out):
    i, j = jiasu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[j, i]


@jiasu.kernel(debug=True)
def scatter(index, values, out):
    i = jiasu.grid(1)
    if i < values.size:
        out[index[i]] = values[i]


@jiasu.kernel(debug=True)
def count_into(bins, keys):
    i = jiasu.grid(1)
    if i < keys.size:
        jiasu.atomic.add(bins, keys[i], 1)


def line_of(fragment):
    return source_line(__file__, fragment)


def raises_index_error(call):
    with pytest.raises(IndexError) as excinfo:
        call()
    return str(excinfo.value)


def test_in_bounds_debug_kernels_give_right_results(rng):
    x = rng.random(100, dtype=np.float32)
    out = poisoned(90, np.float32)
    shifted_copy[1, 128](jiasu.asarray(x), out, 10)
    assert_same(out, x[10:])
    a = rng.random((6, 9))
    t = poisoned((9, 6), np.float64)
    transpose[(1, 1), (16, 16)](jiasu.asarray(a), t)
    assert_same(t, a.T)


def test_negative_indices_in_range_are_fine(rng):
    x = rng.random(16, dtype=np.float32)
    out = poisoned(16, np.float32)
    shifted_copy[1, 16](jiasu.asarray(x), out, -16)  # x[i - 16]: NumPy's negative indices, all valid
    assert_same(out, x)


def test_read_past_the_end(cpu_only, rng):
    x = rng.random(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    message = raises_index_error(lambda: shifted_copy[1, 8](x, out, 1))
    assert "kernel 'shifted_copy'" in message
    assert "index 8 is out of bounds for axis 0 with size 8" in message
    assert "x[8] of shape (8,)" in message
    assert f"test_kernels_debug.py:{line_of('out[i] = x[i + shift]')}:18" in message
    assert "thread (7, 0, 0) of block (0, 0, 0)" in message
    np.testing.assert_array_equal(out[:7], x[1:])  # the threads in bounds did their work


def test_negative_index_below_minus_size(cpu_only, rng):
    x = rng.random(8, dtype=np.float32)
    message = raises_index_error(lambda: shifted_copy[1, 8](x, np.zeros(8, np.float32), -9))
    assert "index -9 is out of bounds for axis 0 with size 8" in message
    assert "thread (0, 0, 0)" in message


def test_two_dimensional_index_names_its_axis(cpu_only, rng):
    a = rng.random((3, 5))
    message = raises_index_error(lambda: transpose[(1, 1), (8, 8)](a, np.zeros((5, 5))))
    assert "index 3 is out of bounds for axis 0 with size 3: a[3, 0] of shape (3, 5)" in message
    assert f":{line_of('out[i, j] = a[j, i]')}:" in message


def test_write_out_of_bounds_is_caught_before_it_happens(cpu_only):
    memory = np.zeros(8, np.float32)
    out, guard = memory[:4], memory[4:]  # guard: the neighbour a stray write to out[4] would reach
    index = np.array([0, 1, 2, 4], np.int64)
    message = raises_index_error(lambda: scatter[1, 4](index, np.ones(4, np.float32), out))
    assert "out[4] of shape (4,)" in message and "scatter" in message
    assert guard.sum() == 0


def test_atomic_index_is_checked(cpu_only):
    bins = np.zeros(4, np.int32)
    message = raises_index_error(lambda: count_into[2, 64](bins, np.arange(100, dtype=np.int64) % 5))
    assert "bins[4] of shape (4,)" in message


def test_debug_must_be_a_bool():
    with pytest.raises(TypeError, match="debug must be True or False"):
        jiasu.kernel(debug="yes")
