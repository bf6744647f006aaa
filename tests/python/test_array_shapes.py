"""Shape views, joins and creation functions of jiasu.Array against NumPy, on each backend (cpu everywhere,
cuda where a GPU is present)."""
import numpy as np
import pytest

import jiasu


pytestmark = pytest.mark.usefixtures("each_backend")


def same(a, expected):
    """a (a jiasu array) holds expected's values, shape and dtype."""
    got = a.get()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def base(shape=(2, 3, 4), dtype=np.float32):
    host = np.arange(np.prod(shape), dtype=np.float64).astype(dtype).reshape(shape)
    return host, jiasu.asarray(host)


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 0, 1), (1, 0, 2), (-1, 0, 1)])
def test_transpose_is_a_view_with_numpys_strides(axes):
    host, a = base()
    t = a.transpose(axes) if axes is not None else a.T
    expected = host.transpose(axes)
    assert t.strides == expected.strides and t.ptr == a.ptr
    same(t, expected)
    same(jiasu.transpose(a, axes), expected)
    same(a.transpose(*axes) if axes else a.transpose(), expected)


def test_transpose_errors():
    _, a = base()
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        a.transpose(0, 1, 3)
    with pytest.raises(ValueError, match="repeated axis in transpose"):
        a.transpose(0, 0, 1)
    with pytest.raises(ValueError, match="axes don't match array"):
        a.transpose(0, 1)


def test_swapaxes():
    host, a = base()
    same(a.swapaxes(0, 2), host.swapaxes(0, 2))
    same(jiasu.swapaxes(a, -1, 1), host.swapaxes(-1, 1))


@pytest.mark.parametrize("shape, axis", [((1, 3, 1, 2), None), ((1, 3, 1, 2), 0), ((1, 3, 1, 2), (0, 2)),
                                         ((1, 3, 1, 2), -2), ((1,), None), ((1, 1), None)])
def test_squeeze(shape, axis):
    host, a = base(shape)
    same(a.squeeze(axis), host.squeeze(axis))
    same(jiasu.squeeze(a, axis), np.squeeze(host, axis))


def test_squeeze_refuses_a_longer_axis():
    _, a = base((2, 1))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        a.squeeze(0)


@pytest.mark.parametrize("axis", [0, -1, 1, (0, 1), (0, -1), (3, 0)])
def test_expand_dims(axis):
    host, a = base((2, 3))
    same(jiasu.expand_dims(a, axis), np.expand_dims(host, axis))


def test_expand_dims_errors():
    _, a = base((2, 3))
    with pytest.raises(np.exceptions.AxisError):
        jiasu.expand_dims(a, 4)
    with pytest.raises(np.exceptions.AxisError, match="repeated axis"):
        jiasu.expand_dims(a, (0, 0))


@pytest.mark.parametrize("shape, to", [((4,), (3, 4)), ((3, 1), (3, 5)), ((1,), (2, 0)), ((), (2, 3)),
                                       ((2, 1, 3), (4, 2, 5, 3))])
def test_broadcast_to_has_zero_strides(shape, to):
    host, a = base(shape)
    b = jiasu.broadcast_to(a, to)
    expected = np.broadcast_to(host, to)
    if b.size:
        assert b.strides == expected.strides
    same(b, expected)


def test_broadcast_errors_name_both_shapes():
    _, a = base((2, 3))
    with pytest.raises(ValueError, match=r"\(2,3\) to shape \(3,3\)"):
        jiasu.broadcast_to(a, (3, 3))
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes \(2,3\) \(3,2\)"):
        jiasu.broadcast_shapes((2, 3), (3, 2))
    assert jiasu.broadcast_shapes((4, 1), (1, 5), (5,)) == np.broadcast_shapes((4, 1), (1, 5), (5,))


# Views of a (4, 6) array whose reshape NumPy can or cannot do without a copy.
VIEWS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.T,
    "rows stepped": lambda x: x[::2],
    "columns stepped": lambda x: x[:, ::2],
    "reversed": lambda x: x[::-1, ::-1],
    "column block": lambda x: x[:, 2:5],
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("shape", [(-1,), (2, 12), (3, -1), (24, 1), (1, 2, 1, 12, 1)])
def test_reshape_views_when_numpy_does_and_copies_otherwise(view, shape):
    host, a = base((4, 6), np.int32)
    hv, av = VIEWS[view](host), VIEWS[view](a)
    if hv.size % 2 and shape != (-1,) and -1 not in shape:
        shape = (-1,)
    try:
        expected = hv.reshape(shape)
    except ValueError:
        with pytest.raises(ValueError, match="cannot reshape"):
            av.reshape(shape)
        return
    r = av.reshape(shape)
    same(r, expected)
    is_view = np.shares_memory(expected, hv)
    assert (r.ptr == av.ptr if is_view else r.is_c_contiguous), (view, shape, is_view)
    if is_view and expected.size > 1:
        assert r.strides == expected.strides


def test_reshape_of_a_view_that_needs_a_copy_leaves_the_source_alone():
    host, a = base((4, 6))
    r = a.T.reshape(24)
    r[0] = 100.0
    same(a, host)
    assert r[0] == 100.0


@pytest.mark.parametrize("view", VIEWS)
def test_ravel_and_flatten(view):
    host, a = base((4, 6))
    same(VIEWS[view](a).ravel(), VIEWS[view](host).ravel())
    same(jiasu.ravel(VIEWS[view](a)), np.ravel(VIEWS[view](host)))
    f = a.flatten()
    same(f, host.flatten())
    assert f.ptr != a.ptr


