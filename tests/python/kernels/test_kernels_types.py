"""Python-written kernels: typing (NEP 50 weak scalars, NumPy scalars of exact type), float16/bfloat16,
casts, and array access (strided and negative-stride views, negative indices, 2-D and 3-D indexing)."""
import warnings

import numpy as np
import pytest

import jiasu

from .kernels_support import (BF16, TOL, assert_rel, assert_same, assert_untouched, blocks_for, opposite, param_id,
                              poisoned, poisoned_host, rand_float, rand_int)



# ---------------------------------------------------------------- weak (literal) and strong scalars


@jiasu.kernel
def times_tenth(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] * 0.1


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16], ids=param_id)
def test_float_literal_keeps_the_array_dtype(rng, dtype):
    # NEP 50: a Python float literal adapts to the array's dtype, so x * 0.1 on float32 is a float32
    # multiplication by float32(0.1), bit for bit (a float64 multiplication rounded back differs).
    # (For bfloat16 this is NEP 50's rule; NumPy with ml_dtypes would give float32 for x * 0.1.)
    n = 100_000
    x = rand_float(rng, n, dtype, -100, 100)
    out = poisoned(n, dtype)
    times_tenth[blocks_for(n, 256), 256](jiasu.asarray(x), out)
    expected = x * np.dtype(dtype).type(0.1)
    assert expected.dtype == np.dtype(dtype)
    assert_same(out, expected, f"{np.dtype(dtype)} x * 0.1")
    if np.dtype(dtype) == np.float32:
        widened = (x.astype(np.float64) * 0.1).astype(np.float32)
        assert (widened != expected).any(), "test data cannot tell float32 from float64 arithmetic"


@jiasu.kernel
def times_scalar(x, s, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] * s


SCALAR_CASES = [
    (np.float32, 0.1),             # weak float: float32
    (np.float32, np.float32(0.1)),  # float32
    (np.float32, np.float64(0.1)),  # strong float64: float64
    (np.float16, 0.1),             # weak float: float16
    (np.int8, 3),                  # weak int: int8, wrapping
    (np.int8, np.int32(3)),        # strong int32: int32
    (np.uint8, 200),               # weak int: uint8, wrapping
    (np.int32, 0.5),               # int array times a Python float: float64
    (np.int64, -7),                # weak int: int64
    (np.uint32, np.uint32(2654435761)),  # uint32, wrapping
    (np.int16, np.float32(1.5)),   # int16 with float32: float32
]


@pytest.mark.parametrize("dtype, scalar", SCALAR_CASES, ids=param_id)
def test_scalar_argument_promotion_matches_numpy(rng, dtype, scalar):
    n = 50_000
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = rand_int(rng, n, dtype, max(info.min, -30000), min(info.max, 30000), nonzero=True)
    else:
        x = rand_float(rng, n, dtype, -50, 50)
    with np.errstate(over="ignore"):
        expected = x * scalar  # NumPy 2 applies NEP 50 too: its result dtype is the kernel's
    out = poisoned(n, expected.dtype)
    times_scalar[blocks_for(n, 256), 256](jiasu.asarray(x), scalar, out)
    assert_same(out, expected, f"{np.dtype(dtype)} * {scalar!r}")


# ---------------------------------------------------------------- float16 and bfloat16


@jiasu.kernel
def half_axpx(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] * y[i] + x[i]


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=param_id)
@pytest.mark.parametrize("via_numpy", [False, True])
def test_half_precision_arithmetic(rng, dtype, via_numpy):
    n = 200_001
    x = rand_float(rng, n, dtype, -2, 2)
    y = rand_float(rng, n, dtype, -2, 2)
    ref = x.astype(np.float32) * y.astype(np.float32) + x.astype(np.float32)
    if via_numpy:
        out = poisoned_host(n, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jiasu.PerformanceWarning)
            half_axpx[blocks_for(n, 256), 256](x, y, out)
    else:
        out = poisoned(n, dtype)
        half_axpx[blocks_for(n, 256), 256](jiasu.asarray(x), jiasu.asarray(y), out)
        out = out.get()
    assert out.dtype == np.dtype(dtype)
    assert_rel(out, ref, TOL[np.dtype(dtype)], f"{np.dtype(dtype)} x * y + x")


