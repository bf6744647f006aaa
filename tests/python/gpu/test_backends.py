"""Both backends on a GPU machine: a launch runs where its arrays live, arrays move between the CPU and
the GPU on request, and mixing them in one launch is a clear error."""
import numpy as np
import pytest

import jiasu


@jiasu.kernel
def axpy(a, x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_default_backend_is_cuda_with_a_gpu():
    assert jiasu.get_backend() == "cuda"
    assert jiasu.zeros(3).device == jiasu.Device(0)


def test_launch_follows_its_arrays(rng):
    x, y = rng.random(500), rng.random(500)
    expected = 2 * x + y
    gx, gy, gout = jiasu.asarray(x), jiasu.asarray(y), jiasu.empty(500)
    cx, cy, cout = (jiasu.asarray(v, device="cpu") for v in (x, y, np.zeros(500)))
    with jiasu.backend("cpu"):  # GPU arrays still run on the GPU
        axpy[2, 256](2.0, gx, gy, gout)
    jiasu.synchronize(0)
    np.testing.assert_allclose(gout.get(), expected)
    axpy[2, 256](2.0, cx, cy, cout)  # CPU arrays run on the CPU whatever the backend
    assert cout.device == jiasu.Device("cpu")
    np.testing.assert_allclose(cout.get(), expected)
    out = np.zeros(500)
    axpy[2, 256](2.0, x, y, out, device="cpu")
    np.testing.assert_allclose(out, expected)


def test_arrays_move_between_devices(rng):
    x = rng.random(100).astype(np.float32)
    c = jiasu.asarray(x, device="cpu")
    g = jiasu.asarray(c, device="cuda")
    assert g.device == jiasu.Device(0) and c.device == jiasu.Device("cpu")
    back = jiasu.asarray(g, device="cpu")
    np.testing.assert_array_equal(back.get(), x)
    assert jiasu.asarray(g) is g or jiasu.asarray(g).ptr == g.ptr  # already there: no copy


def test_mixing_cpu_and_gpu_arrays_is_an_error(rng):
    x = rng.random(64)
    g = jiasu.asarray(x)
    c = jiasu.asarray(x, device="cpu")
    with pytest.raises(jiasu.InvalidArrayError, match="CPU array but the launch runs on GPU"):
        axpy[1, 64](1.0, g, c, jiasu.empty(64))
    with pytest.raises(jiasu.InvalidArrayError, match="lives on GPU 0 but the launch runs on the CPU"):
        axpy[1, 64](1.0, c, g, jiasu.empty(64, device="cpu"))


def test_raw_kernels_refuse_the_cpu_backend(cpu_backend):
    kernel = jiasu.RawKernel('extern "C" __global__ void f(float* x) { x[0] = 1; }', "f")
    with pytest.raises(jiasu.CudaError, match="active backend is 'cpu'"):
        kernel((1,), (1,), (jiasu.zeros(1, device="cuda"),))
    jiasu.set_backend("cuda")
    g = jiasu.zeros(1, dtype=np.float32)
    kernel((1,), (1,), (g,))
    assert g.get()[0] == 1
    with pytest.raises(jiasu.InvalidArrayError, match="is a CPU array"):
        kernel((1,), (1,), (jiasu.zeros(1, dtype=np.float32, device="cpu"),))
