#!/usr/bin/env python3
"""What debug mode costs: the same kernels compiled plain and with @jiasu.kernel(debug=True), which checks every
array index (and reads the launch's error record back after each launch, which synchronises).

  axpy     y[i] = a * x[i] + y[i] on 2^26 float32, GB/s counting 12 bytes an element
  stencil  out[i, j] = the mean of a's four neighbours, on a 8192 x 8192 float32 interior, GB/s counting 8 bytes an
           element (a read once, out written once)

One repetition: a CUDA event, `--iters` launches, an event, synchronize; the figure is the median time per launch
of `--reps` repetitions, plain and debug interleaved. "debug / plain" is the debug kernel's time over the plain
one's (1.00: no cost). Both kernels' results are checked against NumPy before timing.
On the CPU backend (JIASU_BACKEND=cpu) it measures the same on smaller arrays (2^24, 2048 x 2048), each launch
timed from Python (a CPU launch returns when done); without a GPU and without that, it skips.

Usage:  python3 bench/debug.py [--json out.json] [--reps 7] [--iters 20] [--quick]
"""
import argparse
import os
import sys
import time

import numpy as np

import jiasu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, event_timer, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

THREADS = 256
TILE = (16, 16)


@jiasu.kernel
def axpy(a, x, y):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


@jiasu.kernel(debug=True)
def axpy_debug(a, x, y):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


@jiasu.kernel
def stencil(a, out):
    i, j = jiasu.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@jiasu.kernel(debug=True)
def stencil_debug(a, out):
    i, j = jiasu.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def wall_timer(fn, iters):
    """Seconds per call of fn on the CPU backend, whose launches return when the kernel is done."""
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) / iters


def measure(timer, calls, args):
    """Median seconds per call of each function, repetitions interleaved."""
    for fn in calls.values():
        timer(fn, 2)
    seconds = {name: [] for name in calls}
    for _ in range(args.reps):
        for name, fn in calls.items():
            seconds[name].append(timer(fn, args.iters))
    return {name: median(values) for name, values in seconds.items()}


def axpy_case(n):
    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a = np.float32(1.5)
    jx = jiasu.asarray(x)
    ys = {name: jiasu.asarray(y) for name in ("plain", "debug")}
    grid = (n + THREADS - 1) // THREADS
    calls = {"plain": lambda: axpy[grid, THREADS](a, jx, ys["plain"]),
             "debug": lambda: axpy_debug[grid, THREADS](a, jx, ys["debug"])}
    expected = a * x + y
    for name, call in calls.items():
        call()
        np.testing.assert_allclose(ys[name].get(), expected, rtol=1e-6, err_msg=name)
    return calls, 12 * n


def stencil_case(side):
    rng = np.random.default_rng(2)
    a = rng.random((side, side), dtype=np.float32)
    ja = jiasu.asarray(a)
    outs = {name: jiasu.zeros((side, side), np.float32) for name in ("plain", "debug")}
    grid = ((side + TILE[0] - 1) // TILE[0], (side + TILE[1] - 1) // TILE[1])
    calls = {"plain": lambda: stencil[grid, TILE](ja, outs["plain"]),
             "debug": lambda: stencil_debug[grid, TILE](ja, outs["debug"])}
    expected = np.zeros_like(a)
    expected[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    for name, call in calls.items():
        call()
        np.testing.assert_allclose(outs[name].get(), expected, rtol=1e-6, err_msg=name)
    return calls, 8 * side * side


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--iters", type=int, default=20, help="launches per timed repetition")
    parser.add_argument("--quick", action="store_true", help="arrays a quarter of the size")
    args = parser.parse_args()

    on_cpu = os.environ.get("JIASU_BACKEND") == "cpu"
    if not on_cpu:
        import_jiasu_or_skip("debug.py", args.json, "debug")
    backend = jiasu.get_backend()
    timer = wall_timer if on_cpu else event_timer(jiasu, None, "jiasu")
    n, side = (2 ** 24, 2048) if on_cpu else (2 ** 26, 8192)
    if args.quick:
        n, side = n // 4, side // 2
    cases = {f"axpy 2^{n.bit_length() - 1} float32": lambda: axpy_case(n),
             f"stencil {side}x{side} float32": lambda: stencil_case(side)}

    results = {}
    print(f"Debug mode's cost on the {backend} backend (median of {args.reps} reps x {args.iters} launches)")
    print(f"{'case':32} {'plain GB/s':>10} {'debug GB/s':>10} {'debug / plain':>14}")
    print("-" * 70)
    for name, make in cases.items():
        entry = results[name] = {}
        try:
            calls, nbytes = make()
            seconds = measure(timer, calls, args)
            for kind, t in seconds.items():
                entry[kind] = {"seconds": t, "gbs": nbytes / t / 1e9}
            entry["bytes"] = nbytes
            entry["debug_over_plain"] = seconds["debug"] / seconds["plain"]
            print(f"{name:32} {entry['plain']['gbs']:10.1f} {entry['debug']['gbs']:10.1f} "
                  f"{entry['debug_over_plain']:14.2f}")
        except Exception as error:  # noqa: BLE001 - one failed case must not hide the others
            entry["error"] = first_line(error)
            print(f"{name:32} error: {entry['error']}")

    write_json(args.json, {"benchmark": "debug", "backend": backend, "config": vars(args), "results": results,
                           "env": env_info()})


if __name__ == "__main__":
    main()
