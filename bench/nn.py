#!/usr/bin/env python3
"""jiasu.nn on the GPU beside torch.nn.functional: convolutions (TFLOP/s, each pass), max-pool, softmax and
batch-norm training forward (GB/s of the tensors read and written once).

Both libraries time cuDNN's candidate plans on first use of a shape and keep the fastest
(torch.backends.cudnn.benchmark, jiasu.nn.benchmark), TF32 off. Both work on the same device memory (torch's
tensors, viewed by jiasu without a copy). One repetition: a CUDA event, `--iters` calls, an event,
synchronize; the figure is from the median time per call, the two libraries' repetitions interleaved. Each jiasu result is checked against torch's before timing.

Usage:  python3 bench/nn.py [--json out.json] [--reps 7] [--iters 10] [--warmup 3] [--quick]
Issue figures (H200, torch, 2026-11-30): conv 3x3 64ch 56x56 N=64 float32 37.1 / bf16 channels-last 248 TFLOP/s;
3x3 256ch 14x14 63.1 / 297; 1x1 64->256 56x56 25.1 / 96.2; max-pool 3x3 s2 64x64x112x112 float32 1220 GB/s;
softmax 65536x1024 float32 3800 GB/s; batch-norm training forward 2148 GB/s.
Goals: every convolution pass >= 1.0x torch; max-pool >= 2x; softmax >= 1x; batch-norm forward >= 1.5x.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, event_timer, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

CONVS = [  # name, (N, C, H, W), (K, C, R, S), padding
    ("3x3 64ch 56x56", (64, 64, 56, 56), (64, 64, 3, 3), 1),
    ("3x3 256ch 14x14", (64, 256, 14, 14), (256, 256, 3, 3), 1),
    ("1x1 64->256 56x56", (64, 64, 56, 56), (256, 64, 1, 1), 0),
]
CONV_LAYOUTS = [("float32", False), ("bfloat16", True)]  # (dtype, channels-last)
ISSUE_TFLOPS = {("3x3 64ch 56x56", "float32"): 37.1, ("3x3 64ch 56x56", "bfloat16"): 248,
                ("3x3 256ch 14x14", "float32"): 63.1, ("3x3 256ch 14x14", "bfloat16"): 297,
                ("1x1 64->256 56x56", "float32"): 25.1, ("1x1 64->256 56x56", "bfloat16"): 96.2}
ISSUE_GBS = {"max_pool": 1220, "softmax": 3800, "batch_norm": 2148}
GOALS = {"conv": 1.0, "max_pool": 2.0, "softmax": 1.0, "batch_norm": 1.5}


def measure(jiasu, torch, calls, args):
    """Median seconds per call of each library's function, repetitions interleaved."""
    timers = {lib: event_timer(jiasu, torch, lib) for lib in calls}
    for lib, fn in calls.items():
        timers[lib](fn, args.warmup)
    seconds = {lib: [] for lib in calls}
    for _ in range(args.reps):
        for lib, fn in calls.items():
            seconds[lib].append(timers[lib](fn, args.iters))
    return {lib: median(values) for lib, values in seconds.items()}


def run_case(jiasu, torch, entry, mine, theirs, args, work, unit):
    """Checks mine() against theirs(), then times both into entry: work / seconds per call / 1e12 (TFLOP/s) or
    / 1e9 (GB/s), under `unit`; an error is recorded instead."""
    scale = 1e12 if unit == "tflops" else 1e9
    try:
        entry["max_relative_difference"] = max_difference(torch, mine(), theirs())
        seconds = measure(jiasu, torch, {"jiasu": mine, "torch": theirs}, args)
        for lib, t in seconds.items():
            entry[lib] = {"seconds": t, unit: work / t / scale}
    except Exception as error:  # noqa: BLE001
        entry["error"] = first_line(error)


def max_difference(torch, mine, theirs):
    x = torch.from_dlpack(mine).float()
    y = theirs.float()
    return float((x - y).abs().max() / max(float(y.abs().max()), 1e-30))


