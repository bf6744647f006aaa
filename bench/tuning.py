"""The tuning guide's walk-through (docs/tuning.md), measured: the seed article's vector addition from NumPy
arrays passed to every launch to a bandwidth-bound kernel, each step timed with jiasu.benchmark and explained by
k.analyze and the profiler's advisor. On the CPU backend it runs the same steps with the wall clock.

    python bench/tuning.py [--n 16777216] [--json out.json] [--roofline roofline.png]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, write_json  # noqa: E402

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


def median_ms(fn, *args, repeats):
    result = jiasu.benchmark(fn, *args, n_repeat=repeats, n_warmup=2)
    return (result.gpu or result.cpu).median


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default="")
    parser.add_argument("--roofline", default="", help="draw the profile's kernels on a roofline into this PNG")
    args = parser.parse_args()
    n, stride = args.n, 4096
    gpu = jiasu.is_available()
    rng = np.random.default_rng(0)
    xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    oh = np.empty_like(xh)
    blocks = (n + 255) // 256
    steps = {}

    # 1. NumPy arrays straight into the kernel: every launch copies 8 bytes in and 4 out per element.
    steps["numpy_arrays_ms"] = median_ms(lambda: add[blocks, 256](xh, yh, oh), repeats=max(3, args.repeats // 4))
    assert np.array_equal(oh, xh + yh)

    # 2. Arrays that stay on the device: only the kernel runs.
    x, y, out = jiasu.asarray(xh), jiasu.asarray(yh), jiasu.empty(n, np.float32)
    steps["device_arrays_ms"] = median_ms(lambda: add[blocks, 256](x, y, out), repeats=args.repeats)
    steps["strided_ms"] = median_ms(lambda: add_strided[blocks, 256](x, y, out, stride), repeats=args.repeats)

    # 3. Where the strided kernel's time goes, per source line, on the CPU: a smaller launch with the same access
    # pattern (32 * stride elements, so that a warp's threads are `stride` apart as in the large one).
    small = 32 * stride
    analysis = add_strided.analyze(small // 256, 256, *(np.ones(small, np.float32) for _ in range(3)), stride)
    steps["strided_sectors_per_request"] = max(r["sectors_per_request"] for r in analysis.rows)
    coalesced = add.analyze(small // 256, 256, *(np.ones(small, np.float32) for _ in range(3)))
    steps["add_sectors_per_request"] = max(r["sectors_per_request"] for r in coalesced.rows)

    # 4. The profiler's view: achieved bandwidth against the measured peak, occupancy, advice (quoting step 3).
    with jiasu.profile() as p:
        for _ in range(args.repeats):
            add[blocks, 256](x, y, out)
        add_strided[blocks, 256](x, y, out, stride)
    np.testing.assert_array_equal(out.get(), xh + yh)
    report = p.report()
    by_name = {k["name"]: k for k in report.kernels}
    steps["kernel_gbs"] = by_name["add"]["gbs"]
    steps["peak_gbs"] = report.peaks["bandwidth_gbs"]
    steps["kernel_fraction_of_peak"] = by_name["add"]["bandwidth_fraction"]
    steps["strided_gbs"] = by_name["add_strided"]["gbs"]
    steps["strided_flagged"] = any("uncoalesced" in line for line in by_name["add_strided"]["advice"])
    if args.roofline:
        p.roofline(args.roofline, flops={"add": n, "add_strided": n}, title=f"vector addition of {n} float32")
    results = {"benchmark": "tuning", "n": n, "gpu": gpu, **steps,
               "speedup_device_over_numpy": steps["numpy_arrays_ms"] / steps["device_arrays_ms"],
               "report": str(report), "analysis": str(analysis), "env": env_info()}
    print(f"vector addition of {n} float32 on {'the GPU' if gpu else 'the CPU backend'}:")
    print(f"  1. NumPy arrays into the kernel  {steps['numpy_arrays_ms']:9.3f} ms per call")
    print(f"  2. device arrays                 {steps['device_arrays_ms']:9.3f} ms per call "
          f"({results['speedup_device_over_numpy']:.0f}x); strided {steps['strided_ms']:.3f} ms")
    print(f"  3. k.analyze: {steps['strided_sectors_per_request']:.0f} sectors per request strided, "
          f"{steps['add_sectors_per_request']:.0f} coalesced")
    print(f"  4. profile: {steps['kernel_gbs']:.0f} GB/s = {100 * steps['kernel_fraction_of_peak']:.0f}% of the "
          f"measured {steps['peak_gbs']:.0f} GB/s; strided: {steps['strided_gbs']:.0f} GB/s"
          f"{' (flagged uncoalesced)' if steps['strided_flagged'] else ''}")
    print(analysis)
    print(report)
    write_json(args.json, results)


if __name__ == "__main__":
    main()
