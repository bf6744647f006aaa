"""What jiasu itself spends per launch, measured on any machine (no GPU) against fake_driver.cpp.

    g++ -O2 -shared -fPIC -o /tmp/fake/libcuda.so.1 tools/launch-overhead/fake_driver.cpp
    JIASU_LIBCUDA=/tmp/fake/libcuda.so.1 python3 tools/launch-overhead/measure.py

The fake driver's cuLaunchKernel only records the launch, so the figures are jiasu's own cost per launch (plus
the Python loop); on a GPU the driver's launch cost (3-4 µs on an H200) comes on top. It reads kernels'
parameter layouts from the CUBIN, so launches take the path they take on a real driver.
"""
import os
import statistics
import sys
import time

import numpy as np

import jiasu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from seed_kernels import ADD_CUDA_SOURCE as SOURCE, add_n  # noqa: E402


def per_launch_ns(loop, count=200_000, reps=7):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        loop(count)
        times.append((time.perf_counter() - t) / count * 1e9)
    return statistics.median(times)


def main():
    n = 1000
    x, y, out = (jiasu.asarray(np.ones(n, np.float32)) for _ in range(3))
    raw = jiasu.RawKernel(SOURCE, "add")
    grid, block, blocks = (4,), (256,), 4

    def empty_loop(count):
        for _ in range(count):
            pass

    def raw_loop(count):
        for _ in range(count):
            raw(grid, block, (x, y, out, n))

    def kernel_loop(count):
        for _ in range(count):
            add_n[blocks, 256](x, y, out, n)

    def kernel_tuple_loop(count):
        for _ in range(count):
            add_n[grid, block](x, y, out, n)

    def config_only(count):
        for _ in range(count):
            add_n[blocks, 256]

    for loop in (raw_loop, kernel_loop, kernel_tuple_loop):
        loop(1000)  # compile and warm up
    print(f"{'python loop alone':28} {per_launch_ns(empty_loop):8.0f} ns")
    print(f"{'k[blocks, threads] alone':28} {per_launch_ns(config_only):8.0f} ns")
    print(f"{'RawKernel launch':28} {per_launch_ns(raw_loop):8.0f} ns")
    print(f"{'@jiasu.kernel launch':28} {per_launch_ns(kernel_loop):8.0f} ns")
    print(f"{'  with (blocks,), (threads,)':28} {per_launch_ns(kernel_tuple_loop):8.0f} ns")


if __name__ == "__main__":
    main()
