"""jiasu.graph: CUDA graphs recorded from Python kernels, RawKernels and array operations; replay and update
checked against the same work launched eagerly and against NumPy float64."""
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu

N = 4099


@jiasu.kernel
def axpb(y, a, b):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = y[i] * a + b


SCALE_SOURCE = r"""
extern "C" __global__ void scale(float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}
"""


def blocks(n, threads=256):
    return (n + threads - 1) // threads


def test_a_sequence_of_python_kernels_replays_like_eager_launches():
    rng = np.random.default_rng(1)
    host = rng.standard_normal(N).astype(np.float32)
    steps = [(1.0 + 0.01 * k, 0.1 * k) for k in range(20)]
    eager = jiasu.asarray(host)
    for a, b in steps:
        axpb[blocks(N), 256](eager, np.float32(a), np.float32(b))
    y = jiasu.asarray(host)
    with jiasu.graph() as g:
        for a, b in steps:
            axpb[blocks(N), 256](y, np.float32(a), np.float32(b))
    assert g.nodes == len(steps)
    np.testing.assert_array_equal(y.get(), host)  # recorded, not run
    g.replay()
    np.testing.assert_array_equal(y.get(), eager.get())
    reference = host.astype(np.float64)
    for _ in range(2):
        g.replay()
    for _ in range(3):
        for a, b in steps:
            reference = reference * np.float32(a) + np.float32(b)
    np.testing.assert_allclose(y.get(), reference, rtol=1e-4, atol=1e-3)


def test_raw_kernels_and_array_operations_are_recorded():
    rng = np.random.default_rng(2)
    x_host, w_host = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 32)).astype(np.float32)
    x, w = jiasu.asarray(x_host), jiasu.asarray(w_host)
    scale = jiasu.RawKernel(SCALE_SOURCE, "scale")
    out = jiasu.empty((64, 32), np.float32)
    with jiasu.graph() as g:
        scale(blocks(x.size), 256, (x, np.float32(0.5), np.int32(x.size)))
        product = jiasu.matmul(x, w)           # cuBLASLt, into memory the graph keeps
        shifted = jiasu.exp(product * 0.01) + 1.0
        jiasu.multiply(shifted, 2.0, out=out)
        total = jiasu.sum(out, axis=1)
    assert g.nodes >= 5
    g.replay()
    expected = 2.0 * (np.exp(((x_host.astype(np.float64) * 0.5) @ w_host) * 0.01) + 1.0)
    np.testing.assert_allclose(out.get(), expected, rtol=2e-3)
    np.testing.assert_allclose(total.get(), expected.sum(axis=1), rtol=2e-3)
    # New inputs, written outside the graph: the replay reads them.
    x.set(x_host * 2)
    g.replay()
    expected = 2.0 * (np.exp(((x_host.astype(np.float64) * 2 * 0.5) @ w_host) * 0.01) + 1.0)
    np.testing.assert_allclose(out.get(), expected, rtol=2e-3)
    del product, shifted  # the graph keeps the memory it uses
    g.replay()
    np.testing.assert_allclose(total.get(), out.get().astype(np.float64).sum(axis=1), rtol=1e-4)


def test_update_records_new_arrays_and_scalars_in_place():
    host = np.arange(N, dtype=np.float32)
    first, second = jiasu.asarray(host), jiasu.asarray(-host)
    g = jiasu.graph()
    with g:
        axpb[blocks(N), 256](first, np.float32(2), np.float32(1))
    g.replay()
    np.testing.assert_array_equal(first.get(), host * 2 + 1)
    with g.update():
        axpb[blocks(N), 256](second, np.float32(3), np.float32(-1))
    assert g.updated and g.nodes == 1
    g.replay()
    np.testing.assert_array_equal(second.get(), -host * 3 - 1)
    np.testing.assert_array_equal(first.get(), host * 2 + 1)  # no longer part of the graph
    with g:  # another shape of work: instantiated anew
        axpb[blocks(N), 256](first, np.float32(1), np.float32(1))
        axpb[blocks(N), 256](second, np.float32(1), np.float32(1))
    assert not g.updated and g.nodes == 2
    g.replay()
    np.testing.assert_array_equal(first.get(), host * 2 + 2)
    np.testing.assert_array_equal(second.get(), -host * 3)
    with g.update():  # the same two kernels, whose second may overlap the first: updated in place
        axpb[blocks(N), 256](first, np.float32(2), np.float32(0))
        axpb[blocks(N), 256](first, np.float32(1), np.float32(-1))
    assert g.updated and g.nodes == 2
    g.replay()
    np.testing.assert_array_equal(first.get(), (host * 2 + 2) * 2 - 1)
    np.testing.assert_array_equal(second.get(), -host * 3)


