"""k.resources(*args) on the CPU backend: what a kernel's source declares (shared and local arrays), and no
registers, constant memory or occupancy (tests/python/gpu/test_resources_gpu.py checks a GPU's account)."""
import numpy as np
import pytest

import jiasu


@jiasu.kernel
def scratch_kernel(x, out):
    tile = jiasu.shared.array(256, jiasu.float32)  # 1024 bytes per block
    pair = jiasu.shared.array((4, 8), jiasu.float64)  # 256 more
    buf = jiasu.local.array(64, jiasu.int32)  # 256 bytes per thread
    i = jiasu.grid(1)
    t = jiasu.threadIdx.x
    buf[t % 64] = t
    tile[t % 256] = 0
    if i < x.size:
        tile[t % 256] = x[i]
    pair[t % 4, t % 8] = 1.0
    jiasu.syncthreads()
    if i < out.size:
        out[i] = tile[(t + 1) % 256] + buf[t % 64] + pair[0, 0]


@jiasu.kernel
def plain_kernel(out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = i


def test_resources_of_the_signature_the_arguments_take():
    x = np.arange(300, dtype=np.float32)
    with jiasu.backend("cpu"):
        r = scratch_kernel.resources(x, np.zeros_like(x))
        assert isinstance(r, jiasu.KernelResources)
        assert r.shared_bytes == 256 * 4 + 4 * 8 * 8
        assert r.local_bytes == 64 * 4
        assert r.registers is None and r.const_bytes is None
        assert r.max_threads_per_block == 1024
        assert r.device == jiasu.Device("cpu")
        assert r.occupancy(256) is None  # the CPU backend has no occupancy
        assert r.occupancy(128, shared_bytes=4096) is None
        text = repr(r)
        assert "registers=None" in text and "shared_bytes=1280" in text and "'cpu'" in text, text
        # The launch compiles the signature it asked about: the dict form lists it.
        out = np.zeros_like(x)
        scratch_kernel[3, 128](x, out)
        np.testing.assert_array_equal(out[:3], [1.0 + 0 + 1, 2.0 + 1 + 1, 3.0 + 2 + 1])
        by_signature = scratch_kernel.resources()
        assert list(by_signature) == [scratch_kernel.specialize(x, out)]
        assert by_signature[scratch_kernel.specialize(x, out)].shared_bytes == 1280


def test_resources_of_a_kernel_without_arrays():
    with jiasu.backend("cpu"):
        r = plain_kernel.resources(np.zeros(8, dtype=np.int64))
        assert (r.shared_bytes, r.local_bytes) == (0, 0)


def test_resources_reject_arguments_the_kernel_cannot_take():
    with jiasu.backend("cpu"):
        with pytest.raises(TypeError):
            plain_kernel.resources(np.zeros(4), 1.0)  # one parameter, two arguments
        with pytest.raises(TypeError):
            plain_kernel.resources("text")
