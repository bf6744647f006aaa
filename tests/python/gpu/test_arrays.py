"""jiasu.Array: transfers, creation, views, reshape, copies, host interop and free(), against NumPy."""
import gc

import ml_dtypes
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu

ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128]
DTYPE_IDS = [np.dtype(d).name for d in ALL_DTYPES]

# Values whose bytes all differ, so that a fill that repeats the wrong bytes or words is caught.
FILL_VALUES = {
    "bool": True, "int8": -7, "int16": 0x1234, "int32": 0x12345678, "int64": 0x0123456789ABCDEF,
    "uint8": 0xA5, "uint16": 0xBEEF, "uint32": 0xDEADBEEF, "uint64": 0xFEDCBA9876543210,
    "float16": -1.5, "bfloat16": 3.140625, "float32": 0.1, "float64": 0.1,
    "complex64": 0.1 - 2.5j, "complex128": 0.1 - 2.5j,
}


def random_data(rng, shape, dtype):
    """Random contents: any bit pattern (NaN payloads included) except for bool, which must be 0 or 1."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.integers(0, 2, size=count).astype(np.bool_).reshape(shape)
    raw = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def same_bytes(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes()


def numpy_offset(view, base):
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(1000,), (3, 5, 7), (0,), (2, 0, 3)], ids=["1d", "3d", "empty", "empty3d"])
def test_round_trip_bit_exact(rng, dtype, shape):
    host = random_data(rng, shape, dtype)
    a = jiasu.asarray(host)
    assert isinstance(a, jiasu.Array)
    assert a.dtype == np.dtype(dtype)
    assert a.shape == shape
    assert a.ndim == len(shape)
    assert a.size == host.size
    assert a.itemsize == host.itemsize
    assert a.nbytes == host.nbytes
    if host.size:  # NumPy gives empty arrays zero strides; any strides describe them
        assert a.strides == host.strides
    assert a.is_c_contiguous
    back = a.get()
    assert isinstance(back, np.ndarray)
    assert same_bytes(back, host)
    assert same_bytes(np.asarray(a), host)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_set_into_empty_round_trip(rng, dtype):
    host = random_data(rng, (4, 33), dtype)
    a = jiasu.empty((4, 33), dtype=dtype)
    a.set(host)
    assert same_bytes(a.get(), host)


def test_dtype_by_name_and_bfloat16_alias(rng):
    assert jiasu.bfloat16 is ml_dtypes.bfloat16
    assert jiasu.float32 is np.float32
    a = jiasu.empty(5, dtype="bfloat16")
    assert a.dtype == np.dtype(ml_dtypes.bfloat16)
    host = random_data(rng, (5,), ml_dtypes.bfloat16)
    a.set(host)
    assert same_bytes(a.get(), host)
    assert jiasu.empty(3, dtype="int16").dtype == np.int16


def test_asarray_of_lists_scalars_and_with_dtype(rng):
    a = jiasu.asarray([[1, 2, 3], [4, 5, 6]])
    assert a.dtype == np.asarray([[1, 2, 3]]).dtype
    np.testing.assert_array_equal(a.get(), [[1, 2, 3], [4, 5, 6]])
    host = rng.standard_normal((4, 6))
    b = jiasu.asarray(host, dtype=np.float32)
    assert b.dtype == np.float32
    assert same_bytes(b.get(), host.astype(np.float32))
    # A jiasu array given to asarray is the same memory, not a copy.
    assert jiasu.asarray(b).ptr == b.ptr


def test_zero_dim_arrays(rng):
    # 0-d arrays: from a Python scalar, as a view of one element (an index with ...), assigned as a whole.
    # A full integer index gives a NumPy scalar, as in NumPy and CuPy.
    s = jiasu.asarray(2.5)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    assert s.get().shape == () and s.get() == 2.5
    host = rng.standard_normal((3, 4))
    a = jiasu.asarray(host)
    scalar = a[1, 2]
    assert type(scalar) is np.float64 and scalar == host[1, 2]
    e = a[1, 2, ...]
    assert isinstance(e, jiasu.Array) and e.shape == () and e.get() == host[1, 2]
    a[1, 2] = 9.25
    host[1, 2] = 9.25
    assert same_bytes(a.get(), host)
    e.set(-1.5)
    host[1, 2] = -1.5
    assert same_bytes(a.get(), host)
    z = jiasu.zeros((), np.int32)
    z.set(np.int32(7))
    assert z.get() == 7


def test_np_asarray_with_dtype(rng):
    host = rng.standard_normal(50).astype(np.float32)
    a = jiasu.asarray(host)
    out = np.asarray(a, dtype=np.float64)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, host.astype(np.float64))


# ---------------------------------------------------------------- creation


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(37,), (2, 3, 5), (0,)], ids=["1d", "3d", "empty"])
def test_full_every_dtype(dtype, shape):
    value = FILL_VALUES[np.dtype(dtype).name]
    a = jiasu.full(shape, value, dtype=dtype)
    assert a.dtype == np.dtype(dtype) and a.shape == shape
    assert same_bytes(a.get(), np.full(shape, value, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_zeros_ones_every_dtype(dtype):
    shape = (3, 41)
    # Dirty pool memory first: zeros() must write its zeros, not rely on fresh memory.
    dirty = jiasu.full(shape, FILL_VALUES[np.dtype(dtype).name], dtype=dtype)
    dirty.free()
    z = jiasu.zeros(shape, dtype=dtype)
    assert z.dtype == np.dtype(dtype) and z.shape == shape
    assert same_bytes(z.get(), np.zeros(shape, dtype=dtype))
    o = jiasu.ones(shape, dtype=dtype)
    assert o.dtype == np.dtype(dtype) and o.shape == shape
    assert same_bytes(o.get(), np.ones(shape, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_empty_shape_and_dtype(dtype):
    a = jiasu.empty((4, 0, 2), dtype=dtype)
    assert a.shape == (4, 0, 2) and a.dtype == np.dtype(dtype) and a.size == 0 and a.nbytes == 0
    b = jiasu.empty(7, dtype=dtype)
    assert b.shape == (7,) and b.dtype == np.dtype(dtype)
    assert b.strides == (np.dtype(dtype).itemsize,)


def test_creation_defaults_are_float64():
    for make in (jiasu.empty, jiasu.zeros, jiasu.ones):
        a = make((2, 3))
        assert a.dtype == np.float64 and a.shape == (2, 3)
    assert same_bytes(jiasu.zeros(4).get(), np.zeros(4))
    assert same_bytes(jiasu.ones(4).get(), np.ones(4))


def test_full_infers_dtype_from_value():
    assert jiasu.full(3, 7).dtype == np.asarray(7).dtype
    f = jiasu.full(3, 2.75)
    assert f.dtype == np.float64 and same_bytes(f.get(), np.full(3, 2.75))
    c = jiasu.full((2, 2), 1 + 2j)
    assert c.dtype == np.complex128
    assert same_bytes(c.get(), np.full((2, 2), 1 + 2j))
    b = jiasu.full(4, True)
    assert b.dtype == np.bool_ and b.get().all()


def test_full_complex_float64_int16_patterns():
    # complex: 16-byte pattern of four different 32-bit words.
    value = np.complex128(1.2345678901234567 - 9.87654321e-3j)
    c = jiasu.full((3, 17), value)
    assert c.dtype == np.complex128
    assert same_bytes(c.get(), np.full((3, 17), value))
    c64 = jiasu.full(19, -0.3 + 4.25j, dtype=np.complex64)
    assert same_bytes(c64.get(), np.full(19, -0.3 + 4.25j, dtype=np.complex64))
    # float64: two different 32-bit words per element.
    d = jiasu.full(1001, 1.2345678901234567, dtype=np.float64)
    assert same_bytes(d.get(), np.full(1001, 1.2345678901234567))
    assert jiasu.full(5, -np.inf, dtype=np.float64).get().tolist() == [-np.inf] * 5
    # int16: a 2-byte pattern.
    s = jiasu.full(1001, 0x1234, dtype=np.int16)
    assert same_bytes(s.get(), np.full(1001, 0x1234, dtype=np.int16))
    n = jiasu.full(33, -2, dtype=np.int16)
    assert same_bytes(n.get(), np.full(33, -2, dtype=np.int16))
    nan = jiasu.full(8, np.nan, dtype=np.float32)
    assert np.isnan(nan.get()).all()


def test_like_functions(rng):
    host = rng.standard_normal((3, 4)).astype(np.float32)
    a = jiasu.asarray(host)
    e = jiasu.empty_like(a)
    assert e.shape == (3, 4) and e.dtype == np.float32 and e.device == a.device and e.ptr != a.ptr
    z = jiasu.zeros_like(a)
    assert z.dtype == np.float32 and same_bytes(z.get(), np.zeros_like(host))
    o = jiasu.ones_like(a)
    assert o.dtype == np.float32 and same_bytes(o.get(), np.ones_like(host))
    f = jiasu.full_like(a, 7.5)
    assert f.dtype == np.float32 and same_bytes(f.get(), np.full_like(host, 7.5))
    # The data of `a` is untouched by all of that.
    assert same_bytes(a.get(), host)
    # dtype overrides, given as a type and as a np.dtype instance.
    assert jiasu.empty_like(a, dtype=np.int8).dtype == np.int8
    zi = jiasu.zeros_like(a, dtype=np.dtype(np.int16))
    assert zi.dtype == np.int16 and same_bytes(zi.get(), np.zeros((3, 4), np.int16))
    oc = jiasu.ones_like(a, dtype=np.complex64)
    assert same_bytes(oc.get(), np.ones((3, 4), np.complex64))
    fd = jiasu.full_like(a, 0.1, dtype=np.float64)
    assert same_bytes(fd.get(), np.full((3, 4), 0.1))
    # Of a strided view: a contiguous array of the view's shape.
    v = a[:, ::2]
    zv = jiasu.zeros_like(v)
    assert zv.shape == (3, 2) and zv.is_c_contiguous and same_bytes(zv.get(), np.zeros((3, 2), np.float32))
    # Of a NumPy array: a device array of its shape and dtype.
    zn = jiasu.zeros_like(host)
    assert isinstance(zn, jiasu.Array) and zn.shape == (3, 4) and zn.dtype == np.float32


# ---------------------------------------------------------------- views

VIEW_KEYS = [
    np.s_[::2], np.s_[::-1], np.s_[3], np.s_[-1], np.s_[None], np.s_[..., 1],
    np.s_[1:-1:3, ::-2, None, 2], np.s_[1, ..., ::-2], np.s_[None, :, 2, 1:5], np.s_[..., None],
    np.s_[:, ::-1, ::3], np.s_[2:0:-1, 5:, None, ...], np.s_[5:2], np.s_[:, 7:],
    np.s_[::-3, 1::2, -2:-7:-2], np.s_[4:100, -100:3], np.s_[1, 2, 3], np.s_[..., ::-1, :, None],
    np.s_[:, :0:-1], np.s_[...], np.s_[np.int64(2), np.int32(-3)], np.s_[-6, -7, -8],
]


@pytest.mark.parametrize("key", VIEW_KEYS, ids=[repr(k) for k in VIEW_KEYS])
def test_views_match_numpy(rng, key):
    host = rng.standard_normal((6, 7, 8)).astype(np.float32)
    a = jiasu.asarray(host)
    full_key = key if isinstance(key, tuple) else (key,)
    if len(full_key) == host.ndim and all(isinstance(k, (int, np.integer)) for k in full_key):
        # Every axis indexed by an integer: a NumPy scalar, as NumPy gives.
        element = a[key]
        assert type(element) is np.float32 and element == host[key]
        key = full_key + (Ellipsis,)  # the 0-d view of that element
    v = a[key]
    assert isinstance(v, jiasu.Array)
    full_key = key if isinstance(key, tuple) else (key,)
    expected = host[full_key + (Ellipsis,)] if Ellipsis not in full_key else host[full_key]
    assert v.shape == expected.shape
    assert v.strides == expected.strides
    assert v.dtype == np.float32
    assert v.size == expected.size and v.ndim == expected.ndim
    assert v.is_c_contiguous == expected.flags.c_contiguous
    assert same_bytes(v.get(), expected)
    assert same_bytes(np.asarray(v), expected)
    if expected.size:
        assert v.ptr - a.ptr == numpy_offset(expected, host)
    # A view of the view, too.
    if v.ndim and v.shape[0] > 1:
        assert same_bytes(v[::-1].get(), expected[::-1])
        assert same_bytes(v[1:].get(), expected[1:])


def test_view_of_1d_integers(rng):
    host = rng.integers(-1000, 1000, size=101).astype(np.int64)
    a = jiasu.asarray(host)
    for key in (np.s_[3:90:7], np.s_[::-5], np.s_[-10:], np.s_[50], np.s_[100:0:-33], np.s_[None, ::4]):
        expected = host[key]
        v = a[key]
        assert v.shape == np.shape(expected)
        if np.ndim(expected) == 0:  # an integer index: NumPy's scalar
            assert type(v) is np.int64 and v == expected
        else:
            assert same_bytes(v.get(), expected)


def test_views_share_memory_setitem_scalar_on_step():
    host = np.arange(20, dtype=np.float32)
    a = jiasu.asarray(host)
    a[::2] = 5
    host[::2] = 5
    assert same_bytes(a.get(), host)
    v = a[1::3]
    v[...] = -1
    host[1::3] = -1
    assert same_bytes(a.get(), host)


def test_views_share_memory_set_and_setitem(rng):
    host = rng.standard_normal((6, 7, 8)).astype(np.float64)
    a = jiasu.asarray(host)
    base_ptr = a.ptr

    v = a[1:4]
    values = rng.standard_normal(v.shape)
    v.set(values)
    host[1:4] = values
    assert same_bytes(a.get(), host)

    w = a[::-1, 2:, ::3]  # strided, negative step
    values = rng.standard_normal(w.shape)
    w[...] = values
    host[::-1, 2:, ::3] = values
    assert same_bytes(a.get(), host)

    row = rng.standard_normal((7, 8))
    a[2] = row
    host[2] = row
    assert same_bytes(a.get(), host)

    col = rng.standard_normal((6, 7))
    a[..., 0] = col
    host[..., 0] = col
    a[:, None, -1, 1:3] = 4.5  # None in the key, value broadcast
    host[:, None, -1, 1:3] = 4.5
    assert same_bytes(a.get(), host)
    assert a.ptr == base_ptr


def test_setitem_from_device_arrays(rng):
    host = rng.standard_normal(30).astype(np.float32)
    a = jiasu.asarray(host)
    src = rng.standard_normal(10).astype(np.float32)
    a[5:15] = jiasu.asarray(src)  # contiguous destination
    host[5:15] = src
    src2 = rng.standard_normal(15).astype(np.float32)
    a[::2] = jiasu.asarray(src2)  # strided destination
    host[::2] = src2
    src3 = rng.standard_normal(20).astype(np.float32)
    a[:10] = jiasu.asarray(src3)[::-2]  # strided source
    host[:10] = src3[::-2]
    assert same_bytes(a.get(), host)
    with pytest.raises(ValueError):
        a[:4] = jiasu.asarray(src[:5])  # wrong shape
    assert same_bytes(a.get(), host)
    wide = rng.standard_normal(10)
    a[3:23:2] = jiasu.asarray(wide)  # float64 into float32 strided: cast on the device, as NumPy casts
    host[3:23:2] = wide
    assert same_bytes(a.get(), host)


def test_setitem_from_numpy_converts_dtype(rng):
    a = jiasu.zeros(8, dtype=np.float32)
    values = rng.standard_normal(4)  # float64 into float32
    a[2:6] = values
    expected = np.zeros(8, np.float32)
    expected[2:6] = values
    assert same_bytes(a.get(), expected)


def test_reshape(rng):
    host = rng.standard_normal(24).astype(np.float32)
    a = jiasu.asarray(host)
    for args, shape in [((2, 3, 4), (2, 3, 4)), (((4, 6),), (4, 6)), ((4, -1), (4, 6)), ((-1,), (24,)),
                        (([2, -1, 3],), (2, 4, 3)), ((24, 1), (24, 1)), ((1, 24), (1, 24))]:
        r = a.reshape(*args)
        assert r.shape == shape
        assert r.ptr == a.ptr
        assert r.strides == host.reshape(shape).strides
        assert same_bytes(r.get(), host.reshape(shape))
    # Shares memory.
    r = a.reshape(4, 6)
    r[1] = 0
    host[6:12] = 0
    assert same_bytes(a.get(), host)
    # A contiguous view with an offset keeps its offset.
    part = a[6:18].reshape(3, 4)
    assert part.ptr == a.ptr + 6 * 4
    assert same_bytes(part.get(), host[6:18].reshape(3, 4))
    # Empty.
    assert jiasu.empty(0, np.float32).reshape(3, 0, 5).shape == (3, 0, 5)


def test_reshape_errors_and_copies():
    a = jiasu.zeros(24, dtype=np.float32)
    with pytest.raises(ValueError):
        a.reshape(5, 5)
    with pytest.raises(ValueError):
        a.reshape(-1, -1)
    with pytest.raises(ValueError):
        a.reshape(7, -1)
    # Views that need a copy to reshape get one, as in NumPy; those that do not stay views.
    host = np.arange(24, dtype=np.float32)
    b = jiasu.asarray(host)
    block = b.reshape(4, 6)[:, 1:4]
    flat = block.reshape(-1)
    assert flat.is_c_contiguous and flat.ptr != block.ptr
    np.testing.assert_array_equal(flat.get(), host.reshape(4, 6)[:, 1:4].reshape(-1))
    reversed_view = b[::-1].reshape(4, 6)
    assert reversed_view.ptr == b[::-1].ptr and reversed_view.strides == host[::-1].reshape(4, 6).strides
    np.testing.assert_array_equal(reversed_view.get(), host[::-1].reshape(4, 6))


def test_copy_is_independent_and_contiguous(rng):
    host = rng.standard_normal((5, 6)).astype(np.float64)
    a = jiasu.asarray(host)
    c = a.copy()
    assert c.ptr != a.ptr and c.is_c_contiguous and c.shape == a.shape and c.dtype == a.dtype
    assert same_bytes(c.get(), host)
    a[...] = 0
    assert same_bytes(c.get(), host)
    c[0] = 123.0
    assert (a.get()[0] == 0).all()


def test_copy_of_strided_view(rng):
    host = rng.standard_normal((6, 7, 8)).astype(np.float32)
    a = jiasu.asarray(host)
    v = a[::2, ::-1, 1::3]
    expected = host[::2, ::-1, 1::3]
    c = v.copy()
    assert c.is_c_contiguous and not v.is_c_contiguous
    assert c.shape == expected.shape
    assert c.strides == np.ascontiguousarray(expected).strides
    assert same_bytes(c.get(), expected)
    a.set(np.zeros((6, 7, 8), np.float32))
    assert same_bytes(c.get(), expected)
    assert jiasu.empty((0, 3), np.float32)[:, ::2].copy().shape == (0, 2)


def test_strides_in_bytes(rng):
    for dtype in (np.int8, np.float16, np.float32, np.complex128):
        host = np.zeros((4, 5, 6), dtype)
        a = jiasu.asarray(host)
        assert a.strides == host.strides
        assert a[:, ::2, ::-3].strides == host[:, ::2, ::-3].strides
        assert a[1].strides == host[1].strides
        assert a[None, ..., 0].strides == host[None, ..., 0].strides
        assert a.reshape(20, 6).strides == host.reshape(20, 6).strides


def test_len():
    a = jiasu.zeros((6, 7, 8), np.float32)
    assert len(a) == 6
    assert len(a[2]) == 7
    assert len(a[::2]) == 3
    assert len(a[None]) == 1
    assert len(jiasu.empty(0)) == 0
    with pytest.raises(TypeError):
        len(a[1, 2, 3])


def test_repr_contains_values():
    a = jiasu.asarray(np.array([1.5, -2.25, 3.0], dtype=np.float32))
    text = repr(a)
    assert "jiasu.Array" in text
    assert "1.5" in text and "-2.25" in text
    assert "float32" in text


def test_set_with_broadcasting(rng):
    a = jiasu.full((4, 5), np.nan)
    row = rng.standard_normal(5)
    a.set(row)
    assert same_bytes(a.get(), np.broadcast_to(row, (4, 5)))
    a.set(2.5)
    assert same_bytes(a.get(), np.full((4, 5), 2.5))
    column = rng.standard_normal((4, 1))
    a.set(column)
    assert same_bytes(a.get(), np.broadcast_to(column, (4, 5)))
    a.set([[1, 2, 3, 4, 5]] * 4)  # a list, converted
    assert same_bytes(a.get(), np.array([[1, 2, 3, 4, 5]] * 4, dtype=np.float64))
    with pytest.raises(ValueError):
        a.set(np.zeros(4))
    with pytest.raises(ValueError):
        a.set(np.zeros(20))


def test_get_into_pinned_out(rng):
    host = rng.standard_normal((3, 50)).astype(np.float32)
    a = jiasu.asarray(host)
    out = jiasu.pinned_empty((3, 50), np.float32)
    out[...] = np.nan
    result = a.get(out=out)
    assert result is out
    assert same_bytes(out, host)
    # A plain NumPy out works too.
    plain = np.full((3, 50), np.nan, np.float32)
    assert a.get(out=plain) is plain and same_bytes(plain, host)


def test_get_out_must_match():
    a = jiasu.zeros((3, 4), np.float32)
    with pytest.raises(ValueError):
        a.get(out=np.empty((3, 4), np.float64))
    with pytest.raises(ValueError):
        a.get(out=np.empty((3, 5), np.float32))
    with pytest.raises(ValueError):
        a.get(out=np.empty((4, 6), np.float32)[:, ::2])


def test_get_on_stream(rng):
    host = rng.standard_normal(10_000).astype(np.float64)
    a = jiasu.asarray(host)
    s = jiasu.Stream()
    pinned = jiasu.pinned_empty(10_000, np.float64)
    pinned[...] = np.nan
    result = a.get(stream=s, out=pinned)
    s.synchronize()
    assert result is pinned and same_bytes(pinned, host)
    plain = a.get(stream=s)
    s.synchronize()
    assert same_bytes(plain, host)
    # A strided view on a stream.
    v = a[::-3]
    got = v.get(stream=s)
    s.synchronize()
    assert same_bytes(got, host[::-3])


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, ml_dtypes.bfloat16, np.complex128],
                         ids=["float32", "uint8", "bfloat16", "complex128"])
def test_pinned_empty(rng, dtype):
    p = jiasu.pinned_empty((3, 40), dtype)
    assert isinstance(p, np.ndarray)
    assert p.shape == (3, 40) and p.dtype == np.dtype(dtype)
    assert p.flags.writeable and p.flags.c_contiguous
    q = jiasu.pinned_empty(17, dtype)
    assert q.shape == (17,)
    assert jiasu.pinned_empty((0,), dtype).shape == (0,)
    # Round trip through pinned memory both ways.
    data = random_data(rng, (3, 40), dtype)
    p[...] = data
    a = jiasu.empty((3, 40), dtype)
    a.set(p)
    back = jiasu.pinned_empty((3, 40), dtype)
    back[...] = random_data(rng, (3, 40), dtype)
    a.get(out=back)
    assert same_bytes(back, data)
    # Asynchronously on a stream.
    s = jiasu.Stream()
    b = jiasu.empty((3, 40), dtype)
    b.set(p, stream=s)
    back2 = jiasu.pinned_empty((3, 40), dtype)
    b.get(stream=s, out=back2)
    s.synchronize()
    assert same_bytes(back2, data)


def test_pinned_memory_outlives_temporaries(rng):
    p = jiasu.pinned_empty((256, 256), np.float32)
    data = rng.standard_normal((256, 256)).astype(np.float32)
    p[...] = data
    gc.collect()
    junk = [jiasu.pinned_empty((256, 256), np.float32) for _ in range(4)]
    for j in junk:
        j[...] = -1
    assert same_bytes(p, data)


# ---------------------------------------------------------------- free()


def test_free_then_use_raises():
    a = jiasu.asarray(np.arange(10, dtype=np.float32))
    view_before = a[2:8:2]
    a.free()
    with pytest.raises(jiasu.InvalidArrayError) as info:
        a.get()
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE"
    assert isinstance(info.value, jiasu.CudaError) and isinstance(info.value, jiasu.JiasuError)
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(jiasu.InvalidArrayError):
        view_before.get()
    with pytest.raises(jiasu.InvalidArrayError):
        a[1:].get()  # a view made after free()
    with pytest.raises(jiasu.InvalidArrayError):
        np.asarray(a)
    with pytest.raises(jiasu.InvalidArrayError):
        a.set(np.zeros(10, np.float32))
    with pytest.raises(jiasu.InvalidArrayError):
        a.copy()
    with pytest.raises(jiasu.InvalidArrayError):
        a.ptr
    # Metadata stays readable, repr does not raise, and a second free() is harmless.
    assert a.shape == (10,) and a.dtype == np.float32
    assert "freed" in repr(a)
    a.free()


def test_free_through_a_view_frees_the_base():
    a = jiasu.zeros(16, np.int32)
    a[4:].free()
    with pytest.raises(jiasu.InvalidArrayError):
        a.get()


def test_free_does_not_disturb_other_arrays(rng):
    keep = rng.standard_normal(1000)
    k = jiasu.asarray(keep)
    for _ in range(5):
        t = jiasu.full(1000, -1.0)
        t.free()
        jiasu.full(1000, 3.0)  # may reuse the freed block
    assert same_bytes(k.get(), keep)


# ---------------------------------------------------------------- device, indices


def test_device_property():
    a = jiasu.zeros(4)
    assert a.device == jiasu.Device(0)
    assert a.device.id == 0
    assert a[1:].device == jiasu.Device(0)
    assert jiasu.get_device() == jiasu.Device(0)


def test_index_out_of_range():
    a = jiasu.zeros((6, 7), np.float32)
    for key in (6, -7, (0, 7), (0, -8), (100,)):
        with pytest.raises(IndexError):
            a[key]
    with pytest.raises(IndexError):
        a[0, 0, 0]  # too many indices
    with pytest.raises(IndexError):
        a[1.5]
    with pytest.raises(IndexError):
        a["x"]
    with pytest.raises(IndexError):
        a[6] = 1.0
    with pytest.raises(ValueError):
        a[::0]
    with pytest.raises(IndexError):
        a[..., ...]  # as in NumPy
    # Out-of-range slices are clamped, as in NumPy.
    assert a[10:20].shape == (0, 7)
    assert a[-100:100].shape == (6, 7)