def test_reshape_message_is_numpys():
    _, a = base((2, 3))
    with pytest.raises(ValueError, match=r"cannot reshape array of size 6 into shape \(4,\)"):
        a.reshape(4)


def test_integer_index_of_every_axis_gives_numpys_scalar():
    host, a = base((2, 3), np.int16)
    assert a[1, 2] == host[1, 2] and type(a[1, 2]) is np.int16
    assert a[-1, 0] == host[-1, 0]
    v = jiasu.asarray(np.array([1.5, 2.5]))
    assert v[1] == 2.5 and type(v[1]) is np.float64
    zero_d = jiasu.asarray(np.array(7, dtype=np.uint8))
    assert zero_d[()] == 7 and type(zero_d[()]) is np.uint8
    assert isinstance(a[1], jiasu.Array) and a[1].shape == (3,)   # fewer indices: still a view
    assert isinstance(a[1, ...], jiasu.Array) and isinstance(a[1, 1:2], jiasu.Array)
    with pytest.raises(IndexError):
        a[2, 0]


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate(axis):
    host, a = base((2, 3))
    other = host[:, :2].copy() if axis in (1, -1) else host[:1].copy()
    expected = np.concatenate([host, other, host], axis=axis) if axis is not None else \
        np.concatenate([host, host.T], axis=None)
    parts = [a, jiasu.asarray(other), a] if axis is not None else [a, a.T]
    same(jiasu.concatenate(parts, axis=axis), expected)


def test_concatenate_of_views_and_empty_parts():
    host, a = base((4, 6))
    empty = jiasu.asarray(np.zeros((0, 6), np.float32))
    same(jiasu.concatenate([a[::2], empty, a[::-1]]), np.concatenate([host[::2], host[:0], host[::-1]]))


def test_concatenate_errors():
    _, a = base((2, 3))
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3"):
        jiasu.concatenate([a, jiasu.zeros((2, 4), dtype=np.float32)])
    with pytest.raises(ValueError, match="must have same number of dimensions"):
        jiasu.concatenate([a, jiasu.zeros(3, dtype=np.float32)])
    with pytest.raises(ValueError, match="need at least one array"):
        jiasu.concatenate([])
    with pytest.raises(np.exceptions.AxisError):
        jiasu.concatenate([a, a], axis=2)
    with pytest.raises(TypeError, match="jiasu arrays"):
        jiasu.concatenate([a, np.zeros((2, 3))])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis):
    host, a = base((2, 3))
    same(jiasu.stack([a, a.T.T, a[::-1]], axis=axis), np.stack([host, host, host[::-1]], axis=axis))
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        jiasu.stack([a, a.T])


def test_ascontiguousarray():
    host, a = base((3, 4))
    assert jiasu.ascontiguousarray(a) is a
    c = jiasu.ascontiguousarray(a.T)
    assert c.is_c_contiguous
    same(c, np.ascontiguousarray(host.T))
    same(jiasu.ascontiguousarray(jiasu.asarray(np.float64(2))), np.ascontiguousarray(np.float64(2)))


def test_fortran_order_allocation():
    f = jiasu.zeros((3, 4), dtype=np.float32, order="F")
    expected = np.zeros((3, 4), np.float32, order="F")
    assert f.strides == expected.strides and f.is_f_contiguous and not f.is_c_contiguous
    same(f, expected)
    host = np.arange(12.0).reshape(3, 4)
    e = jiasu.empty((3, 4), order="F")
    e.set(host)
    same(e, host)
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        jiasu.empty(3, order="K")


@pytest.mark.parametrize("args, kwargs", [((5,), {}), ((2, 11, 3), {}), ((0.5, 3.0, 0.25), {}),
                                          ((10,), {"dtype": np.float32}), ((3, -4, -2), {})])
def test_arange(args, kwargs):
    same(jiasu.arange(*args, **kwargs), np.arange(*args, **kwargs))


def test_linspace_and_eye():
    same(jiasu.linspace(0, 1, 7), np.linspace(0, 1, 7))
    same(jiasu.linspace(2, 3, 4, endpoint=False, dtype=np.float32), np.linspace(2, 3, 4, endpoint=False, dtype=np.float32))
    same(jiasu.eye(3), np.eye(3))
    same(jiasu.eye(3, 5, k=1, dtype=np.int32), np.eye(3, 5, 1, dtype=np.int32))
    same(jiasu.eye(4, k=-2), np.eye(4, k=-2))


def test_creation_lands_on_the_active_backend():
    for made in (jiasu.arange(3), jiasu.linspace(0, 1, 3), jiasu.eye(2)):
        assert made.device == jiasu.get_device()


def test_concatenate_promotes_dtypes_as_numpy():
    ints = np.arange(6, dtype=np.int16).reshape(2, 3)
    floats = np.linspace(0, 1, 3, dtype=np.float32).reshape(1, 3)
    same(jiasu.concatenate([jiasu.asarray(ints), jiasu.asarray(floats)]), np.concatenate([ints, floats]))
    same(jiasu.stack([jiasu.asarray(ints[0]), jiasu.asarray(ints[1].astype(np.uint8))]),
         np.stack([ints[0], ints[1].astype(np.uint8)]))
