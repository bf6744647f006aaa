"""free() of a GPU array while DLPack or CUDA Array Interface consumers use its memory: the consumers keep
reading and writing the array's own values (the memory goes back only when they are done), while the
array itself raises. Freed memory would be handed out again by the next allocations of the same size."""
import numpy as np
import pytest

import jiasu

N = 1 << 16


def values():
    return np.arange(N, dtype=np.float32) * 0.5 + 1


def churn():
    junk = [jiasu.full(N, -7.0, dtype=np.float32) for _ in range(8)]
    jiasu.synchronize()
    return junk


class ThroughDLPack:
    """A DLPack producer that hands out `a`'s capsule and keeps nothing else of it."""

    def __init__(self, a):
        self.producer = a

    def __dlpack__(self, **options):
        capsule = self.producer.__dlpack__(**options)
        del self.producer
        return capsule

    def __dlpack_device__(self):
        return (2, 0)


class ThroughInterface:
    """A CUDA Array Interface consumer's way: it holds the producer."""

    def __init__(self, a):
        self.producer, self.__cuda_array_interface__ = a, a.__cuda_array_interface__


@pytest.mark.parametrize("wrap", [ThroughDLPack, ThroughInterface])
def test_jiasu_consumers_outlive_free(wrap):
    a = jiasu.asarray(values())
    b = jiasu.asarray(wrap(a))
    a.free()
    junk = churn()
    np.testing.assert_array_equal(b.get(), values())
    b[:] = np.full(N, -1.0, np.float32)
    np.testing.assert_array_equal(b.get(), np.full(N, -1.0, np.float32))
    for j in junk:
        np.testing.assert_array_equal(j.get(), np.full(N, -7.0, np.float32))
    with pytest.raises(jiasu.InvalidArrayError):
        a.get()


def test_torch_consumers_outlive_free(torch):
    for consume in (torch.from_dlpack, lambda a: torch.as_tensor(a, device="cuda")):
        a = jiasu.asarray(values())
        t = consume(a)
        a.free()
        churn()
        np.testing.assert_array_equal(t.cpu().numpy(), values())
        t.fill_(-1.0)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(t.cpu().numpy(), np.full(N, -1.0, np.float32))


def test_cupy_consumers_outlive_free(cupy):
    for consume in (cupy.from_dlpack, cupy.asarray):
        a = jiasu.asarray(values())
        c = consume(a)
        a.free()
        churn()
        np.testing.assert_array_equal(cupy.asnumpy(c), values())


def test_freed_gpu_arrays_refuse_new_exports():
    a = jiasu.asarray(values())
    a.free()
    with pytest.raises(jiasu.InvalidArrayError):
        a.__dlpack__()
    with pytest.raises(jiasu.InvalidArrayError):
        a.__cuda_array_interface__


def test_gpu_arrays_have_no_host_buffer():
    a = jiasu.asarray(values())
    with pytest.raises(BufferError, match="GPU"):
        memoryview(a)
    np.testing.assert_array_equal(np.asarray(a), values())  # NumPy copies it instead
