"""jiasu.benchmark on a GPU: event times of the work a call queues on the default stream, beside the host's times."""
import numpy as np
import pytest

import jiasu

# Spins for `ns` nanoseconds of the GPU's global timer: a kernel of known duration whatever the clocks.
SPIN_SOURCE = r"""
extern "C" __global__ void spin(unsigned long long ns, int* done) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
    if (threadIdx.x == 0) atomicAdd(done, 1);
}
"""


@pytest.fixture(scope="module")
def spin():
    return jiasu.RawKernel(SPIN_SOURCE, "spin")


def test_gpu_time_of_a_kernel_of_known_duration(spin):
    done = jiasu.zeros(1, dtype=np.int32)
    r = jiasu.benchmark(spin, 1, 32, (np.uint64(2_000_000), done), n_repeat=10, n_warmup=2)
    jiasu.synchronize()
    assert int(done.get()[0]) == 12  # every call ran once
    assert r.device == jiasu.get_device()
    gpu = r.gpu.times
    assert gpu.shape == (10,) and gpu.dtype == np.float64
    assert (gpu >= 1.99).all(), gpu  # 2 ms of spinning (the events resolve about 0.5 us)
    assert (gpu < 100).all(), gpu
    assert r.gpu.min <= r.gpu.median <= r.gpu.max
    assert r.gpu.std == pytest.approx(np.std(gpu), rel=1e-9, abs=1e-12)
    # The launch returns at once: the host's time of a call is far below the kernel's.
    assert r.cpu.median < r.gpu.median, (r.cpu, r.gpu)
    assert "GPU-" in repr(r), repr(r)


def test_each_call_is_timed_alone(spin):
    # The GPU is waited for after each call: a call's events do not include the previous call's work (which would
    # make it nearly twice as long). 20 ms calls leave room for other processes' kernels on a shared GPU.
    done = jiasu.zeros(1, dtype=np.int32)
    r = jiasu.benchmark(spin, 1, 32, (np.uint64(20_000_000), done), n_repeat=3, n_warmup=1)
    assert (r.gpu.times >= 19.99).all() and (r.gpu.times < 38).all(), r.gpu.times


def test_flush_l2(spin):
    done = jiasu.zeros(1, dtype=np.int32)
    r = jiasu.benchmark(spin, 1, 32, (np.uint64(200_000), done), n_repeat=3, n_warmup=1, flush_l2=True)
    jiasu.synchronize()
    assert int(done.get()[0]) == 4
    # The flush runs before the start event: it is not counted.
    assert (r.gpu.times >= 0.199).all() and (r.gpu.times < 5).all(), r.gpu.times


def test_array_operations_on_the_default_stream():
    x = jiasu.asarray(np.random.default_rng(0).random(1 << 20))
    r = jiasu.benchmark(jiasu.sqrt, x, n_repeat=20)
    assert r.gpu.min > 0
    np.testing.assert_allclose(jiasu.sqrt(x).get(), np.sqrt(x.get()))


def test_cpu_backend_on_a_gpu_machine():
    with jiasu.backend("cpu"):
        r = jiasu.benchmark(lambda: None, n_repeat=3)
    assert r.gpu is None and r.device == jiasu.Device("cpu")
