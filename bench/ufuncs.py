#!/usr/bin/env python3
"""Elementwise operations: a + b on float32 arrays, jiasu beside NumPy (CPU backend) and beside torch and
CuPy and a device-to-device copy (GPU), in one run.

  cpu      a + b on 2^24 float32 (fresh output each call, as NumPy's): GB/s over 3 streams, jiasu's CPU
           backend against NumPy on the same machine (goal: >= NumPy)
  gpu      a + b on 2^28 float32: GB/s over 3 streams, against torch, CuPy and cuMemcpyDtoD's 2 streams
           (goal: >= 0.98x the copy and >= torch); broadcast (4096, 1) + (1, 65536)
  small    a + b on 1,000 float32 on the GPU: µs per call (goal: <= torch)

Method: warm up (compiles and caches the kernel), then the median over repetitions of the time per call.
Usage:  python3 bench/ufuncs.py [--reps 21] [--cpu-only]
"""
import argparse
import statistics
import time

import numpy as np

import jiasu


def timed(fn, reps, inner, sync=lambda: None):
    fn()
    sync()
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def cpu(reps):
    n = 1 << 24
    a_np = np.random.default_rng(0).random(n, dtype=np.float32)
    b_np = np.random.default_rng(1).random(n, dtype=np.float32)
    with jiasu.backend("cpu"):
        a, b = jiasu.asarray(a_np), jiasu.asarray(b_np)
        np.testing.assert_array_equal((a + b).get(), a_np + b_np)
        t_jiasu = timed(lambda: a + b, reps, 5)
    t_numpy = timed(lambda: a_np + b_np, reps, 5)
    gbs = lambda t: 3 * 4 * n / t / 1e9  # noqa: E731
    print(f"cpu  a+b 2^24 float32: jiasu {gbs(t_jiasu):7.1f} GB/s   numpy {gbs(t_numpy):7.1f} GB/s   "
          f"ratio {t_numpy / t_jiasu:.2f}x")


def gpu(reps):
    n = 1 << 28
    sync = jiasu.synchronize
    a = jiasu.asarray(np.random.default_rng(0).random(n, dtype=np.float32))
    b = jiasu.asarray(np.random.default_rng(1).random(n, dtype=np.float32))
    out = jiasu.empty(n, np.float32)
    t_add = timed(lambda: jiasu.add(a, b, out=out), reps, 10, sync)
    t_copy = timed(lambda: out.__setitem__(slice(None), a), reps, 10, sync)
    line = f"gpu  a+b 2^28 float32: jiasu {3 * 4 * n / t_add / 1e9:7.1f} GB/s   copy {2 * 4 * n / t_copy / 1e9:7.1f} GB/s"
    try:
        import torch
        ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
        tout = torch.empty_like(ta)
        t_torch = timed(lambda: torch.add(ta, tb, out=tout), reps, 10, torch.cuda.synchronize)
        line += f"   torch {3 * 4 * n / t_torch / 1e9:7.1f} GB/s"
        small_a, small_b = jiasu.asarray(np.ones(1000, np.float32)), jiasu.asarray(np.ones(1000, np.float32))
        t_small = timed(lambda: small_a + small_b, reps, 2000, sync)
        tsa, tsb = torch.from_dlpack(small_a), torch.from_dlpack(small_b)
        t_small_torch = timed(lambda: tsa + tsb, reps, 2000, torch.cuda.synchronize)
        line += f"\nsmall a+b 1000 float32: jiasu {t_small * 1e6:.2f} µs   torch {t_small_torch * 1e6:.2f} µs"
    except ImportError:
        pass
    col = jiasu.asarray(np.ones((4096, 1), np.float32))
    row = jiasu.asarray(np.ones((1, 65536), np.float32))
    t_broadcast = timed(lambda: col + row, reps, 5, sync)
    line += f"\nbroadcast (4096,1)+(1,65536): jiasu {4 * 4096 * 65536 / t_broadcast / 1e9:7.1f} GB/s (output stream)"
    print(line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--cpu-only", action="store_true")
    args = parser.parse_args()
    cpu(args.reps)
    if not args.cpu_only and jiasu.is_available():
        gpu(args.reps)
