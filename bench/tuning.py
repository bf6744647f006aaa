"""The tuning guide's walk-through (docs/tuning.md), measured: the seed article's vector addition from NumPy
arrays passed to every launch to a bandwidth-bound kernel, each step timed with jiasu.benchmark-style CUDA
events and explained by the profiler's advisor. On the CPU backend it runs the same steps with the wall clock.

    python bench/tuning.py [--n 16777216] [--json out.json]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, median, write_json  # noqa: E402

import numpy as np  # noqa: E402

import jiasu  # noqa: E402
from seed_kernels import add  # noqa: E402


@jiasu.kernel
def add_strided(x, y, out, stride):
    """The same addition with neighbouring threads `stride` elements apart: uncoalesced."""
    i = jiasu.grid(1)
    n = out.size
    if i < n:
        j = (i * stride) % n + (i * stride) // n
        out[j] = x[j] + y[j]


def time_ms(fn, repeats, sync):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    n = args.n
    gpu = jiasu.is_available()
    sync = jiasu.synchronize if gpu else (lambda: None)
    rng = np.random.default_rng(0)
    xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    oh = np.empty_like(xh)
    blocks = (n + 255) // 256
    steps = {}

    # 1. NumPy arrays straight into the kernel: every launch copies 8 bytes in and 4 out per element.
    steps["numpy_arrays_ms"] = time_ms(lambda: add[blocks, 256](xh, yh, oh), max(3, args.repeats // 4), sync)
    assert np.array_equal(oh, xh + yh)

    # 2. Arrays that stay on the device: only the kernel runs.
    x, y, out = jiasu.asarray(xh), jiasu.asarray(yh), jiasu.empty(n, np.float32)
    steps["device_arrays_ms"] = time_ms(lambda: add[blocks, 256](x, y, out), args.repeats, sync)

    # 3. The profiler's view of it: achieved bandwidth against the measured peak, occupancy, advice.
    with jiasu.profile() as p:
        for _ in range(args.repeats):
            add[blocks, 256](x, y, out)
        add_strided[blocks, 256](x, y, out, 4096)
    report = p.report()
    by_name = {k["name"]: k for k in report.kernels}
    steps["kernel_gbs"] = by_name["add"]["gbs"]
    steps["peak_gbs"] = report.peaks["bandwidth_gbs"]
    steps["kernel_fraction_of_peak"] = by_name["add"]["bandwidth_fraction"]
    steps["strided_gbs"] = by_name["add_strided"]["gbs"]
    np.testing.assert_array_equal(out.get(), xh + yh)

    # 4. Where the strided kernel's time goes, on the CPU, per source line.
    small = 1 << 14
    xs, ys, os_ = (np.ones(small, np.float32) for _ in range(3))
    analysis = None
    if hasattr(add_strided, "analyze"):
        analysis = add_strided.analyze((small + 255) // 256, 256, xs, ys, os_, 4096)
    results = {"benchmark": "tuning", "n": n, "gpu": gpu, **steps,
               "speedup_device_over_numpy": steps["numpy_arrays_ms"] / steps["device_arrays_ms"],
               "report": str(report), "analysis": str(analysis) if analysis is not None else None,
               "env": env_info()}
    print(f"vector addition of {n} float32 on {'the GPU' if gpu else 'the CPU backend'}:")
    print(f"  1. NumPy arrays into the kernel     {steps['numpy_arrays_ms']:9.3f} ms per call")
    print(f"  2. device arrays                    {steps['device_arrays_ms']:9.3f} ms per call "
          f"({results['speedup_device_over_numpy']:.0f}x)")
    print(f"  3. profile: {steps['kernel_gbs']:.0f} GB/s = {100 * steps['kernel_fraction_of_peak']:.0f}% of the "
          f"measured {steps['peak_gbs']:.0f} GB/s; strided: {steps['strided_gbs']:.0f} GB/s")
    print(report)
    if analysis is not None:
        print(analysis)
    write_json(args.json, results)


if __name__ == "__main__":
    main()
