"""Debug mode, @jiasu.kernel(debug=True) (JIASU_DEBUG=1: every kernel), on the CPU backend and on a GPU alike: every
array index, tuple index taken at run time and integer divisor is checked. The launch's first index out of bounds
raises IndexError naming the kernel, the array, the index, the shape, the Python file:line:column, the thread and the
block; an integer // or % by zero raises ZeroDivisionError with the place, thread and block. Both backends word the
message the same. Kernels that stay in bounds give the same results either way."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu
from jiasu import cuda

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
def gather(a, rows, cols, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = a[rows[i], cols[i]]


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


@jiasu.kernel(debug=True)
def divide(x, out, n):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] // (n - i)


@jiasu.kernel(debug=True)
def remainder(x, out, n):
    i = jiasu.grid(1)
    if i < out.size:
        q = x[i]
        q %= n - i
        out[i] = q


@cuda.jit(debug=True)
def numba_copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i + 1]


def line_of(fragment):
    return source_line(__file__, fragment)


def place(fragment, column, thread, block=(0, 0, 0)):
    """Where a failure is, as the message ends: file:line:column, thread and block."""
    return (f" at {__file__}:{line_of(fragment)}:{column} (thread ({thread[0]}, {thread[1]}, {thread[2]}) of block "
            f"({block[0]}, {block[1]}, {block[2]}))")


def raised(error, call):
    with pytest.raises(error) as excinfo:
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
    a = rng.random((4, 5))
    rows, cols = np.array([-4, -1, 3, 0]), np.array([-5, 4, -1, 2])
    got = poisoned(4, np.float64)
    gather[1, 4](jiasu.asarray(a), jiasu.asarray(rows), jiasu.asarray(cols), got)
    assert_same(got, a[rows, cols])


def test_read_past_the_end(rng, healthy):
    x = rng.random(8, dtype=np.float32)
    out = jiasu.zeros(8, np.float32)
    for _ in range(2):  # on a GPU the second launch takes the repeat path
        message = raised(IndexError, lambda: shifted_copy[2, 4](jiasu.asarray(x), out, 1))
        assert message == ("kernel 'shifted_copy' (debug): index 8 is out of bounds for axis 0 with size 8: x[8] of "
                           "shape (8,)" + place("out[i] = x[i + shift]", 18, (3, 0, 0), (1, 0, 0)))
    np.testing.assert_array_equal(out.get()[:7], x[1:])  # the threads in bounds did their work
    healthy()
    x_out = poisoned(7, np.float32)
    shifted_copy[1, 8](jiasu.asarray(x), x_out, 1)  # the failure was cleared: nothing more to report
    assert_same(x_out, x[1:])


def test_negative_index_below_minus_size(rng):
    x = rng.random(8, dtype=np.float32)
    message = raised(IndexError, lambda: shifted_copy[1, 8](jiasu.asarray(x), jiasu.zeros(8, np.float32), -9))
    assert message == ("kernel 'shifted_copy' (debug): index -9 is out of bounds for axis 0 with size 8: x[-9] of "
                       "shape (8,)" + place("out[i] = x[i + shift]", 18, (0, 0, 0)))


def test_two_dimensional_index_names_its_axis(rng):
    a = rng.random((4, 5))
    rows, cols = np.array([0, 3, 1, 2]), np.array([0, 4, -6, 1])  # thread 2 reads a[1, -6]
    message = raised(IndexError, lambda: gather[1, 4](jiasu.asarray(a), jiasu.asarray(rows), jiasu.asarray(cols),
                                                       jiasu.zeros(4)))
    assert message == ("kernel 'gather' (debug): index -6 is out of bounds for axis 1 with size 5: a[1, -6] of shape "
                       "(4, 5)" + place("out[i] = a[rows[i], cols[i]]", 18, (2, 0, 0)))


def test_two_dimensional_grid_names_thread_and_block(rng):
    a = rng.random((3, 5))
    message = raised(IndexError, lambda: transpose[(2, 2), (4, 4)](jiasu.asarray(a), jiasu.zeros((5, 5))))
    # Several threads read a row past the third; which is first differs on a GPU, the words do not.
    assert message.startswith("kernel 'transpose' (debug): index ")
    assert "is out of bounds for axis 0 with size 3: a[" in message and "] of shape (3, 5)" in message
    assert f"test_kernels_debug.py:{line_of('out[i, j] = a[j, i]')}:21 (thread (" in message


def test_write_out_of_bounds_is_caught_before_it_happens():
    memory = jiasu.zeros(8, np.float32)
    out = memory[:4]  # memory[4:]: the neighbour a stray write to out[4] would reach
    index = jiasu.asarray(np.array([0, 1, 2, 4], np.int64))
    message = raised(IndexError, lambda: scatter[1, 4](index, jiasu.asarray(np.ones(4, np.float32)), out))
    assert message == ("kernel 'scatter' (debug): index 4 is out of bounds for axis 0 with size 4: out[4] of shape "
                       "(4,)" + place("out[index[i]] = values[i]", 9, (3, 0, 0)))
    np.testing.assert_array_equal(memory.get(), [1, 1, 1, 0, 0, 0, 0, 0])


def test_atomic_index_is_checked():
    bins = jiasu.zeros(4, np.int32)
    keys = jiasu.asarray(np.arange(100, dtype=np.int64) % 5)
    message = raised(IndexError, lambda: count_into[2, 64](bins, keys))
    assert "kernel 'count_into' (debug): index 4 is out of bounds for axis 0 with size 4: bins[4] of shape (4,)" \
        in message


def test_integer_floor_division_by_zero(rng, healthy):
    x = rng.integers(-50, 50, 8)
    out = poisoned(8, np.int64)
    divide[1, 8](jiasu.asarray(x), out, 100)
    assert_same(out, x // (100 - np.arange(8)))
    message = raised(ZeroDivisionError, lambda: divide[1, 8](jiasu.asarray(x), jiasu.zeros(8, np.int64), 5))
    assert message == ("kernel 'divide' (debug): integer division or modulo by zero" +
                       place("out[i] = x[i] // (n - i)", 18, (5, 0, 0)))
    healthy()


def test_integer_modulo_by_zero(rng):
    x = rng.integers(-50, 50, 16)
    message = raised(ZeroDivisionError, lambda: remainder[4, 4](jiasu.asarray(x), jiasu.zeros(16, np.int64), 13))
    assert message == ("kernel 'remainder' (debug): integer division or modulo by zero" +
                       place("q %= n - i", 9, (1, 0, 0), (3, 0, 0)))
    out = poisoned(16, np.int64)
    remainder[4, 4](jiasu.asarray(x), out, 100)
    assert_same(out, x % (100 - np.arange(16)))


def test_float_division_by_zero_stays_numpys(rng):
    x = rng.random(8) + 1.0
    out = poisoned(8, np.float64)
    divide[1, 8](jiasu.asarray(x), out, 3.0)  # x // 0.0 in thread 3: inf, as NumPy gives, not an error
    with np.errstate(divide="ignore"):
        assert_same(out, x // (3.0 - np.arange(8)))


def test_numba_debug_option_checks_indices(rng):
    x = rng.random(8, dtype=np.float32)
    message = raised(IndexError, lambda: numba_copy[1, 8](jiasu.asarray(x), jiasu.zeros(8, np.float32)))
    assert message == ("kernel 'numba_copy' (debug): index 8 is out of bounds for axis 0 with size 8: x[8] of "
                       "shape (8,)" + place("out[i] = x[i + 1]", 18, (7, 0, 0)))


def test_both_backends_give_the_same_message(rng):
    if not jiasu.is_available():
        pytest.skip("needs a CUDA GPU to compare with")
    a = rng.random((4, 5))
    rows, cols = np.array([0, 3, 1, 2]), np.array([0, 4, 5, 1])
    messages = []
    for name in ("cpu", "cuda"):
        with jiasu.backend(name):
            call = lambda: gather[1, 4](jiasu.asarray(a), jiasu.asarray(rows), jiasu.asarray(cols), jiasu.zeros(4))
            messages.append(raised(IndexError, call))
            messages.append(raised(ZeroDivisionError,
                                   lambda: divide[1, 8](jiasu.asarray(rows), jiasu.zeros(4, np.int64), 2)))
    assert messages[0] == messages[2] and messages[1] == messages[3]
    assert "a[1, 5] of shape (4, 5)" in messages[0] and "thread (2, 0, 0)" in messages[0]  # rows[2], cols[2]


ENVIRONMENT_SCRIPT = textwrap.dedent("""\
    import numpy as np
    import jiasu

    @jiasu.kernel
    def copy_next(x, out):
        i = jiasu.grid(1)
        if i < out.size:
            out[i] = x[i + 1]

    try:  # x[4] is in memory (the fifth of eight), beyond the view
        copy_next[1, 4](jiasu.asarray(np.arange(8.0))[:4], jiasu.zeros(4))
        print("unchecked")
    except IndexError as e:
        print(e)
    """)


def run_script(tmp_path, backend, debug):
    script = tmp_path / "copy_next.py"
    script.write_text(ENVIRONMENT_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "JIASU_DEBUG"}
    env["JIASU_BACKEND"] = backend
    if debug is not None:
        env["JIASU_DEBUG"] = debug
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    return done, script


def test_jiasu_debug_makes_every_kernel_a_debug_kernel(tmp_path, backend):
    done, script = run_script(tmp_path, backend, "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"kernel 'copy_next' (debug): index 4 is out of bounds for axis 0 with size 4: "
                                   f"x[4] of shape (4,) at {script}:8:18 (thread (3, 0, 0) of block (0, 0, 0))")
    for off in (None, "0"):
        done, _ = run_script(tmp_path, backend, off)
        assert (done.returncode, done.stdout.strip()) == (0, "unchecked"), done.stderr


def test_jiasu_debug_other_values_are_refused(tmp_path, backend):
    done, _ = run_script(tmp_path, backend, "yes")
    assert done.returncode != 0
    assert "ValueError: JIASU_DEBUG must be 1 (every kernel in debug mode) or 0, not 'yes'" in done.stderr


def test_debug_must_be_a_bool():
    with pytest.raises(TypeError, match="debug must be True or False"):
        jiasu.kernel(debug="yes")