def test_python_kernels_after_fills_raw_kernels_and_array_operations():
    """Each Python kernel recorded by jiasu.graph() may start as the node before it ends (on compute capability
    9.0 and up); whatever that node is, the kernel must see its results: a fill, a RawKernel, an array operation
    or another Python kernel, each reading what the one before wrote."""
    host = np.linspace(-1, 1, N).astype(np.float32)
    x = jiasu.asarray(host)
    scale = jiasu.RawKernel(SCALE_SOURCE, "scale")

    def work():
        y = jiasu.zeros(N, np.float32)
        axpb[blocks(N), 256](y, np.float32(1), np.float32(2))          # after a fill: 2
        scale(blocks(N), 256, (y, np.float32(3), np.int32(N)))          # 6
        axpb[blocks(N), 256](y, np.float32(0.5), np.float32(1))        # after a RawKernel: 4
        z = y * x                                                        # 4x
        axpb[blocks(N), 256](z, np.float32(2), np.float32(-1))         # after an array operation: 8x - 1
        axpb[blocks(N), 256](z, np.float32(-1), np.float32(0))         # after a Python kernel: 1 - 8x
        return z

    eager = work().get()
    np.testing.assert_allclose(eager, 1 - 8 * host.astype(np.float64), rtol=1e-6, atol=1e-6)
    with jiasu.graph() as g:
        z = work()
    for _ in range(3):
        g.replay()
        np.testing.assert_array_equal(z.get(), eager)


def test_a_graph_on_a_stream_of_its_own():
    host = np.arange(N, dtype=np.float32)
    y = jiasu.asarray(host)
    stream = jiasu.Stream(non_blocking=True)
    with jiasu.graph(stream=stream) as g:
        axpb[blocks(N), 256](y, np.float32(2), np.float32(0))   # the default stream: recorded on `stream`
        axpb[blocks(N), 256, stream](y, np.float32(1), np.float32(3))
    g.replay()
    stream.synchronize()
    np.testing.assert_array_equal(y.get(), host * 2 + 3)
    g.replay(stream=jiasu.Stream())
    jiasu.synchronize()
    np.testing.assert_array_equal(y.get(), (host * 2 + 3) * 2 + 3)


def test_conv2d_on_cudnn_is_recorded():
    rng = np.random.default_rng(3)
    x = jiasu.asarray(rng.standard_normal((2, 3, 16, 16)).astype(np.float32))
    w = jiasu.asarray(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    eager = jiasu.nn.conv2d(x, w, padding=1).get()
    with jiasu.graph() as g:
        y = jiasu.nn.conv2d(x, w, padding=1)
    g.replay()
    np.testing.assert_allclose(y.get(), eager, rtol=1e-5, atol=1e-5)


def test_what_cannot_be_recorded_is_refused_and_leaves_the_program_working():
    y = jiasu.asarray(np.ones(N, np.float32))
    g = jiasu.graph()
    with pytest.raises(jiasu.CudaError, match="copy from the GPU to host memory cannot be part of a CUDA graph"):
        with g:
            axpb[blocks(N), 256](y, np.float32(2), np.float32(0))
            y.get()
    with pytest.raises(jiasu.CudaError, match="copy from host memory to the GPU"):
        with jiasu.graph():
            jiasu.asarray(np.ones(4))
    with pytest.raises(jiasu.CudaError, match="waiting for the GPU"):
        with jiasu.graph():
            jiasu.synchronize()
    with pytest.raises(ValueError, match="nothing to replay"):
        g.replay()
    axpb[blocks(N), 256](y, np.float32(2), np.float32(0))
    np.testing.assert_array_equal(y.get(), np.full(N, 2, np.float32))  # the recorded launch never ran
