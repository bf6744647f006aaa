"""The elementwise operations (jiasu.add & co., Array's operators) against NumPy: result dtypes for every
op and dtype pair (NumPy's ufunc rules with NEP 50 weak scalars), values (NumPy's own result, or float64
references where precision matters), broadcasting with 0-size and 0-d shapes, negative strides and other
non-contiguous views, scalars on both sides, out=, in-place operators, astype/copy/assignment, and the
errors. Runs on the CPU backend everywhere and on CUDA where a GPU is present."""
import ml_dtypes
import numpy as np
import pytest

import jiasu


pytestmark = pytest.mark.usefixtures("each_backend")


REAL = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
        np.float32, np.float64]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "power", "maximum", "minimum", "arctan2",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or",
          "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor"]
UNARY = ["negative", "positive", "abs", "invert", "square", "sign", "sqrt", "exp", "exp2", "log", "log2", "log10",
         "log1p", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "floor", "ceil",
         "trunc", "rint", "isnan", "isinf", "isfinite", "logical_not"]
NUMPY_NAME = {"abs": "absolute"}


def numpy_op(name):
    return getattr(np, NUMPY_NAME.get(name, name))


def sample(rng, dtype, n=37, positive=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind in "iu":
        low = 0 if positive or dtype.kind == "u" else -20
        return rng.integers(low, 21, n).astype(dtype)
    values = rng.uniform(0 if positive else -3, 3, n)
    values[:3] = [0.0, 0.5, -0.0 if not positive else 1.0]
    return values.astype(dtype)


def numpy_result(op, *args):
    """NumPy's answer, or the exception type it raises."""
    with np.errstate(all="ignore"):
        try:
            return op(*args)
        except (TypeError, ValueError, OverflowError) as error:  # NumPy's own subclasses: the base class
            return next(base for base in (TypeError, OverflowError, ValueError) if isinstance(error, base))


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype in (np.float16, ml_dtypes.bfloat16):
        return 2e-3
    if dtype == np.float32:
        return 2e-6
    return 1e-13


def assert_matches(actual, expected):
    assert isinstance(actual, jiasu.Array)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    got = actual.get()
    if expected.dtype.kind in "fc":
        # The CPU and GPU math libraries (and fused multiply-adds) differ from NumPy's by an ulp or two.
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        part = np.dtype({"c": f"f{expected.dtype.itemsize // 2}"}.get(expected.dtype.kind, expected.dtype))
        np.testing.assert_allclose(got.astype(wide), expected.astype(wide), rtol=tolerance(part), atol=tolerance(part),
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def check(name, *numpy_args, out=None):
    """jiasu.NAME on the jiasu copies of the arrays among numpy_args equals NumPy's result (or error type)."""
    expected = numpy_result(numpy_op(name), *numpy_args)
    args = [jiasu.asarray(a) if isinstance(a, np.ndarray) else a for a in numpy_args]
    if isinstance(expected, type):
        with pytest.raises(expected):
            getattr(jiasu, name)(*args)
        return
    assert_matches(getattr(jiasu, name)(*args), np.asarray(expected))


# Each new (operation, dtypes) is one NVRTC compile on a GPU (~0.1 s, then cached on disk), so there the pairs
# are each dtype with itself and a spread of mixed ones; the CPU backend takes every pair.
GPU_PAIRS = [(t, t) for t in REAL] + [(np.int8, np.uint8), (np.int16, np.float16), (np.uint32, np.float32),
                                      (np.int64, np.uint64), (np.bool_, np.int32), (np.float16, np.float64)]


def dtype_pairs(each_backend):
    return [(a, b) for a in REAL for b in REAL] if each_backend == "cpu" else GPU_PAIRS


@pytest.mark.parametrize("name", BINARY)
def test_binary_every_dtype_pair(name, rng, each_backend):
    for a_type, b_type in dtype_pairs(each_backend):
        a = sample(rng, a_type)
        b = sample(rng, b_type, positive=name in ("power", "left_shift", "right_shift"))
        if name in ("left_shift", "right_shift"):
            b = b % 8 if b.dtype != np.bool_ else b
        check(name, a, b)


@pytest.mark.parametrize("name", UNARY)
def test_unary_every_dtype(name, rng):
    for dtype in REAL:
        check(name, sample(rng, dtype, positive=name in ("sqrt", "log", "log2", "log10")))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "divide", "floor_divide", "less", "sqrt", "exp"])
