"""Zero-copy exchange with torch, CuPy and Numba: same pointer both ways, writes visible on both sides,
and the producer kept alive as long as the consumer needs it."""
import gc

import ml_dtypes
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu

N = 4099


def blocks(n, threads):
    return (n + threads - 1) // threads


def same_bytes(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def jiasu_churn(n, dtype=np.float32, count=4):
    """Allocate and fill arrays of the same size: freed memory of that size would be handed out again."""
    return [jiasu.full(n, -1, dtype=dtype) for _ in range(count)]


# ---------------------------------------------------------------- the protocols themselves


def test_cuda_array_interface_contents(rng):
    host = rng.standard_normal((5, 6)).astype(np.float32)
    a = jiasu.asarray(host)
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3
    assert cai["shape"] == (5, 6)
    assert cai["typestr"] == "<f4"
    assert cai["data"] == (a.ptr, False)
    assert cai.get("strides") is None
    v = a[:, ::-2]
    vcai = v.__cuda_array_interface__
    assert vcai["data"][0] == v.ptr
    assert tuple(vcai["strides"]) == host[:, ::-2].strides
    assert a.__dlpack_device__() == (2, 0)
    for dtype, typestr in [(np.bool_, "|b1"), (np.int8, "|i1"), (np.uint16, "<u2"), (np.int64, "<i8"),
                           (np.float16, "<f2"), (np.float64, "<f8"), (np.complex64, "<c8")]:
        assert jiasu.zeros(3, dtype).__cuda_array_interface__["typestr"] == typestr


# ---------------------------------------------------------------- torch


def test_asarray_of_torch_tensor_is_zero_copy(torch, rng, add_kernel):
    t = torch.rand(N, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    a = jiasu.asarray(t)
    assert a.ptr == t.data_ptr()
    assert a.shape == (N,) and a.dtype == np.float32 and a.device == jiasu.Device(0)
    np.testing.assert_array_equal(a.get(), t.cpu().numpy())
    # Written through set(): torch sees it.
    values = rng.standard_normal(N).astype(np.float32)
    a.set(values)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), values)
    # Written by a kernel: torch sees it.
    add_kernel(blocks(N, 256), 256, (a, a, a, N))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), values + values)
    # Written by torch: jiasu sees it.
    t.fill_(0.5)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.get(), np.full(N, 0.5, np.float32))


def test_asarray_keeps_torch_tensor_alive(torch):
    t = torch.rand(N, device="cuda", dtype=torch.float32)
    expected = t.cpu().numpy()
    ptr = t.data_ptr()
    a = jiasu.asarray(t)
    del t
    gc.collect()
    # torch's caching allocator hands a freed block of this size straight out again.
    junk = [torch.full((N,), -1.0, device="cuda") for _ in range(4)]
    torch.cuda.synchronize()
    assert all(j.data_ptr() != ptr for j in junk)
    assert a.ptr == ptr
    np.testing.assert_array_equal(a.get(), expected)


def test_free_of_a_torch_backed_array_leaves_the_tensor(torch):
    t = torch.arange(N, device="cuda", dtype=torch.float32)
    a = jiasu.asarray(t)
    a.free()
    with pytest.raises(jiasu.InvalidArrayError):
        a.get()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(N, dtype=np.float32))


def test_torch_from_dlpack_of_jiasu_array(torch, rng):
    host = rng.standard_normal((7, 9)).astype(np.float32)
    a = jiasu.asarray(host)
    ptr = a.ptr
    t = torch.from_dlpack(a)
    assert t.is_cuda and t.dtype == torch.float32 and tuple(t.shape) == (7, 9)
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(t.cpu().numpy(), host)
    t.add_(1)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.get(), host + np.float32(1))
    # The jiasu array stays alive while the tensor lives.
    del a
    gc.collect()
    junk = jiasu_churn(7 * 9)
    assert all(j.ptr != ptr for j in junk)
    jiasu.synchronize()
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(t.cpu().numpy(), host + np.float32(1))


def test_torch_as_tensor_via_cuda_array_interface(torch, rng):
    host = rng.standard_normal((5, 11)).astype(np.float64)
    a = jiasu.asarray(host)
    ptr = a.ptr
    t = torch.as_tensor(a, device="cuda")
    assert t.is_cuda and t.dtype == torch.float64
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(t.cpu().numpy(), host)
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.get(), host * 2)
    del a
    gc.collect()
    junk = jiasu_churn(5 * 11, np.float64)
    assert all(j.ptr != ptr for j in junk)
    jiasu.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), host * 2)