@jiasu.kernel
def f16_casts(h, f, h_from_f, f_from_h, mixed):
    i = jiasu.grid(1)
    if i < f.size:
        h_from_f[i] = np.float16(f[i])
        f_from_h[i] = np.float32(h[i])
        mixed[i] = h[i] + f[i]


@jiasu.kernel
def bf16_casts(h, f, h_from_f, f_from_h, mixed):
    i = jiasu.grid(1)
    if i < f.size:
        h_from_f[i] = jiasu.bfloat16(f[i])
        f_from_h[i] = jiasu.float32(h[i])
        mixed[i] = h[i] + f[i]


# Kernels are named, not passed, in parameters: pytest keeps parameter values for the whole session, and a
# kernel still alive when the interpreter finalises is reported by nanobind as leaked.
@pytest.mark.parametrize("dtype, name", [(np.dtype(np.float16), "f16_casts"), (BF16, "bf16_casts")],
                         ids=["float16", "bfloat16"])
def test_half_precision_casts(rng, dtype, name):
    kernel = globals()[name]
    n = 100_000
    h = rand_float(rng, n, dtype, -60, 60)
    f = rand_float(rng, n, np.float32, -60, 60)
    h_from_f, f_from_h, mixed = poisoned(n, dtype), poisoned(n, np.float32), poisoned(n, np.float32)
    kernel[blocks_for(n, 256), 256](jiasu.asarray(h), jiasu.asarray(f), h_from_f, f_from_h, mixed)
    assert_same(h_from_f, f.astype(dtype), "float32 -> half (round to nearest even)")
    assert_same(f_from_h, h.astype(np.float32), "half -> float32")
    assert_same(mixed, h.astype(np.float32) + f, "half + float32 is float32")


# ---------------------------------------------------------------- views and indexing


@jiasu.kernel
def double_plus_one(x, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = 2.0 * x[i] + 1.0


@pytest.mark.parametrize("in_slice, out_slice", [
    (slice(None, None, 2), slice(None, None, 1)),
    (slice(1, None, 3), slice(None, None, 2)),
    (slice(None, None, -1), slice(None, None, 1)),
    (slice(None, None, 1), slice(None, None, -2)),
    (slice(-2, None, -3), slice(1, None, 2)),
], ids=["in[::2]", "in[1::3]-out[::2]", "in[::-1]", "out[::-2]", "in[-2::-3]-out[1::2]"])
def test_strided_1d_views(rng, in_slice, out_slice):
    n = 30_000
    x_host = rand_float(rng, 3 * n, np.float32, -8, 8)
    x_view_host = x_host[in_slice][:n]
    x = jiasu.asarray(x_host)[in_slice][:n]
    out_full = poisoned(2 * n, np.float32)
    out = out_full[out_slice][:n]
    positions = np.arange(2 * n)[out_slice][:n]  # where the output view's elements live
    assert x.shape == (n,) and out.shape == (n,)
    double_plus_one[blocks_for(n, 256), 256](x, out)
    got = out_full.get()
    assert_same(got[positions], 2 * x_view_host + 1, "strided output")
    outside = np.ones(2 * n, dtype=bool)
    outside[positions] = False
    assert_untouched(got[outside], np.float32, "elements outside the output view")


@jiasu.kernel
def scale2d(a, out):
    i, j = jiasu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2.0 + 1.0


@pytest.mark.parametrize("in_index, out_index", [
    ((slice(None), slice(1, None, 2)), (slice(None), slice(None))),
    ((slice(None, None, -1), slice(1, None, 2)), (slice(None), slice(None, None, 2))),
    ((slice(None), slice(None)), (slice(1, None, 2), slice(None, None, -2))),
], ids=["a[:, 1::2]", "a[::-1, 1::2]-out[:, ::2]", "out[1::2, ::-2]"])
def test_strided_2d_views(rng, in_index, out_index):
    rows, cols = 123, 77
    # The input is a view of a bigger array; the output a view of a poisoned bigger array.
    a_host = rand_float(rng, (2 * rows, 2 * cols), np.float32, -4, 4)
    a_view_host = a_host[in_index][:rows, :cols]
    a = jiasu.asarray(a_host)[in_index][:rows, :cols]
    full_shape = (2 * rows + 1, 2 * cols + 1)
    out_full = poisoned(full_shape, np.float32)
    out = out_full[out_index][:rows, :cols]
    positions = np.arange(np.prod(full_shape)).reshape(full_shape)[out_index][:rows, :cols]
    assert a.shape == (rows, cols) and out.shape == (rows, cols)
    scale2d[(blocks_for(rows, 16), blocks_for(cols, 16)), (16, 16)](a, out)
    got = out_full.get().reshape(-1)
    assert_rel(got[positions], a_view_host.astype(np.float64) * 2 + 1, 1e-6, "strided 2-D output")
    outside = np.ones(got.size, dtype=bool)
    outside[positions.reshape(-1)] = False
    assert_untouched(got[outside], np.float32, "elements outside the output view")


@jiasu.kernel
def negative_indices(x, m, out):
    i = jiasu.grid(1)
    n = x.size
    if i < n:
        out[i] = x[-(i + 1)]
    if i == 0:
        out[n] = x[-1]
        out[n + 1] = x[-n]
        out[n + 2] = m[-1, -2]
        out[n + 3] = m[1, -1]
        out[n + 4] = m[-m.shape[0], -m.shape[1]]


def test_negative_indices_wrap(rng):
    n = 10_007
    x = rand_float(rng, n, np.float64, -9, 9)
    m = rand_float(rng, (6, 9), np.float64, -9, 9)
    out = poisoned(n + 5, np.float64)
    negative_indices[blocks_for(n, 128), 128](jiasu.asarray(x), jiasu.asarray(m), out)
    expected = np.concatenate([x[::-1], [x[-1], x[-n], m[-1, -2], m[1, -1], m[0, 0]]])
    assert_same(out, expected)


@jiasu.kernel
def index3d(a, out):
    i, j, k = jiasu.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] * 2.0 - a[i, j, 0]