def test_bfloat16(name, rng):
    args = [sample(rng, np.float32, positive=True).astype(ml_dtypes.bfloat16)]
    if name in BINARY:
        args.append(sample(rng, np.float32, positive=True).astype(ml_dtypes.bfloat16) + 1)
    expected = numpy_op(name)(*[a.astype(np.float32) for a in args])
    actual = getattr(jiasu, name)(*[jiasu.asarray(a) for a in args])
    want = ml_dtypes.bfloat16 if expected.dtype == np.float32 else expected.dtype
    assert actual.dtype == want
    np.testing.assert_allclose(actual.get().astype(np.float64), expected.astype(np.float64), rtol=1e-2)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "power", "maximum",
                                  "less", "equal", "bitwise_and", "left_shift", "arctan2"])
@pytest.mark.parametrize("scalar", [3, 2.5, True, np.float32(1.5), np.int16(2)])
def test_scalars_on_both_sides(name, scalar, rng, each_backend):
    dtypes = (np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64)
    for dtype in dtypes if each_backend == "cpu" else (np.int8, np.float32):
        a = sample(rng, dtype, positive=True)
        check(name, a, scalar)
        check(name, scalar, a)


def test_python_int_out_of_range_is_overflow():
    a = jiasu.asarray(np.arange(3, dtype=np.int8))
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        a + 300
    with pytest.raises(OverflowError):
        jiasu.asarray(np.arange(3, dtype=np.uint8)) - (-1)
    assert (a + 127).dtype == np.int8
    assert jiasu.divide(a, 300).dtype == np.float64  # a float loop: nothing to overflow
    np.testing.assert_array_equal((jiasu.asarray(np.arange(3, dtype=np.uint8)) == -1).get(), [False] * 3)
    # numpy.float64 subclasses Python's float but is a strong NumPy scalar (NEP 50).
    assert (jiasu.asarray(np.ones(2, np.float32)) + np.float64(1.5)).dtype == np.float64
    assert (jiasu.asarray(np.ones(2, np.float32)) + 1.5).dtype == np.float32
    assert (jiasu.asarray(np.ones(2, np.complex64)) + np.complex128(1)).dtype == np.complex128
    assert (jiasu.asarray(np.ones(2, np.complex64)) + 1j).dtype == np.complex64
    big = jiasu.asarray(np.ones(2, np.float32)) + 2**70
    assert big.dtype == np.float32
    np.testing.assert_allclose(big.get(), np.float32(2.0**70))


SHAPES = [((2, 3), (3,)), ((4, 1), (1, 5)), ((0, 3), (1, 3)), ((3, 0), (3, 1)), ((), (2, 2)), ((), ()),
          ((2, 1, 3), (4, 1)), ((1,), (5,)), ((0,), ())]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["add", "less", "maximum", "floor_divide"])
def test_broadcast_shapes(shapes, name, rng):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.integers(1, 9, shapes[1]).astype(np.int16)
    check(name, np.asarray(a), np.asarray(b))
    check(name, np.asarray(b), np.asarray(a))


def test_broadcast_error_in_numpys_words():
    a, b = jiasu.zeros((2, 3)), jiasu.zeros((4,))
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes \(2,3\) \(4,\)"):
        a + b


def test_where_and_clip(rng):
    x = rng.standard_normal((4, 5))
    y = rng.integers(-3, 3, (5,)).astype(np.int32)
    condition = x > 0
    np.testing.assert_array_equal(jiasu.where(jiasu.asarray(condition), jiasu.asarray(x), jiasu.asarray(y)).get(),
                                  np.where(condition, x, y))
    assert jiasu.where(jiasu.asarray(condition), jiasu.asarray(y), 0.5).dtype == np.float64
    z = (x + 1j * x[::-1]).astype(np.complex64)  # complex selects too, with NumPy's result types
    for other in (0.5, 2j, y, z.astype(np.complex128)):
        expected = np.where(condition, z, other)
        got = jiasu.where(jiasu.asarray(condition), jiasu.asarray(z), other if np.isscalar(other) else jiasu.asarray(other))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected)
    check("clip", x, -0.5, 0.5)
    check("clip", y, np.int32(-1), 2)
    with_nan = np.array([np.nan, 1.0, 5.0])
    check("clip", with_nan, 0.0, 2.0)