def test_strided_jiasu_views_into_torch(torch, rng):
    host = rng.standard_normal((6, 8)).astype(np.float32)
    a = jiasu.asarray(host)
    v = a[1:, ::2]
    expected = host[1:, ::2]
    for t in (torch.from_dlpack(v), torch.as_tensor(v, device="cuda")):
        assert t.data_ptr() == v.ptr
        assert tuple(t.stride()) == tuple(s // 4 for s in expected.strides)
        np.testing.assert_array_equal(t.cpu().numpy(), expected)


def test_bfloat16_with_torch_both_ways(torch, rng):
    # torch -> jiasu: DLPack keeps the type (the CUDA Array Interface has no bfloat16).
    t = torch.randn(64, 3, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    a = jiasu.asarray(t)
    assert a.dtype == np.dtype(ml_dtypes.bfloat16)
    assert a.ptr == t.data_ptr() and a.shape == (64, 3)
    torch_bits = t.view(torch.int16).cpu().numpy().view(np.uint16)
    assert np.array_equal(a.get().view(np.uint16), torch_bits)
    b = jiasu.from_dlpack(t)
    assert b.dtype == np.dtype(ml_dtypes.bfloat16) and b.ptr == t.data_ptr()
    # jiasu -> torch.
    host = rng.standard_normal((4, 33)).astype(ml_dtypes.bfloat16)
    j = jiasu.asarray(host)
    t2 = torch.from_dlpack(j)
    assert t2.dtype == torch.bfloat16 and t2.data_ptr() == j.ptr
    assert np.array_equal(t2.view(torch.int16).cpu().numpy().view(np.uint16), host.view(np.uint16))


def test_noncontiguous_torch_views(torch, rng):
    base = torch.randn(6, 8, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    views = {
        "every other column": base[:, ::2],
        "transposed": base.t(),
        "column with offset": base[1:, 3],
        "sub-block": base[2:5, 1:7],
    }
    for name, v in views.items():
        a = jiasu.asarray(v)
        assert a.ptr == v.data_ptr(), name
        assert a.shape == tuple(v.shape), name
        assert a.strides == tuple(s * 4 for s in v.stride()), name
        np.testing.assert_array_equal(a.get(), v.cpu().numpy(), err_msg=name)
    # Writing into a strided torch view through jiasu touches exactly the view's elements.
    before = base.cpu().numpy()
    a = jiasu.asarray(base[:, ::2])
    values = rng.standard_normal((6, 4)).astype(np.float32)
    a[...] = values
    torch.cuda.synchronize()
    expected = before.copy()
    expected[:, ::2] = values
    np.testing.assert_array_equal(base.cpu().numpy(), expected)


def test_torch_cpu_tensor_through_dlpack_is_a_cpu_array(torch):
    t = torch.arange(10, dtype=torch.float32)
    view = jiasu.from_dlpack(t)  # host memory: a CPU-device array over the same bytes
    assert view.device == jiasu.Device("cpu")
    assert view.ptr == t.data_ptr()
    t[3] = 42
    np.testing.assert_array_equal(view.get()[:4], [0, 1, 2, 42])
    # asarray copies host tensors to the GPU (the active backend here).
    a = jiasu.asarray(t)
    assert a.device == jiasu.Device(0)
    np.testing.assert_array_equal(a.get(), t.numpy())


def test_torch_requires_grad_tensor(torch):
    t = torch.rand(100, device="cuda", requires_grad=True)
    # torch refuses to export a tensor that requires grad; the error must say so.
    with pytest.raises((TypeError, RuntimeError)) as info:
        jiasu.asarray(t)
    assert "grad" in str(info.value) or "detach" in str(info.value)
    # The detached tensor is the same memory and comes through without a copy.
    d = t.detach()
    a = jiasu.asarray(d)
    assert a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.get(), d.cpu().numpy())


def test_torch_requires_grad_tensor_from_dlpack(torch):
    t = torch.rand(100, device="cuda", requires_grad=True)
    try:
        a = jiasu.from_dlpack(t)
    except (TypeError, RuntimeError) as error:
        # Refusing is fine, but with a message that points at the cause.
        assert "grad" in str(error) or "detach" in str(error), str(error)
    else:
        assert a.ptr == t.data_ptr()
        np.testing.assert_array_equal(a.get(), t.detach().cpu().numpy())


# ---------------------------------------------------------------- CuPy


def test_cupy_asarray_of_jiasu_array(cupy, rng):
    host = rng.standard_normal((9, 10)).astype(np.float32)
    a = jiasu.asarray(host)
    ptr = a.ptr
    c = cupy.asarray(a)
    assert c.data.ptr == ptr
    assert c.shape == (9, 10) and c.dtype == np.float32
    np.testing.assert_array_equal(cupy.asnumpy(c), host)
    c *= 2
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(a.get(), host * 2)
    del a
    gc.collect()
    junk = jiasu_churn(90)
    assert all(j.ptr != ptr for j in junk)
    jiasu.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(c), host * 2)


def test_cupy_from_dlpack_of_jiasu_array(cupy, rng):
    host = rng.standard_normal(N).astype(np.float64)
    a = jiasu.asarray(host)
    ptr = a.ptr
    c = cupy.from_dlpack(a)
    assert c.data.ptr == ptr and c.dtype == np.float64
    np.testing.assert_array_equal(cupy.asnumpy(c), host)
    c += 1
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(a.get(), host + 1)
    del a
    gc.collect()
    junk = jiasu_churn(N, np.float64)
    assert all(j.ptr != ptr for j in junk)
    jiasu.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(c), host + 1)


