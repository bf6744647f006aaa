"""NumPy functions called on jiasu arrays run jiasu's own (__array_function__ / __array_ufunc__) and return jiasu
arrays; what jiasu lacks, or a NumPy array mixed in, is a TypeError instead of a hidden copy to the host."""
import numpy as np
import pytest

import jiasu


pytestmark = pytest.mark.usefixtures("each_backend")


def host_and_device(shape=(2, 3)):
    host = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return host, jiasu.asarray(host)


@pytest.mark.parametrize("call", [
    lambda m, x: m.transpose(x),
    lambda m, x: m.transpose(x, (1, 0)),
    lambda m, x: m.reshape(x, (3, 2)),
    lambda m, x: m.concatenate([x, x], axis=1),
    lambda m, x: m.stack([x, x]),
    lambda m, x: m.expand_dims(x, 0),
    lambda m, x: m.squeeze(m.expand_dims(x, 0)),
    lambda m, x: m.broadcast_to(x, (4, 2, 3)),
    lambda m, x: m.ravel(x.T),
    lambda m, x: m.swapaxes(x, 0, 1),
])
def test_numpy_functions_run_on_jiasu_and_return_jiasu_arrays(call):
    host, a = host_and_device()
    result = call(np, a)
    assert isinstance(result, jiasu.Array) and result.device == a.device
    np.testing.assert_array_equal(result.get(), call(np, host))


def test_metadata_functions():
    host, a = host_and_device((2, 3, 4))
    assert np.shape(a) == host.shape and np.ndim(a) == 3 and np.size(a) == 24 and np.size(a, 1) == 3


def test_a_numpy_function_jiasu_lacks_is_numpys_type_error():
    _, a = host_and_device()
    with pytest.raises(TypeError, match="no implementation found for 'numpy.linalg.norm'"):
        np.linalg.norm(a)


def test_mixing_in_a_numpy_array_is_a_type_error_not_a_copy():
    host, a = host_and_device()
    with pytest.raises(TypeError, match="jiasu does not copy implicitly"):
        np.concatenate([a, host])


def test_explicit_conversion_still_copies():
    host, a = host_and_device()
    np.testing.assert_array_equal(np.asarray(a), host)


def test_numpy_matmul_and_dot_run_on_jiasu():
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    a, b = jiasu.asarray(host), jiasu.asarray(host.T.copy())
    for result, expected in ((np.matmul(a, b), host @ host.T), (np.dot(a, b), np.dot(host, host.T))):
        assert isinstance(result, jiasu.Array)
        np.testing.assert_allclose(result.get(), expected)
    out = jiasu.empty((3, 3))
    assert np.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out.get(), host @ host.T)


@pytest.mark.parametrize("call", [
    lambda m, x: m.add(x, x),
    lambda m, x: m.multiply(x, 2),
    lambda m, x: m.sqrt(x),
    lambda m, x: m.absolute(-x),
    lambda m, x: m.remainder(x, 4),
    lambda m, x: m.true_divide(x, 3),
    lambda m, x: m.maximum(x, 2.5),
    lambda m, x: m.sum(x, axis=0),
    lambda m, x: m.mean(x),
    lambda m, x: m.max(x, axis=1),
    lambda m, x: m.argmax(x),
    lambda m, x: m.add.reduce(x),
    lambda m, x: m.multiply.reduce(x, axis=1),
    lambda m, x: m.add.accumulate(x),
    lambda m, x: m.cumsum(x, axis=1),
])
def test_numpy_ufuncs_and_reductions_run_on_jiasu(call):
    host, a = host_and_device()
    result = call(np, a)
    expected = call(np, host)
    got = result.get() if isinstance(result, jiasu.Array) else result
    if isinstance(result, jiasu.Array):
        assert result.device == a.device
    np.testing.assert_allclose(got, expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype


def test_ufunc_out_and_mixed_inputs():
    host, a = host_and_device()
    out = jiasu.empty_like(a)
    assert np.sqrt(a, out=out) is out
    np.testing.assert_allclose(out.get(), np.sqrt(host))
    with pytest.raises(TypeError):
        np.add(a, host)
    with pytest.raises(TypeError):
        np.add(host, a)