@pytest.mark.parametrize("view", ["reversed", "step", "column", "reversed_2d", "broadcast_row"])
def test_non_contiguous_views(view, rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    other = rng.standard_normal((6, 8)).astype(np.float32)
    j, o = jiasu.asarray(base), jiasu.asarray(other)
    select = {"reversed": (slice(None, None, -1),), "step": (slice(None), slice(None, None, 3)),
              "column": (slice(None), 2), "reversed_2d": (slice(None, None, -2), slice(None, None, -1)),
              "broadcast_row": (slice(0, 1),)}[view]
    expected = base[select] * 2 + other[select]
    got = (j[select] * 2 + o[select]).get()
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose((j[select] - o[select][..., ::-1]).get(), base[select] - other[select][..., ::-1],
                               rtol=1e-6)


VECTOR_DTYPES = [np.bool_, np.int8, np.int16, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
                 np.complex128]


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype == ml_dtypes.bfloat16:
        return rng.standard_normal(shape).astype(dtype)
    return sample(rng, dtype, int(np.prod(shape))).reshape(shape)


def expect_close(actual, expected):
    """bfloat16 (which NumPy only knows through ml_dtypes) to its precision; other dtypes as assert_matches."""
    if expected.dtype == ml_dtypes.bfloat16:
        assert actual.dtype == expected.dtype
        np.testing.assert_allclose(actual.get().astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=1e-2)
    else:
        assert_matches(actual, expected)


@pytest.mark.parametrize("dtype", VECTOR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_broadcast_rows_at_every_alignment(dtype, rng):
    """A column plus rows: on the GPU, up to 16 bytes of neighbouring elements per load and store where the
    row's address and width allow, fewer where not (rows that start 0, 1, 2, 4 or 8 elements in); into a
    new array and into a view of a wider one, whose margins stay as they were."""
    col, row = values(rng, dtype, (33, 1)), values(rng, dtype, (1, 104))
    jc, jr = jiasu.asarray(col), jiasu.asarray(row)
    for k in (0, 1, 2, 4, 8):
        expect_close(jc + jr[:, k:k + 96], col + row[:, k:k + 96])
    big = values(rng, dtype, (33, 120))
    jbig = jiasu.asarray(big)
    jiasu.add(jc, jr[:, :96], out=jbig[:, 8:104])
    big[:, 8:104] = col + row[:, :96]
    expect_close(jbig, big)


def test_broadcasts_in_more_dimensions_in_place_and_fills(rng):
    a, b = values(rng, np.int8, (4, 1, 64)), values(rng, np.int8, (5, 64))
    expect_close(jiasu.asarray(a) + jiasu.asarray(b), a + b)
    c, d = values(rng, np.float32, (2, 3, 1, 8)), values(rng, np.float32, (3, 5, 8))
    expect_close(jiasu.asarray(c) * jiasu.asarray(d), c * d)
    e, f = values(rng, np.float32, (3, 1000)), values(rng, np.float32, (3, 1))
    expect_close(jiasu.asarray(e) - jiasu.asarray(f), e - f)  # 750 positions of 4: a block partly used
    x, row = values(rng, np.float32, (512, 256)), values(rng, np.float32, (256,))
    jx, jrow = jiasu.asarray(x), jiasu.asarray(row)
    jx += jrow
    x += row
    jx[:, 4:132] *= jrow[4:132]
    x[:, 4:132] *= row[4:132]
    jx[:, 1:] += jx[:, :-1]  # overlapping: the values from before, as NumPy
    x[:, 1:] += x[:, :-1]
    expect_close(jx, x)
    for dtype, value in ((np.int8, 5), (np.float16, 1.5)):
        z, expected = jiasu.zeros((16, 12), dtype), np.zeros((16, 12), dtype)
        z[:, 4:12] = value
        expected[:, 4:12] = value
        expect_close(z, expected)
    condition, y = rng.random((64, 1)) < 0.5, values(rng, np.float32, (64, 128))
    expect_close(jiasu.where(jiasu.asarray(condition), jiasu.asarray(y), 0.5), np.where(condition, y, 0.5))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
                                   np.complex128], ids=lambda d: np.dtype(d).name)