def test_jiasu_asarray_of_cupy_array(cupy, rng, add_kernel):
    host = rng.standard_normal(N).astype(np.float32)
    c = cupy.asarray(host)
    cupy.cuda.Device().synchronize()
    a = jiasu.asarray(c)
    assert a.ptr == c.data.ptr and a.dtype == np.float32 and a.shape == (N,)
    np.testing.assert_array_equal(a.get(), host)
    add_kernel(blocks(N, 256), 256, (a, a, a, N))
    jiasu.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(c), host + host)
    ptr = c.data.ptr
    del c
    gc.collect()
    junk = [cupy.full(N, -1.0, dtype=cupy.float32) for _ in range(4)]
    cupy.cuda.Device().synchronize()
    assert all(j.data.ptr != ptr for j in junk)
    np.testing.assert_array_equal(a.get(), host + host)


@pytest.mark.parametrize("step", [2, -2])
def test_noncontiguous_cupy_view(cupy, rng, step):
    host = rng.standard_normal((6, 8)).astype(np.float32)
    c = cupy.asarray(host)
    v = c[:, ::step]
    cupy.cuda.Device().synchronize()
    a = jiasu.asarray(v)
    assert a.ptr == v.data.ptr
    assert a.strides == v.strides
    np.testing.assert_array_equal(a.get(), host[:, ::step])


# ---------------------------------------------------------------- Numba


def test_numba_as_cuda_array_of_jiasu_array(numba_cuda, rng):
    host = rng.standard_normal((12, 5)).astype(np.float32)
    a = jiasu.asarray(host)
    assert numba_cuda.is_cuda_array(a)
    d = numba_cuda.as_cuda_array(a)
    assert d.__cuda_array_interface__["data"][0] == a.ptr
    assert d.shape == (12, 5)
    np.testing.assert_array_equal(d.copy_to_host(), host)
    new = rng.standard_normal((12, 5)).astype(np.float32)
    d.copy_to_device(new)
    numba_cuda.synchronize()
    np.testing.assert_array_equal(a.get(), new)


def test_jiasu_asarray_of_numba_device_array(numba_cuda, rng):
    host = rng.standard_normal(N).astype(np.float64)
    d = numba_cuda.to_device(host)
    numba_cuda.synchronize()
    a = jiasu.asarray(d)
    assert a.ptr == d.__cuda_array_interface__["data"][0]
    assert a.dtype == np.float64 and a.shape == (N,)
    np.testing.assert_array_equal(a.get(), host)
    values = rng.standard_normal(N)
    a.set(values)
    np.testing.assert_array_equal(d.copy_to_host(), values)
    del d
    gc.collect()
    junk = [numba_cuda.to_device(np.full(N, -1.0)) for _ in range(4)]
    numba_cuda.synchronize()
    np.testing.assert_array_equal(a.get(), values)
    del junk
