"""Reductions of jiasu arrays against NumPy (float64 references for float results), on the CPU backend
everywhere and on CUDA where a GPU is present: every operation, every dtype, axis forms, keepdims, dtype=,
0-size and 0-d arrays, non-contiguous and negative-stride views, and the errors."""
import ml_dtypes
import numpy as np
import pytest

import jiasu

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", BF16, "float32", "float64"]
DTYPES = ["bool"] + INTS + FLOATS


pytestmark = pytest.mark.usefixtures("each_backend")


def is_float(dtype):
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


def sample(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -20
        return rng.integers(low, 20, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def tolerance(dtype, count):
    dtype = np.dtype(dtype)
    eps = {2: 2.0**-8 if dtype == BF16 else 2.0**-11, 4: 2.0**-24, 8: 2.0**-53}[dtype.itemsize]
    return eps * (8 + 2 * np.sqrt(max(count, 1)))


def reference(op, x, **kw):
    """NumPy's answer: its result type, and for floats its value computed in float64. bfloat16 (which NumPy
    only knows through ml_dtypes) follows float16's rules: computed from float32, of its own type."""
    if x.dtype == BF16 and "dtype" not in kw:
        value, dtype = reference(op, x.astype(np.float32), **kw)
        return value, (BF16 if dtype == np.float32 else dtype)
    expected = getattr(np, op)(x, **kw)
    if np.asarray(expected).dtype.kind == "f" and op not in ("max", "min"):
        wide = x.astype(np.float64) if x.dtype.kind == "f" else x
        kw64 = dict(kw)
        if "dtype" in kw64 and np.dtype(kw64["dtype"]).kind == "f":
            kw64["dtype"] = np.float64
        value = getattr(np, op)(wide, **kw64)
        return np.asarray(value), np.asarray(expected).dtype
    return np.asarray(expected), np.asarray(expected).dtype


def check(op, x, got, **kw):
    expected, dtype = reference(op, x, **kw)
    got = np.asarray(got.get())
    assert got.dtype == dtype, (op, got.dtype, dtype)
    assert got.shape == expected.shape, (op, got.shape, expected.shape)
    if is_float(dtype):
        count = max(x.size // max(expected.size, 1), 1)
        finite = np.abs(x.astype(np.float64)[np.isfinite(x.astype(np.float64))])
        scale = np.max(finite) * count if finite.size else 1.0
        if op in ("var", "std"):
            scale = scale * scale / count if op == "var" else scale / np.sqrt(count)
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=tolerance(dtype, count), atol=tolerance(dtype, count) * max(scale, 1e-30),
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


SUM_LIKE = ["sum", "prod", "mean", "var", "std"]
NO_DTYPE = ["max", "min", "argmax", "argmin", "any", "all"]
AXES = [None, 0, 1, -1, (0, 2), (1, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", SUM_LIKE + NO_DTYPE)
def test_every_op_and_dtype_over_every_axis_form(op, dtype, rng):
    x = sample(rng, (5, 6, 7), dtype)
    if op == "prod" and np.dtype(dtype).kind in "iu":
        x = (x % 3).astype(dtype)  # small products: NumPy's wrapping and ours agree anyway, but stay readable
    a = jiasu.asarray(x)
    for axis in AXES:
        if op in ("argmax", "argmin") and isinstance(axis, tuple):
            continue
        for keepdims in (False, True):
            kw = dict(axis=axis, keepdims=keepdims)
            check(op, x, getattr(jiasu, op)(a, **kw), **kw)
            check(op, x, getattr(a, op)(**kw), **kw)


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "mean", "var", "any"])
@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "float16"])
def test_views_negative_strides_and_transposes(op, dtype, rng):
    base = sample(rng, (9, 12, 10), dtype)
    views = [base[::2, 1::3, ::-1], base[::-1, :, 3], base[:, ::-2]]
    a = jiasu.asarray(base)
    jviews = [a[::2, 1::3, ::-1], a[::-1, :, 3], a[:, ::-2]]
    for x, view in zip(views, jviews):
        assert not view.is_c_contiguous
        for axis in (None, 0, -1, 1):
            check(op, x, getattr(jiasu, op)(view, axis=axis), axis=axis)


@pytest.mark.parametrize("n", [1, 7, 128, 1000, 4099, 70001, 1 << 20])
def test_long_float_sums_match_numpy(n, rng):
    x = rng.standard_normal(n).astype(np.float32) + 1
    check("sum", x, jiasu.sum(jiasu.asarray(x)))
    check("mean", x, jiasu.mean(jiasu.asarray(x)))
    y = x.reshape(1, n)
    check("sum", y, jiasu.sum(jiasu.asarray(y), axis=1), axis=1)
    z = np.ascontiguousarray(np.tile(x[: min(n, 4096)], (3, 1)).T)
    check("sum", z, jiasu.sum(jiasu.asarray(z), axis=0), axis=0)


@pytest.mark.parametrize("shape,axis", [((1000, 300), 0), ((1000, 300), 1), ((3, 200000), 1), ((200000, 3), 0)])
@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin", "var", "all"])
def test_large_rows_and_columns(shape, axis, op, rng):
    x = sample(rng, shape, "float32")
    check(op, x, getattr(jiasu, op)(jiasu.asarray(x), axis=axis), axis=axis)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", BF16, "float32", "float64"], ids=str)
@pytest.mark.parametrize("op", ["sum", "max", "argmin", "var"])
def test_column_reductions_at_every_alignment(op, dtype, rng):
    """axis=0 reads several neighbouring columns in one load where the alignment of the data, of its rows and
    of its width allows: whole rows, rows that start an element or two in, narrower widths, every other row;
    with enough rows to be split between blocks."""
    x = sample(rng, (3000, 168), dtype)
    a = jiasu.asarray(x)
    for index in (np.s_[:, :], np.s_[:, :160], np.s_[:, 1:129], np.s_[:, 2:], np.s_[::2, :144], np.s_[:, 4:44]):
        check(op, x[index], getattr(jiasu, op)(a[index], axis=0), axis=0)


@pytest.mark.parametrize("op", ["sum", "any", "all"])
def test_boolean_column_reductions(op, rng):
    x = sample(rng, (3000, 168), "bool")
    x[:, :40] = True  # columns where all() holds
    a = jiasu.asarray(x)
    for index in (np.s_[:, :], np.s_[:, 3:131], np.s_[::3, 16:]):
        check(op, x[index], getattr(jiasu, op)(a[index], axis=0), axis=0)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "var", "argmax"])