def test_transposed_operands(dtype, rng):
    """a.T + b and the like: on the GPU a transposed operand is read through shared memory tile by tile (32 x 32).
    Partial tiles on both edges; outer dimensions, the operand broadcast over them; two transposed operands;
    one beside a strided view, a column, a scalar; negative strides in the operand and in the output; strided
    outputs; a float16 operand converted on the way in; a transposing copy and an in-place update; shapes on
    both sides of the half-tile threshold below which the strided kernel runs instead."""
    a, b = values(rng, dtype, (70, 45)), values(rng, dtype, (45, 70))
    ja, jb = jiasu.asarray(a), jiasu.asarray(b)
    expect_close(ja.T + jb, a.T + b)
    expect_close(ja.T * ja.T, a.T * a.T)
    expect_close(jiasu.ascontiguousarray(ja.T), np.ascontiguousarray(a.T))
    expect_close(jb.T * 2, b.T * 2)
    expect_close(ja.T[:, ::-1] + jb, a.T[:, ::-1] + b)
    wide, column = values(rng, dtype, (45, 140)), values(rng, dtype, (45, 1))
    expect_close(ja.T + jiasu.asarray(wide)[:, ::2], a.T + wide[:, ::2])
    expect_close(ja.T * jiasu.asarray(column), a.T * column)
    condition = rng.random((45, 70)) < 0.5
    expect_close(jiasu.where(jiasu.asarray(condition), ja.T, jb), np.where(condition, a.T, b))
    expect_close(jiasu.where(jiasu.asarray(condition.T.copy()).T, ja.T, ja.T[::-1]),
                 np.where(condition, a.T, a.T[::-1]))  # two transposed operands, a reversed one
    out = jiasu.empty((70, 45), dtype)
    jiasu.add(jb.T, ja, out=out)
    expect_close(out, b.T + a)
    big = values(rng, dtype, (90, 80))
    jbig = jiasu.asarray(big)
    jiasu.add(jb.T, ja, out=jbig[80:10:-1, 5:50])  # a negative row stride
    jiasu.multiply(ja.T, jb, out=jbig[1::2, 8:78])  # a row pitch of two rows
    big[80:10:-1, 5:50] = b.T + a
    big[1::2, 8:78] = a.T * b
    expect_close(jbig, big)
    c, d = values(rng, dtype, (3, 33, 40)), values(rng, dtype, (3, 40, 33))
    expect_close(jiasu.asarray(c).transpose(0, 2, 1) + jiasu.asarray(d), c.transpose(0, 2, 1) + d)
    expect_close(jiasu.asarray(c[0]).T + jiasu.asarray(d), c[0].T + d)  # broadcast over the outer dimension
    e, h = values(rng, dtype, (33, 3, 40)), values(rng, np.float16, (3, 40, 33))
    expect_close(jiasu.asarray(e).transpose(1, 2, 0) * jiasu.asarray(h), e.transpose(1, 2, 0) * h)
    expect_close(ja.T.astype(np.complex64), a.T.astype(np.complex64))
    for rows in (15, 16, 17):
        f, g = values(rng, dtype, (40, rows)), values(rng, dtype, (rows, 40))
        expect_close(jiasu.asarray(f).T - jiasu.asarray(g) if dtype != np.bool_ else jiasu.asarray(f).T ^ jiasu.asarray(g),
                     f.T - g if dtype != np.bool_ else f.T ^ g)
    jb += ja.T
    b += a.T
    expect_close(jb, b)


