"""@jiasu.vectorize and @jiasu.reduce against NumPy: result dtypes (the front end's NumPy rules, NEP 50 scalars),
values against float64 references, broadcasting, 0-d and empty shapes, strided and negative-stride views, out=,
calls large enough to release the GIL, the in-order reduction over each axis form with init and keepdims, its
result type, and the errors. Runs on the
CPU backend everywhere and on CUDA where a GPU is present."""
import math

import ml_dtypes
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.usefixtures("each_backend")


@jiasu.vectorize
def fused(x, y):
    return x * 2.0 + y


@jiasu.vectorize
def soft_clip(x, limit):
    return x if abs(x) < limit else math.copysign(limit, x)


@jiasu.func
def square(v):
    return v * v


@jiasu.vectorize
def distance(x, y, z):
    return math.sqrt(square(x) + square(y) + square(z))


@jiasu.vectorize
def is_big(x):
    return x > 10


@jiasu.reduce
def add(a, b):
    return a + b


@jiasu.reduce
def first_nonzero(a, b):  # associative, not commutative: only an in-order fold gets it right
    return a if a != 0 else b


@jiasu.reduce
def larger(a, b):
    return max(a, b)


SCALE = 0.5


@jiasu.vectorize
def scaled_root(x):
    return math.sqrt(x) * SCALE  # a module global: the front end asks Python what SCALE is


@jiasu.reduce
def scaled_sum(a, b):
    return (a + b) * (SCALE * 2)


@jiasu.reduce
def average(a, b):
    return (a + b) / 2  # int32 in, float64 out: the fold runs in float64 whatever the length


def close(actual, expected, rtol):
    assert isinstance(actual, jiasu.Array)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.get().astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.int32,
                                   np.uint16, np.int64], ids=lambda d: np.dtype(d).name)
def test_fused_multiply_add_takes_numpys_types(dtype, rng):
    x = (rng.standard_normal(1001) * 20).astype(dtype)
    y = (rng.standard_normal(1001) * 20).astype(dtype)
    result_type = np.result_type(x.dtype, 2.0) if np.dtype(dtype) != ml_dtypes.bfloat16 else np.dtype(dtype)
    expected = (x.astype(np.float64) * 2.0 + y.astype(np.float64)).astype(result_type)
    rtol = {2: 1e-2, 4: 1e-6}.get(np.dtype(result_type).itemsize, 1e-13)
    close(fused(jiasu.asarray(x), jiasu.asarray(y)), expected, rtol)


def test_python_scalars_are_weak_and_numpy_scalars_strong(rng):
    x = rng.standard_normal(64).astype(np.float32)
    j = jiasu.asarray(x)
    assert fused(j, 1.5).dtype == np.float32
    close(fused(j, 1.5), x * np.float32(2) + np.float32(1.5), 1e-6)
    close(fused(1.5, j), np.float32(3.0) + x, 1e-6)
    assert fused(j, np.float64(1.5)).dtype == np.float64
    ints = jiasu.asarray(np.arange(10, dtype=np.int16))
    assert fused(ints, 3).dtype == np.float64  # int16 * 2.0: float64, as NumPy
    assert is_big(ints).dtype == np.bool_
    np.testing.assert_array_equal(is_big(jiasu.asarray(np.arange(20))).get(), np.arange(20) > 10)


def test_broadcasting_views_and_zero_sizes(rng):
    a = rng.standard_normal((6, 1, 5))
    b = rng.standard_normal((4, 1))
    close(fused(jiasu.asarray(a), jiasu.asarray(b)), a * 2 + b, 1e-13)
    m = rng.standard_normal((8, 9))
    jm = jiasu.asarray(m)
    close(fused(jm.T, jm[::-1, ::-1].T), m.T * 2 + m[::-1, ::-1].T, 1e-13)
    close(fused(jm[::2, 1::3], 0.5), m[::2, 1::3] * 2 + 0.5, 1e-13)
    close(fused(jiasu.asarray(np.float64(3.0)), jiasu.asarray(np.float64(1.0))), np.array(7.0), 1e-13)
    empty = fused(jiasu.zeros((0, 3)), jiasu.zeros((1, 3)))
    assert empty.shape == (0, 3) and empty.dtype == np.float64


