"""jiasu.benchmark on the CPU backend: wall-clock times only (tests/python/gpu/test_benchmark_gpu.py times a GPU)."""
import time

import numpy as np
import pytest

import jiasu


@pytest.fixture(autouse=True)
def cpu_backend():
    with jiasu.backend("cpu"):
        yield


def sleep_2ms():
    time.sleep(0.002)


def test_times_and_statistics():
    r = jiasu.benchmark(sleep_2ms, n_repeat=5, n_warmup=1)
    assert isinstance(r, jiasu.BenchmarkResult)
    assert r.gpu is None
    assert r.device == jiasu.Device("cpu")
    times = r.cpu.times
    assert isinstance(times, np.ndarray) and times.dtype == np.float64 and times.shape == (5,)
    assert len(r.cpu) == 5
    assert (times >= 2.0).all(), times  # a 2 ms sleep takes at least 2 ms
    assert (times < 2000.0).all(), times
    assert r.cpu.min <= r.cpu.median <= r.cpu.max
    assert r.cpu.min <= r.cpu.mean <= r.cpu.max
    assert r.cpu.min == times.min() and r.cpu.max == times.max()
    assert r.cpu.median == pytest.approx(np.median(times), rel=1e-12)
    assert r.cpu.mean == pytest.approx(np.mean(times), rel=1e-12)
    assert r.cpu.std == pytest.approx(np.std(times), rel=1e-9, abs=1e-12)


def test_calls_and_arguments():
    calls = []

    def work(a, b, *, scale):
        calls.append((a, b, scale))

    r = jiasu.benchmark(work, 1, "two", scale=3.0, n_repeat=4, n_warmup=2)
    assert calls == [(1, "two", 3.0)] * 6  # the warm-up calls, then the timed ones
    assert len(r.cpu.times) == 4
    assert (r.cpu.times >= 0).all()
    assert r.name.endswith("work")
    assert repr(r).startswith(r.name + ": CPU median ") and "4 calls" in repr(r), repr(r)
    assert "GPU" not in repr(r)
    assert repr(r.cpu).startswith("Timings(median "), repr(r.cpu)


def test_the_defaults_time_a_kernel_launch():
    @jiasu.kernel
    def fill(out, value):
        i = jiasu.grid(1)
        if i < out.size:
            out[i] = value

    out = jiasu.zeros(1000, dtype=np.float32)
    r = jiasu.benchmark(fill[8, 128], out, 2.5)
    assert len(r.cpu.times) == 100 and r.gpu is None
    np.testing.assert_array_equal(out.get(), np.full(1000, 2.5, dtype=np.float32))
    assert r.cpu.min > 0


def test_no_warm_up():
    calls = []
    jiasu.benchmark(lambda: calls.append(1), n_repeat=1, n_warmup=0)
    assert calls == [1]


@pytest.mark.parametrize("kwargs, error", [
    ({"n_repeat": 0}, ValueError),
    ({"n_repeat": -3}, ValueError),
    ({"n_repeat": 2**40}, ValueError),
    ({"n_repeat": 1.5}, TypeError),
    ({"n_repeat": True}, TypeError),
    ({"n_repeat": "10"}, TypeError),
    ({"n_warmup": -1}, ValueError),
    ({"n_warmup": 2.0}, TypeError),
    ({"flush_l2": 1}, TypeError),
])
def test_bad_options(kwargs, error):
    calls = []
    with pytest.raises(error) as excinfo:
        jiasu.benchmark(lambda: calls.append(1), **kwargs)
    assert next(iter(kwargs)) in str(excinfo.value)
    assert calls == []  # refused before any call


def test_not_callable():
    with pytest.raises(TypeError, match="callable"):
        jiasu.benchmark(42)


def test_errors_of_the_function_pass_through():
    def fails():
        raise KeyError("from the function")

    with pytest.raises(KeyError, match="from the function"):
        jiasu.benchmark(fails, n_repeat=3)


def test_flush_l2_is_ignored_on_the_cpu():
    r = jiasu.benchmark(lambda: None, n_repeat=3, n_warmup=0, flush_l2=True)
    assert len(r.cpu.times) == 3 and r.gpu is None
