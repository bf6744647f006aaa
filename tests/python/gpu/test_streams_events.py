"""Streams, events, device synchronisation, memory information and asynchronous copies."""
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu

KERNELS_SOURCE = r"""
// Every thread spins for `cycles` clock cycles, then writes: slow enough to observe ordering.
extern "C" __global__ void slow_fill(float* x, float value, int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value + (float)i;
}
extern "C" __global__ void plus_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
"""

# About 50 ms at the H200's top clock (and longer at any lower clock).
LONG_SPIN = 100_000_000
SHORT_SPIN = 20_000_000  # about 10 ms
N = 4096
THREADS = 256


@pytest.fixture
def kernels():
    mod = jiasu.SourceModule(KERNELS_SOURCE)
    return mod.get_function("slow_fill"), mod.get_function("plus_one")


def fill_expected(value, n=N):
    return np.float32(value) + np.arange(n, dtype=np.float32)


def test_stream_basics():
    for s in (jiasu.Stream(), jiasu.Stream(non_blocking=True), jiasu.Stream(priority=-1)):
        s.synchronize()
        assert s.done
        assert isinstance(s.ptr, int) and s.ptr != 0
        assert s.device in (0, jiasu.Device(0))
    a, b = jiasu.Stream(), jiasu.Stream()  # both alive: a destroyed stream's handle can be reused
    assert a.ptr != b.ptr