def test_column_reductions_with_several_kept_dimensions(op, dtype, rng):
    x = sample(rng, (5, 700, 48), dtype)
    a = jiasu.asarray(x)
    for index in (np.s_[...], np.s_[:, :, 8:40], np.s_[::-1, :, 16:]):
        check(op, x[index], getattr(jiasu, op)(a[index], axis=1), axis=1)


@pytest.mark.parametrize("op", ["sum", "argmin"])
def test_column_tiles_with_a_partial_last_one(op, rng):
    x = sample(rng, (2000, 1000), "int8")
    check(op, x, getattr(jiasu, op)(jiasu.asarray(x), axis=0), axis=0)


def test_column_statistics_into_strided_out_and_keepdims(rng):
    x = sample(rng, (3000, 64), "float32")
    out = jiasu.zeros(128, dtype=np.float32)[::2]
    jiasu.var(jiasu.asarray(x), axis=0, out=out)
    np.testing.assert_allclose(out.get(), x.astype(np.float64).var(axis=0), rtol=1e-4)
    y = sample(rng, (3000, 168), "float32")
    check("std", y, jiasu.std(jiasu.asarray(y), axis=0, keepdims=True), axis=0, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_extremes_find_the_first_occurrence(op, dtype, rng):
    """Long runs (split between threads on the CPU backend): the first of repeated extremes, the first NaN,
    -0.0 beside 0.0 (equal, as for NumPy), and runs over several dimensions."""
    x = rng.standard_normal(300007).astype(dtype)
    extreme = x.max() + 1 if op == "argmax" else x.min() - 1
    x[[70001, 70002, 250000]] = extreme
    with_nan = x.copy()
    with_nan[[123456, 200000]] = np.nan
    signed_zeros = np.full(1000, -1.0 if op == "argmax" else 1.0, dtype)
    signed_zeros[[500, 700]] = [-0.0, 0.0] if op == "argmax" else [0.0, -0.0]
    for case in (x, x[:70001], x[70002:], with_nan, signed_zeros):
        check(op, case, getattr(jiasu, op)(jiasu.asarray(case)))
    grid = rng.standard_normal((3, 50, 2000)).astype(dtype)
    grid[1, 7, 1499] = grid[2, 0, 3] = extreme
    a = jiasu.asarray(grid)
    for index in (np.s_[...], np.s_[:, :, :1500]):
        check(op, grid[index], getattr(jiasu, op)(a[index]))
        check(op, grid[index], getattr(jiasu, op)(a[index], axis=2), axis=2)


@pytest.mark.parametrize("in_dtype,dtype", [("int8", "int8"), ("int32", "float32"), ("float64", "float32"),
                                             ("uint8", "int16"), ("bool", "int32"), ("float16", "float64"),
                                             ("float32", "float64"), ("int64", "uint64")])
@pytest.mark.parametrize("op", ["sum", "prod"])
def test_dtype_argument(op, in_dtype, dtype, rng):
    x = sample(rng, (4, 50), in_dtype)
    if op == "prod" and np.dtype(in_dtype).kind in "iu":
        x = (x % 2).astype(in_dtype)  # products a float32 holds, so that float64 is a fair reference
    a = jiasu.asarray(x)
    for axis in (None, 1):
        check(op, x, getattr(jiasu, op)(a, axis=axis, dtype=dtype), axis=axis, dtype=dtype)


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.parametrize("op", ["mean", "var", "std"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_statistics_dtype_and_ddof(op, dtype, rng):
    x = sample(rng, (6, 40), "int32")
    a = jiasu.asarray(x)
    check(op, x, getattr(jiasu, op)(a, axis=1, dtype=dtype), axis=1, dtype=dtype)
    if op != "mean":
        for ddof in (0, 1, 40, 41):
            with np.errstate(all="ignore"):
                check(op, x, getattr(jiasu, op)(a, axis=1, ddof=ddof), axis=1, ddof=ddof)


def test_wrapping_integer_sums_and_extremes():
    x = np.array([2**62, 2**62, 2**62, 7], dtype=np.int64)
    assert jiasu.sum(jiasu.asarray(x)).get() == np.sum(x)
    u = np.array([2**64 - 1, 5], dtype=np.uint64)
    assert jiasu.sum(jiasu.asarray(u)).get() == np.sum(u)
    assert jiasu.max(jiasu.asarray(u)).get() == 2**64 - 1
    i8 = np.array([-128, 127, -1], dtype=np.int8)
    assert jiasu.min(jiasu.asarray(i8)).get() == -128
    assert jiasu.sum(jiasu.asarray(i8), dtype="int8").get() == np.sum(i8, dtype=np.int8)


def test_nan_rules(rng):
    x = rng.standard_normal((4, 9)).astype(np.float32)
    x[1, 3] = np.nan
    x[1, 6] = np.nan
    x[2, 0] = np.inf
    a = jiasu.asarray(x)
    for op in ("max", "min", "argmax", "argmin", "sum", "any", "all"):
        for axis in (None, 0, 1):
            with np.errstate(all="ignore"):
                check(op, x, getattr(jiasu, op)(a, axis=axis), axis=axis)
    ties = np.array([1, 3, 3, -2, -2, 0], dtype=np.int32)
    assert jiasu.argmax(jiasu.asarray(ties)).get() == 1
    assert jiasu.argmin(jiasu.asarray(ties)).get() == 3
    neg_inf = np.full(5, -np.inf, dtype=np.float64)
    assert jiasu.argmax(jiasu.asarray(neg_inf)).get() == 0


@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")
def test_zero_size_and_zero_d():
    empty = np.zeros((0, 4), dtype=np.float32)
    a = jiasu.asarray(empty)
    for op in ("sum", "prod", "any", "all"):
        for axis in (None, 0, 1):
            check(op, empty, getattr(jiasu, op)(a, axis=axis), axis=axis)
    with np.errstate(all="ignore"):
        check("mean", empty, jiasu.mean(a, axis=0), axis=0)
    check("max", empty, jiasu.max(a, axis=1), axis=1)  # no element is reduced: an empty result
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        jiasu.max(a)
    with pytest.raises(ValueError, match="minimum"):
        jiasu.min(a, axis=0)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jiasu.argmax(a, axis=0)
    scalar = np.array(2.5, dtype=np.float64)
    s = jiasu.asarray(scalar)
    for op in SUM_LIKE + NO_DTYPE:
        check(op, scalar, getattr(jiasu, op)(s), axis=None)
        check(op, scalar, getattr(jiasu, op)(s, keepdims=True), keepdims=True)
    with pytest.raises(np.exceptions.AxisError):
        jiasu.sum(s, axis=0)


def test_axis_errors(rng):
    a = jiasu.asarray(sample(rng, (3, 4), "float32"))
    for axis in (2, -3, (0, 5)):
        with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension 2"):
            jiasu.sum(a, axis=axis)
    with pytest.raises(IndexError):
        a.max(axis=9)  # AxisError is an IndexError too, as in NumPy
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jiasu.sum(a, axis=(1, -1))
    with pytest.raises(TypeError):
        jiasu.argmax(a, axis=(0, 1))
    with pytest.raises(TypeError):
        jiasu.sum(a, axis=1.5)


def test_type_errors_name_op_and_dtype(rng):
    c = jiasu.asarray(np.ones(4, dtype=np.complex64))
    with pytest.raises(TypeError, match="jiasu.sum does not support dtype complex64"):
        jiasu.sum(c)
    with pytest.raises(TypeError, match="jiasu.argmax does not support dtype complex64"):
        c.argmax()
    a = jiasu.asarray(np.ones(4, dtype=np.float32))
    with pytest.raises(TypeError, match="complex"):
        jiasu.sum(a, dtype=np.complex64)
    with pytest.raises(TypeError, match="jiasu.mean does not support the non-float result dtype int32"):
        jiasu.mean(a, dtype=np.int32)
    with pytest.raises(TypeError, match="jiasu.sum takes a jiasu.Array"):
        jiasu.sum(np.ones(3))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_initial(op, dtype, rng):
    x = sample(rng, (6, 7), dtype)
    if op == "prod" and np.dtype(dtype).kind in "iu":
        x = (x % 3).astype(dtype)
    a = jiasu.asarray(x)
    for initial in (3, 2.5, np.int16(4), True):
        for axis in (None, 0, (0, 1)):
            kw = dict(axis=axis, initial=initial)
            check(op, x, getattr(jiasu, op)(a, **kw), **kw)
            check(op, x, getattr(a, op)(**kw), **kw)
            check(op, x, getattr(jiasu, op)(a, keepdims=True, **kw), keepdims=True, **kw)


def test_initial_of_empty_reductions_nan_and_errors(rng):
    empty = np.zeros((0, 3), np.float32)
    e = jiasu.asarray(empty)
    for op in ("max", "min", "sum", "prod"):
        check(op, empty, getattr(jiasu, op)(e, axis=0, initial=-1.5), axis=0, initial=-1.5)
        check(op, empty, getattr(jiasu, op)(e, initial=7), initial=7)
    with_nan = np.array([np.nan, 1.0, 2.0])
    check("max", with_nan, jiasu.max(jiasu.asarray(with_nan), initial=5.0), initial=5.0)
    small = jiasu.asarray(np.array([1, 2], np.int8))
    with pytest.raises(OverflowError, match="1000"):
        jiasu.max(small, initial=1000)  # as NumPy: out of int8's range
    assert jiasu.sum(small, initial=2**40).get() == 2**40 + 3  # the sum is int64
    with pytest.raises(TypeError, match="initial must be a Python or NumPy number"):
        jiasu.sum(small, initial=small)
    with pytest.raises(TypeError, match="initial"):
        small.mean(initial=1)
    with pytest.raises(TypeError, match="jiasu.mean takes no initial="):
        jiasu._core._reduce("mean", small, None, None, None, False, None, 1)
    np.testing.assert_array_equal(np.add.reduce(jiasu.asarray(np.arange(4.0)), initial=10).get(), 16.0)


def test_out_argument(rng):
    x = sample(rng, (5, 8), "float32")
    a = jiasu.asarray(x)
    out = jiasu.zeros(8, dtype=np.float32)
    result = jiasu.sum(a, axis=0, out=out)
    np.testing.assert_allclose(out.get(), x.sum(axis=0), rtol=1e-5)
    assert result.ptr == out.ptr
    strided = jiasu.zeros(16, dtype=np.float32)[::2]
    jiasu.max(a, axis=0, out=strided)
    np.testing.assert_array_equal(strided.get(), x.max(axis=0))
    with pytest.raises(ValueError, match="shape"):
        jiasu.sum(a, axis=1, out=out)
    with pytest.raises(TypeError, match="dtype"):
        jiasu.sum(a, axis=0, out=jiasu.zeros(8, dtype=np.float64))


def test_results_stay_on_the_device(each_backend, rng):
    a = jiasu.asarray(sample(rng, (3, 4), "float32"))
    r = jiasu.sum(a)
    assert isinstance(r, jiasu.Array) and r.shape == ()
    assert r.device == a.device


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint16", "float16", "float32", "float64"], ids=str)
def test_cumsum(dtype, rng):
    x = sample(rng, (4, 5, 6), dtype)
    a = jiasu.asarray(x)
    for axis in (None, 0, 1, -1):
        expected = np.cumsum(x, axis=axis)
        got = jiasu.cumsum(a, axis=axis).get()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if is_float(expected.dtype):
            ref = np.cumsum(x.astype(np.float64), axis=axis)
            np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tolerance(dtype, 120), atol=tolerance(dtype, 120) * 100)
        else:
            np.testing.assert_array_equal(got, expected)
    view = a[::-1, ::2]
    np.testing.assert_allclose(view.cumsum().get().astype(np.float64),
                               np.cumsum(x[::-1, ::2].astype(np.float64)), rtol=1e-2, atol=1e-1)
    np.testing.assert_array_equal(jiasu.cumsum(a, axis=1, dtype="float64").get(), np.cumsum(x, axis=1, dtype=np.float64))
    with pytest.raises(np.exceptions.AxisError):
        jiasu.cumsum(a, axis=3)