def test_three_arguments_calling_a_device_function(rng):
    x, y, z = (rng.standard_normal((3, 50)) for _ in range(3))
    close(distance(jiasu.asarray(x), jiasu.asarray(y), jiasu.asarray(z)), np.sqrt(x * x + y * y + z * z), 1e-13)
    v = rng.standard_normal(300) * 3
    close(soft_clip(jiasu.asarray(v), 2.0), np.clip(v, -2.0, 2.0), 1e-13)


def test_out_casts_same_kind_and_is_returned(rng):
    x = rng.standard_normal(40).astype(np.float32)
    out = jiasu.empty(40, np.float64)
    assert fused(jiasu.asarray(x), jiasu.asarray(x), out=out) is out
    np.testing.assert_allclose(out.get(), (x * np.float32(2) + x).astype(np.float64), rtol=1e-6)
    big = jiasu.zeros((40, 2), np.float32)
    fused(jiasu.asarray(x), 1.0, out=big[:, 1])  # a strided out
    np.testing.assert_allclose(big.get()[:, 1], x * 2 + 1, rtol=1e-6)
    assert not big.get()[:, 0].any()
    with pytest.raises(TypeError, match="same_kind"):
        fused(jiasu.asarray(x), 1.0, out=jiasu.empty(40, np.int32))
    with pytest.raises(ValueError):
        fused(jiasu.asarray(x), 1.0, out=jiasu.empty(41, np.float32))