def test_out(rng):
    a = sample(rng, np.int8)
    b = sample(rng, np.int8)
    out = jiasu.empty(a.shape, np.float32)
    result = jiasu.add(jiasu.asarray(a), jiasu.asarray(b), out=out)
    assert result is out
    np.testing.assert_array_equal(out.get(), (a + b).astype(np.float32))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('int8'\\) to dtype\\('uint8'\\)"):
        jiasu.add(jiasu.asarray(a), jiasu.asarray(b), out=jiasu.empty(a.shape, np.uint8))
    with pytest.raises(ValueError, match="non-broadcastable output operand with shape \\(3,\\)"):
        jiasu.add(jiasu.asarray(a), jiasu.asarray(b), out=jiasu.empty((3,), np.int8))
    column = jiasu.empty((2, 3), np.float64)
    jiasu.sqrt(jiasu.asarray(np.array([1.0, 4.0, 9.0])), out=column[0])
    np.testing.assert_array_equal(column[0].get(), [1, 2, 3])


def test_in_place(rng):
    a = rng.standard_normal((3, 4))
    row = rng.standard_normal(4)
    j = jiasu.asarray(a)
    alias = j
    j += jiasu.asarray(row)
    j *= 2
    j -= 1
    assert j is alias
    np.testing.assert_allclose(j.get(), (a + row) * 2 - 1)
    ints = jiasu.asarray(np.arange(5, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        ints += 1.5
    ints[1:] += ints[:-1]  # overlapping: reads the values from before, as NumPy
    np.testing.assert_array_equal(ints.get(), [0, 1, 3, 5, 7])
    ints <<= 1
    ints //= 3
    np.testing.assert_array_equal(ints.get(), (np.array([0, 1, 3, 5, 7]) << 1) // 3)


def test_operators_match_numpy(rng):
    a = sample(rng, np.int32, positive=True) + 1
    b = sample(rng, np.int32, positive=True) + 1
    j, k = jiasu.asarray(a), jiasu.asarray(b)
    pairs = [(j + k, a + b), (j - k, a - b), (j * k, a * b), (j / k, a / b), (j // k, a // b), (j % k, a % b),
             (j ** 2, a ** 2), (2 ** (k % 5), 2 ** (b % 5)), (j & k, a & b), (j | k, a | b), (j ^ k, a ^ b),
             (j << 2, a << 2), (j >> 1, a >> 1), (-j, -a), (+j, +a), (abs(-j), abs(-a)), (~j, ~a),
             (j == k, a == b), (j != k, a != b), (j < k, a < b), (j <= k, a <= b), (j > k, a > b), (j >= k, a >= b),
             (1 - j, 1 - a), (3.5 / j, 3.5 / a), (7 // j, 7 // a), (10 % j, 10 % a)]
    for actual, expected in pairs:
        assert_matches(actual, expected)
    assert (j == None) is False  # noqa: E711  (not an operand: Python's identity comparison)


def test_unsupported_types_are_type_errors():
    b = jiasu.asarray(np.array([True, False]))
    with pytest.raises(TypeError, match="subtract"):
        b - b
    with pytest.raises(TypeError, match="negative"):
        -b
    with pytest.raises(TypeError, match="left_shift.*float32"):
        jiasu.asarray(np.ones(2, np.float32)) << 1
    with pytest.raises(TypeError, match="sqrt.*complex64"):
        jiasu.sqrt(jiasu.asarray(np.ones(2, np.complex64)))
    with pytest.raises(TypeError, match="divide.*complex"):
        jiasu.asarray(np.ones(2)) / 1j
    with pytest.raises(TypeError, match="numpy.ndarray"):
        jiasu.add(jiasu.asarray(np.ones(2)), np.ones(2))
    with pytest.raises(TypeError):
        jiasu.add(jiasu.asarray(np.ones(2)), "x")


def test_astype_copy_and_assignment(rng):
    a = rng.standard_normal((5, 6)) * 10
    j = jiasu.asarray(a)
    view = j[::-1, ::2]
    for dtype in (np.int8, np.int64, np.uint16, np.float16, np.float32, np.bool_):
        converted = view.astype(dtype)
        assert converted.dtype == dtype and converted.is_c_contiguous
        expected = np.abs(a[::-1, ::2]).astype(dtype) if np.dtype(dtype).kind == "u" else a[::-1, ::2].astype(dtype)
        source = jiasu.asarray(np.abs(a))[::-1, ::2] if np.dtype(dtype).kind == "u" else view
        np.testing.assert_array_equal(source.astype(dtype).get(), expected)
    copied = view.copy()
    assert copied.is_c_contiguous
    np.testing.assert_array_equal(copied.get(), a[::-1, ::2])
    target = jiasu.zeros((3, 4), np.int32)
    target[...] = jiasu.asarray(np.array([1.7, -2.2, 3.0, 4.9]))  # broadcast and converted, as NumPy
    np.testing.assert_array_equal(target.get(), np.broadcast_to(np.array([1, -2, 3, 4], np.int32), (3, 4)))
    target[1, ::2] = 9
    target[:, 3] = jiasu.asarray(np.array([5, 6, 7], np.int64))
    expected = np.broadcast_to(np.array([1, -2, 3, 4], np.int32), (3, 4)).copy()
    expected[1, ::2] = 9
    expected[:, 3] = [5, 6, 7]
    np.testing.assert_array_equal(target.get(), expected)
    with pytest.raises(ValueError, match="could not broadcast input array from shape \\(2,\\) into shape \\(3,4\\)"):
        target[...] = jiasu.asarray(np.ones(2))


def test_zero_d_and_empty():
    zero_d = jiasu.asarray(np.array(2.5))
    assert (zero_d * 2).shape == ()
    assert (zero_d * 2).get() == 5.0
    empty = jiasu.asarray(np.ones((0, 4), np.float32))
    assert (empty + 1).shape == (0, 4)
    assert jiasu.sqrt(empty).dtype == np.float32
    assert jiasu.add(2, 3).get() == 5 and jiasu.add(2, 3).dtype == np.int64


def test_asarray_converts_on_the_device(rng):
    a = rng.standard_normal(9)
    j = jiasu.asarray(a)
    converted = jiasu.asarray(j, dtype=np.float32)
    assert converted.dtype == np.float32 and converted.device == j.device
    np.testing.assert_array_equal(converted.get(), a.astype(np.float32))
    np.testing.assert_array_equal(jiasu.asarray(j[::2], dtype=np.int16).get(), a[::2].astype(np.int16))
    np.testing.assert_array_equal(jiasu.asarray(j, dtype=np.complex64).get(), a.astype(np.complex64))


COMPLEX = [np.complex64, np.complex128]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply"])
def test_complex_arithmetic(name, rng, each_backend):
    others = COMPLEX + ([np.bool_, np.int16, np.int32, np.float16, np.float32, np.float64] if each_backend == "cpu" else [])
    for a_type in COMPLEX:
        for b_type in others:
            a = (rng.standard_normal(11) + 1j * rng.standard_normal(11)).astype(a_type)
            b = sample(rng, b_type) if np.dtype(b_type).kind != "c" else (rng.standard_normal(11) - 2j).astype(b_type)
            b = b[:11] if b.shape[0] >= 11 else b
            check(name, a, b[:11] if b.size >= 11 else b)
            check(name, b[:11] if b.size >= 11 else b, a)
        check(name, a, 2 - 1.5j)  # a Python complex keeps complex64 complex64
        check(name, np.float32(1.5) * np.ones(11, np.float32), 1j)  # float32 with a Python complex: complex64
    check("negative", a)


def test_complex_copies_and_conversions(rng):
    a = (rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))).astype(np.complex64)
    j = jiasu.asarray(a)
    np.testing.assert_array_equal(j[::-1, ::2].copy().get(), a[::-1, ::2])
    np.testing.assert_array_equal(j[::-1].astype(np.complex128).get(), a[::-1].astype(np.complex128))
    np.testing.assert_array_equal(jiasu.asarray(np.arange(5.0)).astype(np.complex64).get(), np.arange(5.0) + 0j)
    target = jiasu.zeros((3, 6), np.complex128)
    target[1] = j[0]
    target[2, ::3] = 1 - 2j
    expected = np.zeros((3, 6), np.complex128)
    expected[1] = a[0]
    expected[2, ::3] = 1 - 2j
    np.testing.assert_array_equal(target.get(), expected)