def conv_cases(jiasu, nn, torch, args):
    F = torch.nn.functional
    results = {}
    for name, x_shape, w_shape, padding in CONVS[:1] if args.quick else CONVS:
        n, c, h, w = x_shape
        k, _, r, s = w_shape
        flops = 2.0 * n * k * c * r * s * h * w  # stride 1, same-size output
        for dtype, channels_last in CONV_LAYOUTS:
            layout = torch.channels_last if channels_last else torch.contiguous_format
            tdtype = getattr(torch, dtype)
            tx = torch.randn(x_shape, device="cuda", dtype=tdtype).contiguous(memory_format=layout)
            tw = (torch.randn(w_shape, device="cuda", dtype=tdtype) / (c * r * s) ** 0.5).contiguous(memory_format=layout)
            ty = F.conv2d(tx, tw, padding=padding)
            tdy = torch.randn_like(ty)
            jx, jw, jdy = jiasu.asarray(tx), jiasu.asarray(tw), jiasu.asarray(tdy)
            passes = {
                "forward": (lambda: nn.conv2d(jx, jw, padding=padding), lambda: F.conv2d(tx, tw, padding=padding)),
                "dgrad": (lambda: nn.conv2d_backward(jdy, jx, jw, padding=padding, needs=("x",))[0],
                          lambda: torch.ops.aten.convolution_backward(tdy, tx, tw, None, [1, 1], [padding] * 2, [1, 1],
                                                                      False, [0, 0], 1, [True, False, False])[0]),
                "wgrad": (lambda: nn.conv2d_backward(jdy, jx, jw, padding=padding, needs=("weight",))[1],
                          lambda: torch.ops.aten.convolution_backward(tdy, tx, tw, None, [1, 1], [padding] * 2, [1, 1],
                                                                      False, [0, 0], 1, [False, True, False])[1]),
            }
            for pass_name, (mine, theirs) in passes.items():
                key = f"{name} {dtype}{' cl' if channels_last else ''} {pass_name}"
                entry = results[key] = {"flops": flops, "dtype": dtype, "channels_last": channels_last,
                                        "issue_tflops": ISSUE_TFLOPS.get((name, dtype)) if pass_name == "forward" else None}
                run_case(jiasu, torch, entry, mine, theirs, args, flops, "tflops")
            del tx, tw, ty, tdy, jx, jw, jdy
    return results


def bandwidth_cases(jiasu, nn, torch, args):
    F = torch.nn.functional
    results = {}
    x = torch.randn((64, 64, 112, 112) if not args.quick else (16, 64, 112, 112), device="cuda")
    jx = jiasu.asarray(x)
    y = F.max_pool2d(x, 3, 2, 1)
    results["max_pool"] = ((x.numel() + y.numel()) * 4, lambda: nn.max_pool2d(jx, 3, 2, 1),
                           lambda: F.max_pool2d(x, 3, 2, 1))
    s = torch.randn((65536, 1024), device="cuda")
    js = jiasu.asarray(s)
    results["softmax"] = (2 * s.numel() * 4, lambda: nn.softmax(js, 1), lambda: F.softmax(s, 1))
    c = x.shape[1]
    weight, bias = torch.ones(c, device="cuda"), torch.zeros(c, device="cuda")
    rm, rv = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
    jweight, jbias, jrm, jrv = (jiasu.asarray(t) for t in (weight, bias, rm.clone(), rv.clone()))
    results["batch_norm"] = (2 * x.numel() * 4,
                             lambda: nn.batch_norm_training(jx, jweight, jbias, jrm, jrv)[0],
                             lambda: F.batch_norm(x, rm, rv, weight, bias, training=True))
    out = {}
    for name, (nbytes, mine, theirs) in results.items():
        entry = out[name] = {"bytes": nbytes, "issue_gbs": ISSUE_GBS[name]}
        run_case(jiasu, torch, entry, mine, theirs, args, nbytes, "gbs")
    return out


def print_table(title, entries, unit, extra_name, extra):
    """One row per case: jiasu's and torch's figures in `unit`, their ratio, extra(key, entry), the difference."""
    print(f"\n{title}")
    print(f"{'case':40} {'jiasu':>8} {'torch':>8} {'j/t':>6} {extra_name:>6}  {'max rel diff':>12}")
    print("-" * 86)
    for key, entry in entries.items():
        if "error" in entry:
            print(f"{key:40} error: {entry['error']}")
            continue
        j, t = entry["jiasu"][unit], entry["torch"][unit]
        print(f"{key:40} {j:8.1f} {t:8.1f} {j / t:6.2f} {extra(key, entry):>6}  {entry['max_relative_difference']:12.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--iters", type=int, default=10, help="calls per timed repetition")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one convolution shape, a smaller pooling input")
    args = parser.parse_args()

    jiasu = import_jiasu_or_skip("nn.py", args.json, "nn")
    from jiasu import nn
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError("torch has no CUDA device")
    except ImportError as error:
        print(f"nn.py: skipped: torch is the anchor and is not usable ({first_line(error)})")
        write_json(args.json, {"benchmark": "nn", "skipped": f"torch: {first_line(error)}", "env": env_info()})
        return
    torch.backends.cudnn.benchmark = True
    nn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    convs = conv_cases(jiasu, nn, torch, args)
    bandwidth = bandwidth_cases(jiasu, nn, torch, args)

    print_table(f"Convolutions, TFLOP/s (median of {args.reps} reps x {args.iters} calls); cuDNN "
                "benchmark mode on, no TF32", convs, "tflops", "issue", lambda key, e: f"{e['issue_tflops']:.0f}" if e["issue_tflops"] else "")
    print_table("Bandwidth-bound operations, GB/s (tensors read and written once)", bandwidth, "gbs", "goal",
                lambda key, e: f"{GOALS[key]:.1f}")
    print(f"cuDNN: {nn.cudnn_info()}")

    write_json(args.json, {"benchmark": "nn", "config": vars(args), "convolutions": convs, "bandwidth": bandwidth,
                           "goals": GOALS, "cudnn": nn.cudnn_info(), "env": env_info()})


if __name__ == "__main__":
    main()