@pytest.mark.parametrize("view", [False, True])
def test_3d_indexing(rng, view):
    shape = (5, 37, 19)
    big = rand_float(rng, (shape[0], shape[1], 2 * shape[2]), np.float32, -3, 3)
    a_host = big[:, :, ::2] if view else np.ascontiguousarray(big[:, :, : shape[2]])
    a = jiasu.asarray(big)[:, :, ::2] if view else jiasu.asarray(a_host)
    assert a.shape == shape
    out = poisoned(shape, np.float32)
    threads = (2, 8, 8)
    blocks = tuple(blocks_for(s, t) for s, t in zip(shape, threads))
    index3d[blocks, threads](a, out)
    ref = a_host.astype(np.float64) * 2 - a_host[:, :, :1].astype(np.float64)
    assert_rel(out, ref, 1e-6)


# ---------------------------------------------------------------- casts


@jiasu.kernel
def casts(xf, xi, f32, i64, f64, i32, b, u8):
    i = jiasu.grid(1)
    if i < xf.size:
        f32[i] = jiasu.float32(xf[i])
        i64[i] = int(xf[i])
        f64[i] = float(xi[i])
        i32[i] = np.int32(xf[i])
        b[i] = bool(xi[i])
        u8[i] = np.uint8(xi[i] & 255)


def test_casts(rng):
    n = 60_000
    xf = rand_float(rng, n, np.float64, -1e6, 1e6)
    xf[:6] = [2.5, -2.5, 0.999, -0.999, 1e6 - 0.5, -7.0]
    xi = rand_int(rng, n, np.int32, -5000, 5000)
    xi[:3] = [0, -1, 256]
    expected_bool = xi != 0
    outs = [poisoned(n, np.float32), poisoned(n, np.int64), poisoned(n, np.float64), poisoned(n, np.int32),
            opposite(expected_bool), poisoned(n, np.uint8)]
    casts[blocks_for(n, 256), 256](jiasu.asarray(xf), jiasu.asarray(xi), *outs)
    f32, i64, f64, i32, b, u8 = outs
    assert_same(f32, xf.astype(np.float32), "jiasu.float32(float64): round to nearest")
    assert_same(i64, np.trunc(xf).astype(np.int64), "int(float): toward zero")
    assert_same(f64, xi.astype(np.float64), "float(int32)")
    assert_same(i32, xf.astype(np.int32), "np.int32(float64): toward zero")
    assert_same(b, expected_bool, "bool(int32)")
    assert_same(u8, (xi & 255).astype(np.uint8), "np.uint8(int32 & 255)")


