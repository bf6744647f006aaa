"""`python -m jiasu demo`: the seed article's example. Add two vectors of a million floats with a kernel
written in Python, check the result against NumPy and time it: on a GPU with host and with device arrays,
on the CPU backend (no GPU, or JIASU_BACKEND=cpu) with NumPy arrays used in place.

Exit codes: 0 the demo ran and the result is right; 1 it ran and failed (wrong result or an error);
2 it cannot run here (no GPU and no C++ compiler for the CPU backend).
"""
import statistics
import sys
import time
import warnings

import numpy as np

import jiasu


@jiasu.kernel
def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


N = 1_000_000
THREADS = 256
ROUND_TRIPS = 20
KERNEL_RUNS = 100


def _cache_entries():
    from . import _doctor
    return _doctor._cache()["entries"]


def _median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _speed(ratio):
    return f"{ratio:,.1f}x faster" if ratio >= 1 else f"{1 / ratio:,.1f}x slower"


def _cannot_run(out, error):
    from . import _doctor
    print(f"The demo cannot run here: {type(error).__name__}: {str(error).splitlines()[0]}", file=out)
    print("Here is what jiasu found:\n", file=out)
    _doctor.main(file=out)
    return 2


def _check(result, expected, say):
    """True when result == expected; else says where they differ."""
    if np.array_equal(result, expected):
        say("check", "OK, identical to NumPy's x + y")
        return True
    bad = np.flatnonzero(result != expected)
    i = bad[0]
    say("check", f"FAILED: {len(bad):,} of {len(result):,} elements differ from NumPy "
                 f"(first at i={i}: got {result[i]!r}, expected {expected[i]!r})")
    return False


def run_cpu(n, out, say):
    """The CPU backend: the kernel compiled for the host, NumPy arrays used in place."""
    from . import _core
    compiler = _core.host_compiler()
    say("device", f"CPU backend, {_core.cpu_threads()} threads ({compiler['identity']})")
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    expected = x + y
    result = np.full_like(x, np.nan)
    blocks = (n + THREADS - 1) // THREADS
    cached_before = _cache_entries()
    t0 = time.perf_counter()
    add[blocks, THREADS](x, y, result)
    first_ms = (time.perf_counter() - t0) * 1e3
    how = "compiled with the C++ compiler" if _cache_entries() > cached_before else "loaded from the disk cache"
    say("first call", f"{first_ms:.1f} ms ({how}, then run)")
    if not _check(result, expected, say):
        return 1
    kernel_ms = _median_ms(lambda: add[blocks, THREADS](x, y, result), ROUND_TRIPS)
    numpy_ms = _median_ms(lambda: np.add(x, y, out=result), ROUND_TRIPS)
    say("kernel", f"{kernel_ms:.2f} ms = {12 * n / (kernel_ms * 1e-3) / 1e9:,.1f} GB/s  (NumPy arrays in place; "
                  f"median of {ROUND_TRIPS})")
    say("NumPy", f"{numpy_ms:.2f} ms  (np.add(x, y, out=...); median of {ROUND_TRIPS})")
    print(f"\nOK: the kernel on the CPU backend is {_speed(numpy_ms / kernel_ms)} than NumPy "
          "(on a GPU it runs unchanged).", file=out)
    return 0


def run(n=N, out=None):
    """Run the demo, printing to `out` (stdout); returns the exit code."""
    out = out or sys.stdout

    def say(name, value):
        print(f"{name + ':':<18}{value}", file=out)

    try:
        backend = jiasu.get_backend()
        if backend == "cpu":
            from . import _core
            _core.host_compiler()
    except jiasu.JiasuError as error:
        return _cannot_run(out, error)
    print(f"jiasu {jiasu.__version__} demo: out[i] = x[i] + y[i] for {n:,} float32", file=out)
    if backend == "cpu":
        try:
            return run_cpu(n, out, say)
        except jiasu.JiasuError as error:
            print(f"\nThe demo failed: {type(error).__name__}: {error}", file=out)
            return 1

    device = jiasu.get_device()
    say("device", f"{device.name} ({device.arch})")

    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    expected = x + y
    blocks = (n + THREADS - 1) // THREADS
    try:
        xd, yd, outd = jiasu.asarray(x), jiasu.asarray(y), jiasu.empty(n, jiasu.float32)
        cached_before = _cache_entries()
        t0 = time.perf_counter()
        add[blocks, THREADS](xd, yd, outd)
        jiasu.synchronize()
        first_ms = (time.perf_counter() - t0) * 1e3
        how = "compiled with NVRTC" if _cache_entries() > cached_before else "loaded from the disk cache"
        say("first call", f"{first_ms:.1f} ms ({how}, then launched)")

        if not _check(outd.get(), expected, say):
            return 1

        # (a) NumPy arrays straight into the kernel: copied in, and back because the kernel writes `out`.
        host_out = np.empty_like(x)
        wrong = []

        def round_trip():
            host_out.fill(np.nan)
            add[blocks, THREADS](x, y, host_out)
            if not np.array_equal(host_out, expected):
                wrong.append(True)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jiasu.PerformanceWarning)  # the copies are what we time here
            round_trip()
            host_ms = _median_ms(round_trip, ROUND_TRIPS)
        if wrong:
            say("check", "FAILED: a launch with NumPy arrays gave a wrong result")
            return 1

        # (b) Device arrays only: the kernel itself, timed by CUDA events.
        start, end = jiasu.Event(), jiasu.Event()
        kernel_us = []
        for i in range(KERNEL_RUNS + 3):
            start.record()
            add[blocks, THREADS](xd, yd, outd)
            end.record()
            end.synchronize()
            if i >= 3:  # the first few warm the clocks up
                kernel_us.append(start.elapsed_time(end) * 1e3)
        kernel_us = statistics.median(kernel_us)
        gbps = 12 * n / (kernel_us * 1e-6) / 1e9
    except jiasu.JiasuError as error:
        print(f"\nThe demo failed: {type(error).__name__}: {error}", file=out)
        print("Run `python -m jiasu doctor` to see what is missing.", file=out)
        return 1

    # (c) NumPy on the CPU.
    numpy_ms = _median_ms(lambda: x + y, ROUND_TRIPS)

    say("NumPy arrays", f"{host_ms:.2f} ms  (copy x, y, out in, launch, copy out back; median of {ROUND_TRIPS})")
    say("kernel only", f"{kernel_us:.1f} µs = {gbps:,.0f} GB/s  (12 bytes per element; "
                       f"median of {KERNEL_RUNS}, CUDA events)")
    say("NumPy on the CPU", f"{numpy_ms:.2f} ms  (x + y; median of {ROUND_TRIPS})")
    print(f"\nOK: the kernel alone is {_speed(numpy_ms * 1e3 / kernel_us)} than NumPy; counting the copies "
          f"to and from the GPU, {_speed(numpy_ms / host_ms)}.", file=out)
    return 0


def main():
    return run()
