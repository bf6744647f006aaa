#!/usr/bin/env python3
"""Matrix products on the GPU (TFLOP/s, 2*M*N*K flops per product) of jiasu (cuBLASLt) beside torch.matmul.

Cases: bfloat16 and float16 8192^3, float32 4096^3 without TF32 (jiasu's default precision "highest";
torch with torch.backends.cuda.matmul.allow_tf32 = False). Both libraries multiply the same device memory
(torch's tensors, viewed by jiasu without a copy) into a preallocated output. One repetition is: a CUDA
event, `--iters` products, an event, synchronize; the figure is flops / median(time per product), the two
libraries' repetitions interleaved. Before timing, each result is checked against the other's.

Usage:  python3 bench/matmul.py [--json out.json] [--reps 7] [--iters 20] [--warmup 3] [--no-torch]
Issue figures (H200, torch): bf16 8192^3 737 TFLOP/s. Goal: jiasu >= 0.98x torch in every case.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, event_timer, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

CASES = [("bfloat16", 8192), ("float16", 8192), ("float32", 4096)]
ISSUE_FIGURES = {"bfloat16": 737.0}


def make_inputs(jiasu, torch, dtype, n):
    """(a, b, out) for each library over the same memory: torch tensors when torch is here, else jiasu arrays."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    if torch is not None:
        t = [torch.from_numpy(x).to("cuda").to(getattr(torch, dtype)) for x in (a, b)]
        t.append(torch.empty((n, n), device="cuda", dtype=getattr(torch, dtype)))
        return [jiasu.asarray(x) for x in t], t
    import ml_dtypes
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    j = [jiasu.asarray(x.astype(np_dtype)) for x in (a, b)] + [jiasu.empty((n, n), np_dtype)]
    return j, None


def relative_difference(torch, mine, theirs):
    x = torch.from_dlpack(mine).float()
    y = theirs.float()
    return float((x - y).abs().max() / y.abs().max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--iters", type=int, default=20, help="products per timed repetition")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true", help="skip the torch anchor")
    args = parser.parse_args()

    jiasu = import_jiasu_or_skip("matmul.py", args.json, "matmul")
    torch, torch_reason = None, None
    if args.no_torch:
        torch_reason = "skipped (--no-torch)"
    else:
        try:
            import torch
            if not torch.cuda.is_available():
                torch, torch_reason = None, "torch has no CUDA device"
        except ImportError as error:
            torch_reason = f"not installed ({first_line(error)})"
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    jiasu.set_matmul_precision("highest")

    results = {}
    for dtype, n in CASES:
        flops = 2.0 * n * n * n
        entry = results[dtype] = {"n": n, "flops": flops}
        try:
            (ja, jb, jout), t = make_inputs(jiasu, torch, dtype, n)
        except Exception as error:  # noqa: BLE001
            entry["error"] = first_line(error)
            continue
        calls = {"jiasu": lambda: jiasu.matmul(ja, jb, out=jout)}
        if t is not None:
            ta, tb, tout = t
            calls["torch"] = lambda: torch.matmul(ta, tb, out=tout)
        timers = {lib: event_timer(jiasu, torch, lib) for lib in calls}
        try:
            for lib, fn in calls.items():
                timers[lib](fn, args.warmup)
            if t is not None:
                entry["max_relative_difference"] = relative_difference(torch, jout, tout)
            seconds = {lib: [] for lib in calls}
            for _ in range(args.reps):
                for lib, fn in calls.items():
                    seconds[lib].append(timers[lib](fn, args.iters))
        except Exception as error:  # noqa: BLE001
            entry["error"] = first_line(error)
            continue
        for lib, values in seconds.items():
            entry[lib] = {"seconds": values, "tflops": flops / median(values) / 1e12,
                          "best_tflops": flops / min(values) / 1e12}
        del ja, jb, jout, t, calls

    print(f"\nMatrix products, TFLOP/s (2*n^3 / median time), median of {args.reps} reps x {args.iters} products; "
          "float32 without TF32")
    print(f"{'case':22} {'jiasu':>8} {'torch':>8} {'j/t':>6} {'issue':>6}  {'max rel diff':>12}")
    print("-" * 70)
    for dtype, n in CASES:
        entry = results[dtype]
        label = f"{dtype} {n}^3"
        if "error" in entry:
            print(f"{label:22} error: {entry['error']}")
            continue
        j = entry["jiasu"]["tflops"]
        t = entry.get("torch", {}).get("tflops")
        t_text = f"{t:.1f}" if t else "n/a"
        ratio = f"{j / t:.3f}" if t else ""
        issue = f"{ISSUE_FIGURES[dtype]:.0f}" if dtype in ISSUE_FIGURES else ""
        diff = f"{entry['max_relative_difference']:.2e}" if "max_relative_difference" in entry else ""
        print(f"{label:22} {j:8.1f} {t_text:>8} {ratio:>6} {issue:>6}  {diff:>12}")
    if torch_reason:
        print(f"torch: n/a: {torch_reason}")

    write_json(args.json, {
        "benchmark": "matmul",
        "config": {"cases": CASES, "reps": args.reps, "iters": args.iters, "warmup": args.warmup, "tf32": False},
        "results": results,
        "torch": torch_reason or "ok",
        "issue_figures_tflops": ISSUE_FIGURES,
        "env": env_info(),
    })


if __name__ == "__main__":
    main()
