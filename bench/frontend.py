#!/usr/bin/env python3
"""The front end's time on long kernels, beside CPython compiling the same text.

Kernels of 10k, 20k, 40k and 100k statements, of three kinds:
  statements  `v += 1` lines
  elif        if/elif chains of 998 branches (the longest the limits allow), one after another
  sums        statements `out[0] = x[0] + x[0] + ...` of 998 terms each (the longest): the size counts terms
Each kernel is written to a file and read from it as any kernel is; then, timed:
  cpython     compile() of the same text (the function alone)
  specialize  k.specialize(...): parse, check and the CUDA C++ (no NVRTC)
  host        k.inspect_host(): the host C++ (no C++ compiler)
Median of --runs runs (fresh kernel objects each). jiasu's time is specialize + host, also per 1000 units
(flat when the front end is linear in the source) and as a ratio to CPython's.

Usage:  python3 bench/frontend.py [--json out.json] [--runs 3] [--sizes 10000,20000,40000,100000]
Goal (from the issue): 100k statements <= 2 s. No GPU needed.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, median, write_json  # noqa: E402

import jiasu  # noqa: E402

GOAL_SECONDS = 2.0
CHAIN = 998  # branches of an elif chain, terms of a sum: the longest the front end's limits allow


def statements(n):
    return "    v = 0\n" + "    v += 1\n" * n + "    out[0] = v\n"


def elif_chains(n):
    lines = ["    i = jiasu.grid(1)"]
    for j in range(n // 2):  # each branch is two statements: its test and its body
        lines.append(f"    {'if' if j % CHAIN == 0 else 'elif'} i == {j}:")
        lines.append(f"        out[0] = {j}")
    return "\n".join(lines) + "\n"


def sums(n):
    line = "    out[0] = " + " + ".join(["x[0]"] * CHAIN) + "\n"
    return line * max(1, n // CHAIN)


KINDS = {"statements": statements, "elif": elif_chains, "sums": sums}
ARGS = (np.zeros(4, np.float32), np.zeros(4, np.float32))


def kernel_from(path):
    """@jiasu.kernel of the file's `k`: the function object is compiled from a stub at the same file and
    line (so that inspect reads the real text), which keeps CPython's compile out of jiasu's time."""
    namespace = {"jiasu": jiasu, "np": np}
    exec(compile("def k(x, out):\n    pass\n", path, "exec"), namespace)
    return jiasu.kernel(namespace["k"])


def measure(kind, n, runs, directory):
    text = "def k(x, out):\n" + KINDS[kind](n)
    path = os.path.join(directory, f"{kind}_{n}.py")
    with open(path, "w") as f:
        f.write(text)
    cpython, specialize, host = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        compile(text, path, "exec")
        cpython.append(time.perf_counter() - t0)
        kernel = kernel_from(path)
        t0 = time.perf_counter()
        kernel.specialize(*ARGS)
        t1 = time.perf_counter()
        kernel.inspect_host()
        t2 = time.perf_counter()
        specialize.append(t1 - t0)
        host.append(t2 - t1)
    row = {"kind": kind, "size": n, "source_bytes": len(text), "cpython_s": median(cpython),
           "specialize_s": median(specialize), "host_s": median(host)}
    row["jiasu_s"] = row["specialize_s"] + row["host_s"]
    row["jiasu_ms_per_1000"] = 1000 * row["jiasu_s"] / (n / 1000)
    row["ratio_to_cpython"] = row["jiasu_s"] / row["cpython_s"]
    return row


def table(rows):
    out = ["| kernel | size | source | CPython compile | jiasu specialize | jiasu host C++ | jiasu total | "
           "per 1000 | jiasu / CPython |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['kind']} | {r['size']:,} | {r['source_bytes'] / 1e6:.2f} MB | {r['cpython_s']:.3f} s | "
                   f"{r['specialize_s']:.3f} s | {r['host_s']:.3f} s | {r['jiasu_s']:.3f} s | "
                   f"{r['jiasu_ms_per_1000']:.1f} ms | {r['ratio_to_cpython']:.2f} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="10000,20000,40000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for kind in KINDS:
            for n in sizes:
                rows.append(measure(kind, n, args.runs, directory))
    print(table(rows))
    biggest = max((r for r in rows if r["kind"] == "statements"), key=lambda r: r["size"])
    met = biggest["jiasu_s"] <= GOAL_SECONDS
    print(f"\ngoal: {biggest['size']:,} statements in {biggest['jiasu_s']:.2f} s "
          f"(<= {GOAL_SECONDS} s): {'met' if met else 'NOT met'}")
    write_json(args.json, {"env": env_info(), "goal_seconds": GOAL_SECONDS, "rows": rows})


if __name__ == "__main__":
    main()
