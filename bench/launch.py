#!/usr/bin/env python3
"""Kernel launch overhead: µs per launch of a tiny 3-array vector add, launched in a Python loop.

Contenders, side by side in one run, all on the default stream of the device's primary context:
  cpp             bench/launch_loop_lib.cpp: cuLaunchKernel in a C++ loop, called through ctypes inside this
                  process with jiasu's CUfunction and arrays (same process, context and module): the anchor
  cpp_process     bench/launch_loop.cpp: the same loop in a process of its own (one per repetition)
  jiasu           jiasu.RawKernel, n passed as a Python int
  jiasu_np_int32  jiasu.RawKernel, n passed as numpy.int32 (same arguments as CuPy gets)
  jiasu_kernel    the same kernel written in Python (@jiasu.kernel, bench/seed_kernels.py)
  jiasu_cuda_jit  the same written as Numba code for `from jiasu import cuda`: @cuda.jit with Numba's signature
                  (whose int32 converts n), arrays from cuda.to_device
  cupy            cupy.RawKernel with the same source
  numba           numba.cuda.jit kernel doing the same add, launched with device arrays

Method: warm up each contender and check its result, then repetitions interleaved across the Python
contenders (rep i of every contender, then rep i+1 ...); one repetition is
    synchronize; t0; <launches> launches; synchronize; t1
with the garbage collector off, and the figure is the median over the repetitions of (t1 - t0) / launches.

Usage:  python3 bench/launch.py [--json out.json] [--launch-loop build/gpu-check/launch_loop]
                                [--launch-loop-lib build/gpu-check/launch_loop_lib.so]
                                [--reps 41] [--launches 20000] [--numba-launches 1000]
Goal (from the issues): jiasu (RawKernel, @jiasu.kernel and the Numba layer's @cuda.jit) <= 1.1x the C++ loop.
"""
import argparse
import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, import_numba_cuda, median, write_json  # noqa: E402

from seed_kernels import ADD_CUDA_SOURCE as SOURCE, add_n, add_n_numba  # noqa: E402
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL_RATIO = 1.1
ISSUE_FIGURES_US = {"cpp": 3.60, "cupy": 5.31, "numba": 73.4}  # H200, recorded in the issue


class NotAvailable(Exception):
    """A contender that cannot run here (not installed, no binary...)."""


def host_inputs(n):
    x = np.arange(n, dtype=np.float32)
    return x, 2 * x, 3 * x


# ---- contenders: each returns (run(count), sync(), check()) ---------------------------------------

def jiasu_arrays(hx, hy):
    """x, y and a zeroed out on jiasu's arrays."""
    import jiasu
    return jiasu.asarray(hx), jiasu.asarray(hy), jiasu.zeros(hx.size, dtype=np.float32)


def numba_layer_arrays(hx, hy):
    """x, y and out as Numba code makes them on jiasu's compatibility layer (`from jiasu import cuda`)."""
    from jiasu import cuda
    return cuda.to_device(hx), cuda.to_device(hy), cuda.device_array(hx.size, dtype=np.float32)


def setup_jiasu(n, grid, block, use_np_int32=False):
    import jiasu
    hx, hy, expected = host_inputs(n)
    x, y, out = jiasu_arrays(hx, hy)
    kernel = jiasu.RawKernel(SOURCE, "add")
    size = np.int32(n) if use_np_int32 else n

    def run(count):
        for _ in range(count):
            kernel(grid, block, (x, y, out, size))

    def check():
        return np.array_equal(out.get(), expected)

    return run, jiasu.synchronize, check


def setup_python_kernel(kernel, make_arrays, n, grid, block):
    """The same job as a kernel written in Python (bench/seed_kernels.py), on the arrays make_arrays makes."""
    import jiasu
    hx, hy, expected = host_inputs(n)
    x, y, out = make_arrays(hx, hy)

    def run(count):
        for _ in range(count):
            kernel[grid, block](x, y, out, n)

    def check():
        return np.array_equal(out.get(), expected)

    return run, jiasu.synchronize, check


