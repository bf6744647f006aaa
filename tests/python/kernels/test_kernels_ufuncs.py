"""Python-written kernels calling NumPy's ufuncs as Numba allows: the operator ufuncs (np.add, np.bitwise_and,
np.less, np.logical_xor, ...) on scalars, and any ufunc given its output array (np.sin(x, out), out=...),
which fills it element by element from arrays of its shape and scalars. References: NumPy itself."""
import numpy as np
import pytest

import jiasu


@jiasu.kernel
def k_operator_ufuncs(a, b, ints, out_f, out_i, out_b):
    i = jiasu.grid(1)
    if i < a.size:
        out_f[0, i] = np.add(a[i], b[i])
        out_f[1, i] = np.subtract(a[i], b[i])
        out_f[2, i] = np.multiply(a[i], b[i])
        out_f[3, i] = np.divide(a[i], b[i])
        out_f[4, i] = np.true_divide(ints[i], 4)
        out_f[5, i] = np.floor_divide(a[i], b[i])
        out_f[6, i] = np.negative(a[i])
        out_f[7, i] = np.fmax(a[i], b[i])
        out_f[8, i] = np.fmin(a[i], b[i])
        out_i[0, i] = np.bitwise_and(ints[i], 6)
        out_i[1, i] = np.bitwise_or(ints[i], 6)
        out_i[2, i] = np.bitwise_xor(ints[i], 6)
        out_i[3, i] = np.invert(ints[i])
        out_i[4, i] = np.left_shift(ints[i], 2)
        out_i[5, i] = np.right_shift(ints[i], 1)
        out_b[0, i] = np.less(a[i], b[i])
        out_b[1, i] = np.less_equal(a[i], b[i])
        out_b[2, i] = np.greater(a[i], b[i])
        out_b[3, i] = np.greater_equal(a[i], b[i])
        out_b[4, i] = np.equal(a[i], b[i])
        out_b[5, i] = np.not_equal(a[i], b[i])
        out_b[6, i] = np.logical_and(a[i], ints[i])
        out_b[7, i] = np.logical_or(a[i], ints[i])
        out_b[8, i] = np.logical_xor(a[i], ints[i])
        out_b[9, i] = np.logical_not(ints[i])


def test_operator_ufuncs_match_numpy(rng):
    n = 300
    a = rng.integers(-3, 4, n).astype(np.float64)
    b = rng.integers(-3, 4, n).astype(np.float64)
    a[::17], b[::13] = np.nan, 0.0
    ints = rng.integers(-50, 50, n).astype(np.int64)
    out_f, out_i, out_b = jiasu.zeros((9, n)), jiasu.zeros((6, n), np.int64), jiasu.zeros((10, n), np.bool_)
    k_operator_ufuncs[3, 128](jiasu.asarray(a), jiasu.asarray(b), jiasu.asarray(ints), out_f, out_i, out_b)
    with np.errstate(all="ignore"):
        expected_f = [a + b, a - b, a * b, a / b, ints / 4, a // b, -a, np.fmax(a, b), np.fmin(a, b)]
        expected_b = [a < b, a <= b, a > b, a >= b, a == b, a != b, np.logical_and(a, ints),
                      np.logical_or(a, ints), np.logical_xor(a, ints), np.logical_not(ints)]
    np.testing.assert_array_equal(out_f.get(), np.array(expected_f))
    np.testing.assert_array_equal(out_i.get(), np.array([ints & 6, ints | 6, ints ^ 6, ~ints, ints << 2, ints >> 1]))
    np.testing.assert_array_equal(out_b.get(), np.array(expected_b))


@jiasu.kernel
def k_fill_unary(x, out):
    np.sin(x, out)


@jiasu.kernel
def k_fill_binary(x, y, out):
    np.arctan2(x, y, out=out)


@jiasu.kernel
def k_fill_logical(x, y, out):
    np.logical_and(x, y, out)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)], ids=["1d", "2d", "3d"])