def test_stream_done_while_busy(kernels):
    slow_fill, _ = kernels
    s = jiasu.Stream(non_blocking=True)
    x = jiasu.full(N, np.nan, dtype=np.float32)
    jiasu.synchronize()
    slow_fill(N // THREADS, THREADS, (x, 3.0, N, LONG_SPIN), stream=s)
    assert not s.done
    s.synchronize()
    assert s.done
    np.testing.assert_array_equal(x.get(), fill_expected(3.0))


@pytest.mark.parametrize("make_event", ["Event(timing=False)", "Event()", "Stream.record()"])
def test_wait_event_orders_two_streams(kernels, make_event):
    slow_fill, plus_one = kernels
    s1 = jiasu.Stream(non_blocking=True)
    s2 = jiasu.Stream(non_blocking=True)
    x = jiasu.full(N, np.nan, dtype=np.float32)
    y = jiasu.full(N, np.nan, dtype=np.float32)
    jiasu.synchronize()
    slow_fill(N // THREADS, THREADS, (x, 10.0, N, LONG_SPIN), stream=s1)
    if make_event == "Stream.record()":
        e = s1.record()
    else:
        e = jiasu.Event(timing=make_event == "Event()")
        e.record(s1)
    s2.wait_event(e)
    # Without the wait, plus_one would read x long before slow_fill has written it.
    plus_one(N // THREADS, THREADS, (x, y, N), stream=s2)
    s2.synchronize()
    assert e.done
    np.testing.assert_array_equal(y.get(), fill_expected(10.0) + np.float32(1))


def test_event_elapsed_time_across_busy_kernel(kernels):
    slow_fill, _ = kernels
    x = jiasu.empty(N, dtype=np.float32)
    for stream in (None, jiasu.Stream()):
        start, end = jiasu.Event(), jiasu.Event()
        start.record(stream)
        slow_fill(N // THREADS, THREADS, (x, 0.0, N, SHORT_SPIN), stream=stream)
        end.record(stream)
        end.synchronize()
        assert end.done and start.done
        ms = start.elapsed_time(end)
        assert isinstance(ms, float)
        assert ms > 1.0, ms  # 20 million cycles take ~10 ms at 2 GHz
        assert ms < 60_000
        assert start.ptr != 0 and start.ptr != end.ptr


def test_event_recorded_in_reverse_order(kernels):
    slow_fill, _ = kernels
    x = jiasu.empty(N, dtype=np.float32)
    start, end = jiasu.Event(), jiasu.Event()
    end.record()
    slow_fill(N // THREADS, THREADS, (x, 0.0, N, SHORT_SPIN))
    start.record()
    start.synchronize()
    try:
        ms = start.elapsed_time(end)
    except (jiasu.JiasuError, ValueError):
        pass
    else:
        assert ms < 0


def test_elapsed_time_needs_two_recorded_events():
    recorded = jiasu.Event()
    recorded.record()
    recorded.synchronize()
    never = jiasu.Event()
    with pytest.raises(ValueError):
        never.elapsed_time(recorded)
    with pytest.raises(ValueError):
        recorded.elapsed_time(never)


def test_elapsed_time_needs_timing_events():
    plain = jiasu.Event(timing=False)
    plain.record()
    plain.synchronize()
    assert plain.done
    timed = jiasu.Event()
    timed.record()
    timed.synchronize()
    with pytest.raises(ValueError):
        plain.elapsed_time(timed)
    with pytest.raises(ValueError):
        timed.elapsed_time(plain)


def test_event_synchronize_waits(kernels):
    slow_fill, _ = kernels
    s = jiasu.Stream(non_blocking=True)
    x = jiasu.full(N, np.nan, dtype=np.float32)
    jiasu.synchronize()
    slow_fill(N // THREADS, THREADS, (x, 5.0, N, LONG_SPIN), stream=s)
    e = jiasu.Event()
    e.record(s)
    assert not e.done
    e.synchronize()
    assert e.done
    np.testing.assert_array_equal(x.get(), fill_expected(5.0))


@pytest.mark.parametrize("how", ["jiasu.synchronize()", "jiasu.synchronize(0)", "Device.synchronize()"])
def test_device_synchronize_waits_for_all_streams(kernels, how):
    slow_fill, _ = kernels
    s = jiasu.Stream(non_blocking=True)
    x = jiasu.full(N, np.nan, dtype=np.float32)
    jiasu.synchronize()
    slow_fill(N // THREADS, THREADS, (x, 7.0, N, LONG_SPIN), stream=s)
    assert not s.done
    if how == "jiasu.synchronize()":
        jiasu.synchronize()
    elif how == "jiasu.synchronize(0)":
        jiasu.synchronize(0)
    else:
        jiasu.Device(0).synchronize()
    assert s.done
    np.testing.assert_array_equal(x.get(), fill_expected(7.0))


def test_memory_info():
    device = jiasu.Device()
    free, total = device.memory_info()
    assert 0 < free <= total
    assert abs(total - device.total_memory) <= 64 << 20


def test_allocating_1gib_reduces_free_memory():
    device = jiasu.Device()
    jiasu.synchronize()
    free_before, _ = device.memory_info()
    if free_before < 3 << 30:
        pytest.skip("less than 3 GiB of device memory free")
    a = jiasu.zeros(1 << 30, dtype=np.uint8)  # zeros() writes every byte
    jiasu.synchronize()
    free_after, _ = device.memory_info()
    # The pool may have held a little freed memory already; 1 GiB cannot all come from there.
    assert free_before - free_after >= 512 << 20
    assert a[0] == 0 and a[-1] == 0 and a[(1 << 29) + 3] == 0
    a.free()
    jiasu.synchronize()


def test_async_copies_on_a_stream(kernels, rng):
    _, plus_one = kernels
    s = jiasu.Stream(non_blocking=True)
    host = rng.standard_normal(N).astype(np.float32)
    pinned_in = jiasu.pinned_empty(N, np.float32)
    pinned_in[...] = host
    pinned_out = jiasu.pinned_empty(N, np.float32)
    pinned_out[...] = np.nan
    x = jiasu.empty(N, dtype=np.float32)
    y = jiasu.full(N, np.nan, dtype=np.float32)
    jiasu.synchronize()
    # Upload, compute and download, all queued on one stream, one synchronize at the end.
    x.set(pinned_in, stream=s)
    plus_one(N // THREADS, THREADS, (x, y, N), stream=s)
    result = y.get(stream=s, out=pinned_out)
    s.synchronize()
    assert result is pinned_out
    np.testing.assert_array_equal(pinned_out, host + np.float32(1))


def test_get_on_stream_after_kernel_on_that_stream(kernels):
    slow_fill, _ = kernels
    s = jiasu.Stream(non_blocking=True)
    x = jiasu.full(N, np.nan, dtype=np.float32)
    out = jiasu.pinned_empty(N, np.float32)
    out[...] = np.nan
    jiasu.synchronize()
    slow_fill(N // THREADS, THREADS, (x, 2.0, N, SHORT_SPIN), stream=s)
    x.get(stream=s, out=out)  # queued behind the kernel
    s.synchronize()
    np.testing.assert_array_equal(out, fill_expected(2.0))