@jiasu.kernel
def k_tuple_argument(out, t):
    out[0] = len(t)
    out[1] = len(t[0])
    out[2] = t[0][0]
    out[3] = t[0][1] * 10
    out[4] = t[1]
    out[5] = t[2]


@jiasu.kernel
def k_named_tuple_argument(out, p):
    out[0] = p.x + p.y * 2
    out[1] = p.r


def test_tuples_and_namedtuples_are_kernel_arguments():
    """Tuples of numbers (nested, mixed types, empty) pass by value, laid out as the kernel's struct of them."""
    import collections

    out = jiasu.zeros(6, np.float64)
    for t in (((6, 5.5), 7, np.int8(-3)), ((np.float32(1.5), True), 2 ** 40, 0.25), ((np.uint16(9), 2j.imag), -1, 3)):
        k_tuple_argument[1, 1](out, t)
        assert out.get().tolist() == [3, 2, t[0][0], t[0][1] * 10, t[1], t[2]]
    empty = jiasu.zeros(2, np.int64)

    @jiasu.kernel
    def lengths(out, t):
        out[0] = len(t)
        out[1] = len(t[1])

    lengths[1, 1](empty, ((), (), ()))
    assert empty.get().tolist() == [3, 0]
    Point = collections.namedtuple("Point", ("x", "y", "r"))
    k_named_tuple_argument[1, 1](out, Point(1, 2, 2.5))
    assert out.get()[:2].tolist() == [5, 2.5]


def test_tuples_holding_arrays_or_too_many_bytes_are_type_errors():
    out = jiasu.zeros(6, np.float64)
    with pytest.raises(TypeError, match="argument 1 of kernel 'k_tuple_argument' is a tuple holding ndarray"):
        k_tuple_argument[1, 1](out, ((np.zeros(2), 1), 2, 3))
    with pytest.raises(TypeError, match="a tuple passed to a kernel takes at most 64 bytes"):
        k_tuple_argument[1, 1](out, (tuple(range(9)), 2, 3))


TABLE = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
LOOKUP = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3) - 3)  # F order: read by index all the same
PHASES = np.exp(1j * np.arange(4)).astype(np.complex64)
EMPTY = np.array([], dtype=np.float64)


@jiasu.kernel
def k_constant_arrays(out, ints, zs):
    table = jiasu.const.array_like(TABLE)
    i, j = jiasu.grid(2)
    if i < table.shape[0] and j < table.shape[1]:
        out[i, j] = table[i, j] * 2 + len(EMPTY)
    if i < LOOKUP.shape[0] and j < LOOKUP.shape[1]:
        ints[i, j] = LOOKUP[i, j]
    if i == 0 and j < len(PHASES):
        zs[j] = PHASES[j] * 1j


def test_global_numpy_arrays_are_embedded_as_constants():
    out, ints, zs = jiasu.zeros((3, 4), np.float32), jiasu.zeros((2, 3), np.int16), jiasu.zeros(4, np.complex64)
    k_constant_arrays[1, (4, 4)](out, ints, zs)
    np.testing.assert_array_equal(out.get(), TABLE * 2)
    np.testing.assert_array_equal(ints.get(), LOOKUP)
    np.testing.assert_array_equal(zs.get(), PHASES * 1j)


def test_constant_arrays_cannot_be_written_and_large_ones_are_refused():
    def write_table(out):
        TABLE[0, 0] = 1.0

    def write_alias(out):
        t = jiasu.const.array_like(TABLE)
        jiasu.atomic.add(t, (0, 0), 1.0)

    def huge(out):
        out[0] = HUGE[0]

    for f in (write_table, write_alias):
        with pytest.raises(jiasu.CompileError, match="is a global array, embedded in the kernel as a constant: it "
                                                     "cannot be written"):
            jiasu.kernel(f)[1, 1](jiasu.zeros(1))
    huge.__globals__["HUGE"] = np.zeros(10_000)
    with pytest.raises(jiasu.CompileError, match=r"global 'HUGE' is a NumPy array of shape \(10000,\) \(80000 bytes\)"):
        jiasu.kernel(huge)[1, 1](jiasu.zeros(1))