def test_in_place_through_out(rng):
    x = rng.standard_normal(1000)
    j = jiasu.asarray(x)
    fused(j, j[::-1], out=j)  # out overlaps a reversed input: computed as if into a new array
    np.testing.assert_allclose(j.get(), x * 2 + x[::-1], rtol=1e-13)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (2, 0, 1), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_over_each_axis_form(axis, keepdims, rng):
    x = rng.integers(-3, 4, (5, 6, 7)).astype(np.int64)
    x[rng.random(x.shape) < 0.6] = 0
    j = jiasu.asarray(x)
    expected = np.sum(x, axis=axis, keepdims=keepdims)
    got = add(j, axis=axis, keepdims=keepdims)
    assert got.shape == expected.shape and got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), expected)
    np.testing.assert_array_equal(larger(j, axis=axis, keepdims=keepdims).get(),
                                  np.max(x, axis=axis, keepdims=keepdims))
    # The first nonzero along the reduced axes, in C order of those axes.
    axes = tuple(range(3)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = tuple(a % 3 for a in axes)
    kept = tuple(d for d in range(3) if d not in axes)
    lines = np.transpose(x, kept + tuple(sorted(axes))).reshape([x.shape[d] for d in kept] + [-1])
    firsts = np.array([next((v for v in line if v != 0), 0) for line in lines.reshape(-1, lines.shape[-1])],
                      np.int64).reshape(lines.shape[:-1])
    result = first_nonzero(j, axis=axis)
    np.testing.assert_array_equal(result.get(), firsts)


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 4097])
def test_float_sums_of_many_sizes_and_init(n, rng):
    x = rng.standard_normal(n)
    j = jiasu.asarray(x)
    np.testing.assert_allclose(add(j).get(), x.sum(), rtol=1e-12)
    np.testing.assert_allclose(add(j, init=10).get(), x.sum() + 10, rtol=1e-12)
    np.testing.assert_allclose(add(j[::-3]).get(), x[::-3].sum(), rtol=1e-12)
    f32 = x.astype(np.float32)
    got = add(jiasu.asarray(f32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.get(), f32.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)


def test_large_calls_compile_with_the_gil_then_release_it(rng):
    # The first call of a signature compiles (the front end calls into Python) before the GIL is let go.
    x = rng.random(1 << 17)
    np.testing.assert_allclose(scaled_root(jiasu.asarray(x)).get(), np.sqrt(x) * 0.5, rtol=1e-13)
    np.testing.assert_allclose(scaled_sum(jiasu.asarray(x)).get(), x.sum(), rtol=1e-10)
    f32 = x.astype(np.float32)
    np.testing.assert_allclose(scaled_sum(jiasu.asarray(f32), init=1.0).get(), f32.sum(dtype=np.float64) + 1,
                               rtol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_reduction_type_does_not_depend_on_the_length(n):
    x = np.arange(1, n + 1, dtype=np.int32)
    got = average(jiasu.asarray(x))
    assert got.dtype == np.float64
    expected = x.astype(np.float64)
    while expected.size > 1:  # the same pairwise fold in float64
        pairs = (expected[: expected.size // 2 * 2:2] + expected[1: expected.size // 2 * 2:2]) / 2
        expected = np.concatenate([pairs, expected[expected.size // 2 * 2:]])
    np.testing.assert_allclose(got.get(), expected[0], rtol=1e-15)
    assert average(jiasu.asarray(x.reshape(1, n)), axis=0).dtype == np.float64


def test_python_ints_out_of_range_are_overflow_errors():
    small = jiasu.asarray(np.arange(4, dtype=np.int8))
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        first_nonzero.vectorized(small, 1000)
    with pytest.raises(OverflowError):
        add(jiasu.zeros(0, np.int8), init=1000)
    with pytest.raises(OverflowError):
        small[0] = 1000  # as NumPy
    np.testing.assert_array_equal(small.get(), np.arange(4, dtype=np.int8))


def test_empty_reductions_need_init():
    empty = jiasu.zeros((0, 4), np.float32)
    got = add(empty, axis=0, init=2.5)
    assert got.dtype == np.float32 and got.shape == (4,)
    np.testing.assert_array_equal(got.get(), np.full(4, 2.5, np.float32))
    with pytest.raises(ValueError, match="zero-size array to reduction operation add which has no identity"):
        add(empty, axis=0)
    assert add(empty, axis=1).shape == (0,)  # nothing is reduced over an empty set of lines


def test_a_one_element_reduction_is_a_copy():
    j = jiasu.asarray(np.arange(5.0).reshape(1, 5))
    r = add(j, axis=0)
    r[...] = -1
    np.testing.assert_array_equal(j.get(), np.arange(5.0).reshape(1, 5))


def test_errors_are_pythons(tmp_path):
    j = jiasu.zeros(3)
    with pytest.raises(TypeError, match=r"takes 2 arguments \(1 given\)"):
        fused(j)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        fused(np.ones(3), 1.0)
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) \(4,\)"):
        fused(j, jiasu.zeros(4))
    twice = jiasu.vectorize(lambda x: 2 * x)  # a lambda compiles from its line, as Numba's examples write them
    np.testing.assert_array_equal(twice(jiasu.asarray(np.arange(3.0))).get(), [0.0, 2.0, 4.0])
    first, second = (lambda x: x + 1), (lambda x, y: x - y)  # two on one line: the one with the parameters
    np.testing.assert_array_equal(jiasu.vectorize(second)(jiasu.asarray(np.arange(3.0)), 1.0).get(), [-1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="cannot read the source of <lambda>"):
        jiasu.vectorize(eval("lambda x: x"))  # no source text to read
    with pytest.raises(TypeError, match="two parameters"):
        jiasu.reduce(square.__wrapped__)
    with pytest.raises(TypeError, match="jiasu.Array"):
        add(np.ones(3))
    with pytest.raises(TypeError, match="init must be"):
        add(j, init="zero")


@jiasu.vectorize
def uses_an_undefined_name(x):
    return x + not_defined  # noqa: F821


def test_compile_errors_point_at_the_source():
    with pytest.raises(jiasu.CompileError, match=r"test_vectorize.py:\d+:16: error: name 'not_defined' is not defined"):
        uses_an_undefined_name(jiasu.zeros(3))


def test_inspect_source_shows_each_backends_code():
    cuda = fused.inspect_source(np.float32, np.float32, backend="cuda")
    assert "__device__" in cuda and "fused" in cuda
    cpu = fused.inspect_source(np.float64, np.int8, backend="cpu")
    assert "jiasu_user_loop" in cpu and "using A1 = signed char" in cpu
    with pytest.raises(ValueError):
        fused.inspect_source(np.float32, np.float32, backend="tpu")
