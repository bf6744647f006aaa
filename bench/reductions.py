#!/usr/bin/env python3
"""Reductions: bandwidth of jiasu's sum/max/argmax beside NumPy (CPU backend) and torch/CuPy (GPU).

CPU backend: sum of 2**24 float32 (and axis=0 / axis=1 of a (4096, 4096) float32) against NumPy, GB/s read.
GPU (with --gpu, where one is present): sum of 2**28 float32 against the device-to-device copy bandwidth, and
sum(axis=0) / sum(axis=1) / max(axis=1) / argmax(axis=1) of a (16384, 16384) float32, beside torch and CuPy.
Each figure is the median over --reps repetitions of one call (GPU: with a synchronisation after it).
Goals (from the issue): CPU sum >= NumPy; GPU full sum >= 0.99x copy; per-axis forms >= torch.

Usage:  python3 bench/reductions.py [--reps 21] [--gpu]
"""
import argparse
import time

import numpy as np

import jiasu


def median_seconds(call, reps, sync=lambda: None):
    call()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def cpu(reps):
    x = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)
    m = np.random.default_rng(1).standard_normal((4096, 4096)).astype(np.float32)
    with jiasu.backend("cpu"):
        jx, jm = jiasu.asarray(x), jiasu.asarray(m)
        print(f"CPU backend, {jiasu._core.cpu_threads()} threads")
        for name, np_call, j_call, nbytes in [
            ("sum 2^24 float32", lambda: x.sum(), lambda: jiasu.sum(jx), x.nbytes),
            ("sum(axis=0) 4096^2", lambda: m.sum(axis=0), lambda: jiasu.sum(jm, axis=0), m.nbytes),
            ("sum(axis=1) 4096^2", lambda: m.sum(axis=1), lambda: jiasu.sum(jm, axis=1), m.nbytes),
            ("max 2^24 float32", lambda: x.max(), lambda: jiasu.max(jx), x.nbytes),
            ("argmax 2^24 float32", lambda: x.argmax(), lambda: jiasu.argmax(jx), x.nbytes)]:
            t_np, t_j = median_seconds(np_call, reps), median_seconds(j_call, reps)
            print(f"  {name:22s} numpy {nbytes / t_np / 1e9:7.2f} GB/s   jiasu {nbytes / t_j / 1e9:7.2f} GB/s"
                  f"   ratio {t_np / t_j:5.2f}")


def gpu(reps):
    jiasu.set_backend("cuda")
    sync = jiasu.synchronize
    n = 1 << 28
    a = jiasu.zeros(n, dtype=np.float32)
    b = jiasu.empty(n, dtype=np.float32)
    t_copy = median_seconds(lambda: b.__setitem__(slice(None), a), reps, sync)
    t_sum = median_seconds(lambda: jiasu.sum(a), reps, sync)
    print(f"GPU: copy {2 * a.nbytes / t_copy / 1e9:.0f} GB/s, sum {a.nbytes / t_sum / 1e9:.0f} GB/s"
          f" ({(a.nbytes / t_sum) / (2 * a.nbytes / t_copy):.3f}x copy)")
    m = jiasu.asarray(np.random.default_rng(2).standard_normal((16384, 16384)).astype(np.float32))
    try:
        import torch
        tm = torch.from_dlpack(m)
    except ImportError:
        tm = None
    for name, j_call, t_call in [
        ("sum(axis=0)", lambda: jiasu.sum(m, axis=0), lambda: tm.sum(dim=0)),
        ("sum(axis=1)", lambda: jiasu.sum(m, axis=1), lambda: tm.sum(dim=1)),
        ("max(axis=1)", lambda: jiasu.max(m, axis=1), lambda: tm.amax(dim=1)),
        ("argmax(axis=1)", lambda: jiasu.argmax(m, axis=1), lambda: tm.argmax(dim=1))]:
        t_j = median_seconds(j_call, reps, sync)
        line = f"  {name:15s} jiasu {m.nbytes / t_j / 1e9:7.0f} GB/s"
        if tm is not None:
            t_t = median_seconds(t_call, reps, torch.cuda.synchronize)
            line += f"   torch {m.nbytes / t_t / 1e9:7.0f} GB/s   ratio {t_t / t_j:5.2f}"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--gpu", action="store_true")
    args = parser.parse_args()
    cpu(args.reps)
    if args.gpu and jiasu.is_available():
        gpu(args.reps)


if __name__ == "__main__":
    main()