def setup_cupy(n, grid, block):
    try:
        import cupy
    except ImportError as error:
        raise NotAvailable(f"not installed ({first_line(error)})") from None
    hx, hy, expected = host_inputs(n)
    x, y = cupy.asarray(hx), cupy.asarray(hy)
    out = cupy.zeros(n, dtype=cupy.float32)
    kernel = cupy.RawKernel(SOURCE, "add")
    size = np.int32(n)

    def run(count):
        for _ in range(count):
            kernel(grid, block, (x, y, out, size))

    def check():
        return np.array_equal(cupy.asnumpy(out), expected)

    return run, cupy.cuda.runtime.deviceSynchronize, check


def setup_numba(n, grid, block):
    os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")  # 4 blocks is deliberately tiny
    try:
        cuda = import_numba_cuda()
    except ImportError as error:
        raise NotAvailable(f"not installed ({first_line(error)})") from None
    try:
        from numba.core.errors import NumbaPerformanceWarning
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
    except ImportError:
        pass
    if not cuda.is_available():
        raise NotAvailable("numba.cuda.is_available() is False")

    @cuda.jit
    def add(x, y, out, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = x[i] + y[i]

    hx, hy, expected = host_inputs(n)
    x, y = cuda.to_device(hx), cuda.to_device(hy)
    out = cuda.device_array(n, dtype=np.float32)
    blocks, threads = grid[0], block[0]

    def run(count):
        for _ in range(count):
            add[blocks, threads](x, y, out, n)

    def check():
        return np.array_equal(out.copy_to_host(), expected)

    return run, cuda.synchronize, check


# ---- the C++ anchor ---------------------------------------------------------------------------------

def find_or_build(path, name, source, nvcc_flags, option):
    """A C++ anchor: `path` when given, else a build of `source` found under build/, else built there by nvcc."""
    if path:
        if not os.path.isfile(path):
            raise NotAvailable(f"{path} does not exist (build it: nvcc {' '.join(nvcc_flags)} -o {path} "
                               f"bench/{source} -lcuda)")
        return path
    for candidate in (os.path.join(REPO, "build", "gpu-check", name), os.path.join(REPO, "build", "bench", name)):
        if os.path.isfile(candidate):
            return candidate
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise NotAvailable(f"no {name} and no nvcc to build it (pass {option})")
    target = os.path.join(REPO, "build", "bench", name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    print(f"building {target} with nvcc ...", flush=True)
    result = subprocess.run([nvcc, *nvcc_flags, "-o", target, os.path.join(REPO, "bench", source), "-lcuda"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise NotAvailable("nvcc failed: " + (result.stderr.strip().splitlines() or ["?"])[-1])
    return target


def setup_cpp(library_path, n, grid, block):
    """The C++ loop inside this process, on jiasu's own CUfunction and arrays."""
    import jiasu
    library = ctypes.CDLL(find_or_build(library_path, "launch_loop_lib.so", "launch_loop_lib.cpp",
                                        ["-O2", "-shared", "-Xcompiler", "-fPIC"], "--launch-loop-lib"))
    rep = library.launch_loop_rep
    rep.restype = ctypes.c_double
    rep.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint] + [ctypes.c_ulonglong] * 3 + [ctypes.c_int, ctypes.c_long]
    hx, hy, expected = host_inputs(n)
    x, y, out = jiasu_arrays(hx, hy)
    kernel = jiasu.RawKernel(SOURCE, "add")  # kept alive by run(): its module holds the CUfunction
    pointers = [a.__cuda_array_interface__["data"][0] for a in (x, y, out)]

    def run(count):
        us = rep(kernel.handle, grid[0], block[0], *pointers, n, count)
        if us < 0:
            raise RuntimeError(f"launch_loop_rep: CUDA error {int(-us)}")

    def check():
        return np.array_equal(out.get(), expected)

    return run, jiasu.synchronize, check


def prepare_cpp_process(binary_path, n, threads, launches, warmup):
    """The C++ loop in a process of its own: finds (or builds) it and writes the kernel's CUBIN once; returns
    run_once() -> µs per launch of one process run."""
    import jiasu
    binary = find_or_build(binary_path or os.environ.get("JIASU_LAUNCH_LOOP"), "launch_loop", "launch_loop.cpp",
                           ["-O2"], "--launch-loop")
    folder = tempfile.TemporaryDirectory()  # lives as long as run_once
    cubin_path = os.path.join(folder.name, "add.cubin")
    with open(cubin_path, "wb") as f:
        f.write(jiasu.compile_cuda(SOURCE, arch=jiasu.get_device().arch))
    command = [binary, "--module", cubin_path, "--kernel", "add", "--n", str(n), "--threads", str(threads),
               "--launches", str(launches), "--reps", "1", "--warmup", str(warmup)]

    def run_once(folder=folder):
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        lines = [line for line in result.stdout.splitlines() if line.strip().startswith("{")]
        if not lines:
            raise RuntimeError(f"launch_loop exited {result.returncode} without JSON: "
                               f"{(result.stderr or result.stdout).strip()[-300:]}")
        data = json.loads(lines[-1])
        if not data.get("ok"):
            raise RuntimeError(f"launch_loop: {data.get('error')}")
        return data["us_per_launch"]

    return run_once


# ---- driver -----------------------------------------------------------------------------------------

def time_rep(run, sync, count):
    sync()
    t0 = time.perf_counter()
    run(count)
    sync()
    return (time.perf_counter() - t0) / count * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--launch-loop", help="path of the built bench/launch_loop.cpp (default: find or build it)")
    parser.add_argument("--launch-loop-lib", help="path of the built bench/launch_loop_lib.cpp (default: find or build it)")
    parser.add_argument("--n", type=int, default=1000, help="array length (default 1000: 4 blocks of 256)")
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--launches", type=int, default=20000, help="launches per repetition")
    parser.add_argument("--numba-launches", type=int, default=1000, help="launches per repetition for Numba")
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--only", help="comma-separated subset of: cpp,cpp_process,jiasu,jiasu_np_int32,jiasu_kernel,"
                                       "jiasu_cuda_jit,cupy,numba")
    args = parser.parse_args()

    import_jiasu_or_skip("launch.py", args.json, "launch")
    blocks = (args.n + args.threads - 1) // args.threads
    grid, block = (blocks,), (args.threads,)
    wanted = set(args.only.split(",")) if args.only else None

    results = {}

    def enabled(name):
        return wanted is None or name in wanted

    # The C++ loop in a process of its own: checked once here, then one process per repetition below.
    cpp_process = None
    if enabled("cpp_process"):
        try:
            cpp_process = prepare_cpp_process(args.launch_loop, args.n, args.threads, args.launches, args.warmup)
            cpp_process()
            results["cpp_process"] = {"status": "ok", "reps_us": []}
        except NotAvailable as error:
            results["cpp_process"] = {"status": "n/a", "reason": str(error)}
        except Exception as error:  # noqa: BLE001
            results["cpp_process"] = {"status": "error", "reason": first_line(error)}

    setups = [
        ("cpp", lambda: setup_cpp(args.launch_loop_lib, args.n, grid, block), args.launches, args.warmup),
        ("jiasu", lambda: setup_jiasu(args.n, grid, block), args.launches, args.warmup),
        ("jiasu_np_int32", lambda: setup_jiasu(args.n, grid, block, use_np_int32=True), args.launches, args.warmup),
        ("jiasu_kernel", lambda: setup_python_kernel(add_n, jiasu_arrays, args.n, grid, block), args.launches,
         args.warmup),
        ("jiasu_cuda_jit", lambda: setup_python_kernel(add_n_numba, numba_layer_arrays, args.n, grid, block),
         args.launches, args.warmup),
        ("cupy", lambda: setup_cupy(args.n, grid, block), args.launches, args.warmup),
        ("numba", lambda: setup_numba(args.n, grid, block), args.numba_launches, min(args.warmup, 200)),
    ]
    active = []
    for name, setup, launches, warmup in setups:
        if not enabled(name):
            continue
        try:
            run, sync, check = setup()
            run(max(1, warmup))
            sync()
            if not check():
                raise RuntimeError("wrong result after warm-up")
            active.append((name, run, sync, launches))
            results[name] = {"status": "ok", "reps_us": [], "launches": launches}
        except NotAvailable as error:
            results[name] = {"status": "n/a", "reason": str(error)}
        except Exception as error:  # noqa: BLE001
            results[name] = {"status": "error", "reason": first_line(error)}

    def cpp_process_rep():
        if results.get("cpp_process", {}).get("status") != "ok":
            return
        try:
            results["cpp_process"]["reps_us"].append(cpp_process())
        except Exception as error:  # noqa: BLE001
            results["cpp_process"] = {"status": "error", "reason": first_line(error)}

    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(args.reps):
            cpp_process_rep()
            start = rep % max(1, len(active))  # rotate the order, so that no contender always runs first
            for name, run, sync, launches in active[start:] + active[:start]:
                try:
                    results[name]["reps_us"].append(time_rep(run, sync, launches))
                except Exception as error:  # noqa: BLE001
                    results[name] = {"status": "error", "reason": first_line(error)}
            active = [entry for entry in active if results[entry[0]]["status"] == "ok"]
    finally:
        if gc_was_enabled:
            gc.enable()
    for name, entry in results.items():
        if entry["status"] == "ok" and entry["reps_us"]:
            entry["us"] = median(entry["reps_us"])
            entry["min_us"] = min(entry["reps_us"])

    anchor = results.get("cpp", {}).get("us")
    for entry in results.values():
        if entry.get("status") == "ok" and anchor:
            entry["ratio_to_cpp"] = entry["us"] / anchor

    ratios = {name: results.get(name, {}).get("ratio_to_cpp") for name in ("jiasu", "jiasu_kernel", "jiasu_cuda_jit")}
    known = [r for r in ratios.values() if r is not None]
    goal = {"max_ratio_to_cpp": GOAL_RATIO, "ratio": ratios["jiasu"], "kernel_ratio": ratios["jiasu_kernel"],
            "cuda_jit_ratio": ratios["jiasu_cuda_jit"],
            "met": all(r <= GOAL_RATIO for r in known) if len(known) == 3 else None}

    labels = {"cpp": "C++ cuLaunchKernel loop", "cpp_process": "  the same, own process", "jiasu": "jiasu.RawKernel",
              "jiasu_np_int32": "jiasu.RawKernel (np.int32 n)", "jiasu_kernel": "@jiasu.kernel",
              "jiasu_cuda_jit": "jiasu's @cuda.jit(signature)",
              "cupy": "cupy.RawKernel", "numba": "numba.cuda.jit"}
    print(f"\nLaunch overhead: add<<<{blocks}, {args.threads}>>> on n={args.n} floats, median of {args.reps} reps "
          f"x {args.launches} launches (Numba x {args.numba_launches})")
    print(f"{'contender':32} {'us/launch':>10} {'min':>8} {'vs C++':>8}  issue")
    print("-" * 72)
    for name in ("cpp", "cpp_process", "jiasu", "jiasu_np_int32", "jiasu_kernel", "jiasu_cuda_jit", "cupy", "numba"):
        if name not in results:
            continue
        entry = results[name]
        issue = f"{ISSUE_FIGURES_US[name]:.2f}" if name in ISSUE_FIGURES_US else ""
        if entry["status"] == "ok":
            ratio = f"{entry['ratio_to_cpp']:.2f}x" if "ratio_to_cpp" in entry else "n/a"
            print(f"{labels[name]:32} {entry['us']:10.2f} {entry['min_us']:8.2f} {ratio:>8}  {issue}")
        else:
            print(f"{labels[name]:32} {'n/a':>10} {'':8} {'':8}  {issue}   [{entry['status']}: {entry['reason']}]")
    if goal["met"] is None:
        print(f"\ngoal jiasu <= {GOAL_RATIO}x C++: cannot tell (a jiasu contender or the C++ loop did not run)")
    else:
        print(f"\ngoal jiasu <= {GOAL_RATIO}x C++: {'MET' if goal['met'] else 'NOT MET'} "
              f"(RawKernel {ratios['jiasu']:.2f}x, @jiasu.kernel {ratios['jiasu_kernel']:.2f}x, "
              f"@cuda.jit(signature) {ratios['jiasu_cuda_jit']:.2f}x)")

    write_json(args.json, {
        "benchmark": "launch",
        "config": {"n": args.n, "blocks": blocks, "threads": args.threads, "reps": args.reps,
                   "launches": args.launches, "numba_launches": args.numba_launches, "warmup": args.warmup},
        "results": results,
        "goal": goal,
        "issue_figures_us": ISSUE_FIGURES_US,
        "env": env_info(),
    })


if __name__ == "__main__":
    main()