def test_a_ufunc_fills_its_output_array(shape, rng):
    x = rng.uniform(-3, 3, shape)
    y = rng.uniform(-3, 3, shape)
    out = jiasu.zeros(shape)
    k_fill_unary[1, 1](jiasu.asarray(x), out)
    np.testing.assert_allclose(out.get(), np.sin(x), rtol=1e-15)
    k_fill_binary[1, 1](jiasu.asarray(x), 0.5, out)  # a scalar input is broadcast
    np.testing.assert_allclose(out.get(), np.arctan2(x, 0.5), rtol=1e-15)
    k_fill_binary[1, 1](jiasu.asarray(x), jiasu.asarray(y), out)
    np.testing.assert_allclose(out.get(), np.arctan2(x, y), rtol=1e-15)
    flags = jiasu.zeros(shape, np.int32)  # bools stored into an int32 output, as NumPy casts
    k_fill_logical[1, 1](jiasu.asarray(x > 0), jiasu.asarray(y > 0), flags)
    np.testing.assert_array_equal(flags.get(), np.logical_and(x > 0, y > 0).astype(np.int32))


def test_scalar_inputs_fill_a_one_element_output_and_fortran_inputs_are_read_by_index(rng):
    out = np.zeros(1, np.float32)
    k_fill_unary[1, 1](np.float32(0.5), out)  # Numba's tests pass a scalar and a 1-element output
    np.testing.assert_allclose(out, np.sin(np.float32(0.5)), rtol=1e-6)
    x = np.asfortranarray(rng.uniform(-1, 1, (4, 6)))
    out2 = np.zeros((4, 6))
    k_fill_unary[1, 1](x, out2)
    np.testing.assert_allclose(out2, np.sin(x), rtol=1e-15)


@jiasu.kernel
def k_complex_ufuncs(z, w, order, extremes, logs):
    i = jiasu.grid(1)
    if i < z.size:
        order[0, i] = np.less(z[i], w[i])
        order[1, i] = np.greater_equal(z[i], w[i])
        extremes[0, i] = np.maximum(z[i], w[i])
        extremes[1, i] = np.fmin(z[i], w[i])
        logs[i] = np.log2(z[i])


def test_complex_numbers_order_as_numpy_orders_them(rng):
    n = 64
    z = (rng.integers(-2, 3, n) + 1j * rng.integers(-2, 3, n)).astype(np.complex128)
    w = (rng.integers(-2, 3, n) + 1j * rng.integers(-2, 3, n)).astype(np.complex128)
    z[0] = 0.5 + 1j  # make some logs finite
    order, extremes, logs = jiasu.zeros((2, n), np.bool_), jiasu.zeros((2, n), np.complex128), jiasu.zeros(n, np.complex128)
    k_complex_ufuncs[1, 64](jiasu.asarray(z), jiasu.asarray(w), order, extremes, logs)
    np.testing.assert_array_equal(order.get(), np.array([np.less(z, w), np.greater_equal(z, w)]))
    np.testing.assert_array_equal(extremes.get(), np.array([np.maximum(z, w), np.fmin(z, w)]))
    finite = z != 0
    np.testing.assert_allclose(logs.get()[finite], np.log2(z[finite]), rtol=1e-15)


def test_ufunc_outputs_must_be_arrays_of_the_inputs_dimensions():
    def scalar_out(x, out):
        np.sin(x, out[0])

    def wrong_rank(x, out):
        np.sin(x, out)

    with pytest.raises(jiasu.CompileError, match=r"np.sin\(\)'s output must be an array variable, not float64"):
        jiasu.kernel(scalar_out)[1, 1](jiasu.zeros(3), jiasu.zeros(3))
    with pytest.raises(jiasu.CompileError, match=r"np.sin\(\) takes arrays of its output's dimensions \(1\)"):
        jiasu.kernel(wrong_rank)[1, 1](jiasu.zeros((3, 3)), jiasu.zeros(3))
