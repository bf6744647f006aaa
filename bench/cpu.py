#!/usr/bin/env python3
"""CPU backend: the seed kernel and a shared-memory block reduction on jiasu's CPU backend, beside hand-written C++.

Jobs (float32, 256 threads a block):
  seed     out[i] = x[i] + y[i] on 2^24 and 1e6 elements; GB/s counts 12 bytes an element
  reduce   a shared-memory tree reduction on 2^22 elements: one partial sum a block, written by thread 0
           (no atomics, so that the C++ does the same work); the kernel has barriers, so jiasu runs it on fibers

Contenders:
  jiasu      the @jiasu.kernel functions below, jiasu.set_backend("cpu"), on NumPy arrays (used in place)
  C++        bench/cpu_reference.cpp, the same loop hand-written, built here with jiasu's host compiler
             ($JIASU_CXX, else c++, g++, clang++) -O2 -std=c++17 -shared -fPIC -pthread and called through ctypes,
             on jiasu's number of OS threads ($JIASU_CPU_THREADS, else all cores), from a persistent pool as
             jiasu's; the anchor.
             For the reduction it sums each block in the kernel's tree order (bit-identical partial sums);
  C++ seq    (reduction only) the same with a plain sequential float loop per block, for reference
  simulator  Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), when numba is installed, in a subprocess and on
             much smaller arrays (it runs every GPU thread as a Python thread): compared per element

Method: a fresh compile cache (unless --warm-cache), so the first jiasu call of each kernel, timed on its own,
includes compiling it with the host compiler; every contender's result is checked against NumPy (float64 sums
for the reduction); then --reps repetitions interleaved across the contenders (order rotated each rep), each one
call timed from Python with the garbage collector off; the figure is the median. "x C++" is C++ time / jiasu
time (higher is better); "vs sim" is how many times faster per element jiasu is than the simulator.

Usage:  python3 bench/cpu.py [--json out.json] [--reps 11] [--seed-sizes 16777216,1000000] [--reduce-n 4194304]
                             [--sim-seed-n 16384] [--sim-reduce-n 4096] [--no-simulator] [--warm-cache]
Goal (from the issue): jiasu >= 0.5x the hand-written C++ on both jobs; report the simulator ratio.
"""
import argparse
import ctypes
import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import jiasu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, median, write_json  # noqa: E402
from seed_kernels import add  # noqa: E402  (the seed article's kernel)

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
BLOCK = 256  # threads a block; the reduction's shared array and first stride (128) assume it
GOAL = 0.5


@jiasu.kernel
def block_reduce(x, partial):
    sh = jiasu.shared.array(256, jiasu.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    if i < x.size:
        sh[t] = x[i]
    else:
        sh[t] = 0.0
    jiasu.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        jiasu.syncthreads()
        s //= 2
    if t == 0:
        partial[jiasu.blockIdx.x] = sh[0]


# The same jobs for Numba's CUDA simulator, run as `python3 -c SIMULATOR_PROBE SEED_N REDUCE_N REPS`; prints JSON.
SIMULATOR_PROBE = r"""
import json, sys, time
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # removed in NumPy 2.5, still referenced by numba
try:
    from numba import cuda, float32
except ImportError as error:
    print(json.dumps({"n/a": f"not installed ({error})"})); sys.exit(0)

@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]

@cuda.jit
def block_reduce(x, partial):
    sh = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = sh[0]

seed_n, reduce_n, reps = (int(a) for a in sys.argv[1:4])
rng = np.random.default_rng(0)
def timed(launch):
    launch()  # warm-up (and the result checked below)
    times = []
    for _ in range(reps):
        t = time.perf_counter(); launch(); times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2] * 1e3
x, y = rng.random(seed_n, dtype=np.float32), rng.random(seed_n, dtype=np.float32)
out = np.zeros_like(x)
seed_ms = timed(lambda: add[(seed_n + 255) // 256, 256](x, y, out))
assert np.array_equal(out, x + y), "simulator: wrong seed result"
blocks = (reduce_n + 255) // 256
x = rng.random(reduce_n, dtype=np.float32)
partial = np.zeros(blocks, np.float32)
reduce_ms = timed(lambda: block_reduce[blocks, 256](x, partial))
expected = np.pad(x.astype(np.float64), (0, blocks * 256 - reduce_n)).reshape(blocks, 256).sum(axis=1)
assert np.allclose(partial, expected, rtol=1e-5), "simulator: wrong reduction result"
import numba
print(json.dumps({"seed": {"n": seed_n, "ms": seed_ms}, "reduce": {"n": reduce_n, "ms": reduce_ms},
                  "numba": numba.__version__}))
"""


def build_reference(compiler):
    """Compiles bench/cpu_reference.cpp into build/bench/ and loads it; returns (library, seconds it took)."""
    target = os.path.join(REPO, "build", "bench", f"cpu_reference_{os.getpid()}.so")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    command = [compiler, "-O2", "-std=c++17", "-shared", "-fPIC", "-pthread", "-o", target,
               os.path.join(BENCH_DIR, "cpu_reference.cpp")]
    t = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if result.returncode != 0:
        raise RuntimeError("building cpu_reference.cpp failed: " + (result.stderr.strip().splitlines() or ["?"])[-1])
    library = ctypes.CDLL(target)
    os.unlink(target)  # already loaded; one file a run would pile up otherwise
    pointer = ctypes.POINTER(ctypes.c_float)
    library.seed_add.argtypes = [pointer, pointer, pointer, ctypes.c_long, ctypes.c_int]
    library.block_reduce.argtypes = [pointer, pointer, ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return library, seconds


def float_pointer(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


# ---- jobs: each returns {contender: (run(), check() -> error text or None)} ---------------------------

def seed_job(n, library, threads, rng):
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    expected = x + y
    outs = {}

    def contender(name, run):
        out = outs[name] = np.full(n, np.nan, np.float32)
        return (lambda: run(out)), (lambda: None if np.array_equal(out, expected) else "wrong result")

    blocks = (n + BLOCK - 1) // BLOCK
    px, py = float_pointer(x), float_pointer(y)
    return {"jiasu": contender("jiasu", lambda out: add[blocks, BLOCK](x, y, out)),
            "cpp": contender("cpp", lambda out: library.seed_add(px, py, float_pointer(out), n, threads))}


def reduce_job(n, library, threads, rng):
    x = rng.random(n, dtype=np.float32)
    blocks = (n + BLOCK - 1) // BLOCK
    expected = np.pad(x.astype(np.float64), (0, blocks * BLOCK - n)).reshape(blocks, BLOCK).sum(axis=1)
    px = float_pointer(x)
    partials = {}

    def contender(name, run):
        partial = partials[name] = np.full(blocks, np.nan, np.float32)

        def check():
            if not np.allclose(partial, expected, rtol=1e-5, atol=1e-5):
                return f"wrong result (max error {np.nanmax(np.abs(partial - expected)):.3g})"
            if name == "jiasu" and "cpp" in partials and not np.array_equal(partial, partials["cpp"]):
                return "not bit-identical to the C++ tree order"  # same float adds in the same order
            return None
        return (lambda: run(partial)), check

    return {"cpp": contender("cpp", lambda p: library.block_reduce(px, float_pointer(p), n, BLOCK, threads, 1)),
            "jiasu": contender("jiasu", lambda p: block_reduce[blocks, BLOCK](x, p)),
            "cpp_seq": contender("cpp_seq", lambda p: library.block_reduce(px, float_pointer(p), n, BLOCK, threads, 0))}


def run_simulator(seed_n, reduce_n, reps):
    if importlib.util.find_spec("numba") is None:
        return {"n/a": "not installed"}
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    try:
        result = subprocess.run([sys.executable, "-c", SIMULATOR_PROBE, str(seed_n), str(reduce_n), str(reps)],
                                env=env, capture_output=True, text=True, timeout=600)
        lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
        if not lines:
            return {"error": f"exit {result.returncode}: " + (result.stderr.strip().splitlines() or ["?"])[-1]}
        return json.loads(lines[-1])
    except Exception as error:  # noqa: BLE001
        return {"error": first_line(error)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--seed-sizes", default=f"{1 << 24},{10**6}", help="comma-separated element counts")
    parser.add_argument("--reduce-n", type=int, default=1 << 22)
    parser.add_argument("--sim-seed-n", type=int, default=1 << 14)
    parser.add_argument("--sim-reduce-n", type=int, default=1 << 12)
    parser.add_argument("--sim-reps", type=int, default=3)
    parser.add_argument("--no-simulator", action="store_true", help="skip Numba's CUDA simulator")
    parser.add_argument("--warm-cache", action="store_true",
                        help="use jiasu's usual compile cache (the first call may then not compile)")
    args = parser.parse_args()

    cache = None
    if not args.warm_cache:
        cache = tempfile.TemporaryDirectory(prefix="jiasu-bench-cpu-")
        os.environ["JIASU_CACHE_DIR"] = cache.name  # read on the first compile, which is below
    jiasu.set_backend("cpu")
    try:
        compiler = jiasu._core.host_compiler()["path"]  # the one jiasu compiles its CPU kernels with
    except jiasu.LibraryNotFoundError as error:
        reason = f"no host C++ compiler ({first_line(error)})"
        print(f"cpu.py: {reason}; nothing to measure.")
        write_json(args.json, {"benchmark": "cpu", "skipped": reason, "env": env_info()})
        return
    threads = jiasu._core.cpu_threads()  # the OS threads of jiasu's CPU backend, given to the C++ too
    library, cpp_build_s = build_reference(compiler)
    rng = np.random.default_rng(0)

    jobs = [(f"seed n={n}", "seed", n, seed_job(n, library, threads, rng))
            for n in (int(s) for s in args.seed_sizes.split(",") if s)]
    jobs.append((f"reduce n={args.reduce_n}", "reduce", args.reduce_n, reduce_job(args.reduce_n, library, threads, rng)))

    # Warm-up and check; the first jiasu call of each kernel compiles it.
    results, compile_ms, active = {}, {}, []
    for label, kind, n, contenders in jobs:
        results[label] = {"kind": kind, "n": n}
        for name, (run, check) in contenders.items():
            try:
                t = time.perf_counter()
                run()
                first_ms = (time.perf_counter() - t) * 1e3
                if name == "jiasu" and kind not in compile_ms:
                    compile_ms[kind] = first_ms
                error = check()
                if error:
                    raise RuntimeError(error)
                results[label][name] = {"status": "ok", "reps_ms": []}
                active.append((label, name, run))
            except Exception as error:  # noqa: BLE001
                results[label][name] = {"status": "error", "reason": first_line(error)}

    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(args.reps):
            start = rep % max(1, len(active))  # rotate, so that no contender always runs first
            for label, name, run in active[start:] + active[:start]:
                t = time.perf_counter()
                run()
                results[label][name]["reps_ms"].append((time.perf_counter() - t) * 1e3)
    finally:
        if gc_was_enabled:
            gc.enable()

    simulator = {"skipped": "--no-simulator"} if args.no_simulator else \
        run_simulator(args.sim_seed_n, args.sim_reduce_n, args.sim_reps)

    for label, job in results.items():
        n = job["n"]
        for name, entry in job.items():
            if not isinstance(entry, dict) or not entry.get("reps_ms"):
                continue
            entry["ms"], entry["min_ms"] = median(entry["reps_ms"]), min(entry["reps_ms"])
            entry["melem_per_s"] = n / entry["ms"] / 1e3
            if job["kind"] == "seed":
                entry["gbps"] = 12 * n / entry["ms"] / 1e6
        jiasu_ms, cpp_ms = job.get("jiasu", {}).get("ms"), job.get("cpp", {}).get("ms")
        if jiasu_ms and cpp_ms:
            job["jiasu_x_cpp"] = cpp_ms / jiasu_ms
        sim = simulator.get(job["kind"])
        if jiasu_ms and sim:
            job["sim_over_jiasu_per_element"] = (sim["ms"] / sim["n"]) / (jiasu_ms / n)
    ratios = [job.get("jiasu_x_cpp") for job in results.values()]
    goal = {"min_x_cpp": GOAL, "ratios": ratios,
            "met": all(r >= GOAL for r in ratios) if ratios and None not in ratios else None}

    # ---- the table, last ----
    labels = {"jiasu": "jiasu (CPU backend)", "cpp": "C++ -O2", "cpp_seq": "C++ -O2, sequential sum"}
    print(f"\nCPU backend, {threads} OS threads, {BLOCK} threads a block, median of {args.reps} reps "
          f"(C++ reference built in {cpp_build_s:.2f} s)")
    print(f"{'job':22} {'contender':26} {'ms/call':>10} {'min':>9} {'GB/s':>7} {'Melem/s':>9} {'x C++':>7} {'vs sim':>9}")
    print("-" * 104)
    for label, job in results.items():
        for row, name in enumerate(name for name in ("jiasu", "cpp", "cpp_seq") if name in job):
            entry, shown = job[name], "" if row else label
            if entry["status"] != "ok":
                print(f"{shown:22} {labels[name]:26} {'n/a':>10}   [{entry['status']}: {entry['reason']}]")
                continue
            gbps = f"{entry['gbps']:.1f}" if "gbps" in entry else ""
            ratio = f"{job['cpp']['ms'] / entry['ms']:.2f}x" if job.get("cpp", {}).get("ms") else "n/a"
            sim = f"{job['sim_over_jiasu_per_element']:.0f}x" if name == "jiasu" and "sim_over_jiasu_per_element" in job \
                else ""
            print(f"{shown:22} {labels[name]:26} {entry['ms']:10.3f} {entry['min_ms']:9.3f} {gbps:>7} "
                  f"{entry['melem_per_s']:9.0f} {ratio:>7} {sim:>9}")
    print("x C++: C++ ms / this ms (higher is faster); vs sim: simulator time per element / jiasu's")
    for kind, ms in compile_ms.items():
        print(f"jiasu first call of the {kind} kernel{' (cold cache)' if cache else ''}: {ms:.0f} ms (compile included)")
    if "n/a" in simulator or "error" in simulator or "skipped" in simulator:
        reason = simulator.get("n/a") or simulator.get("error") or simulator.get("skipped")
        print(f"Numba CUDA simulator: n/a ({reason})")
    else:
        print("Numba CUDA simulator: " + ", ".join(
            f"{kind} n={simulator[kind]['n']}: {simulator[kind]['ms']:.1f} ms "
            f"({simulator[kind]['ms'] * 1e3 / simulator[kind]['n']:.2f} us/element)" for kind in ("seed", "reduce")))
    if goal["met"] is None:
        print(f"goal jiasu >= {GOAL}x C++: cannot tell (a contender did not run)")
    else:
        print(f"goal jiasu >= {GOAL}x C++: {'MET' if goal['met'] else 'NOT MET'} ("
              + ", ".join(f"{label} {r:.2f}x" for label, r in zip(results, ratios)) + ")")

    write_json(args.json, {
        "benchmark": "cpu",
        "config": {"threads": threads, "block": BLOCK, "reps": args.reps, "seed_sizes": args.seed_sizes,
                   "reduce_n": args.reduce_n, "cold_cache": cache is not None, "cpp_build_s": cpp_build_s,
                   "sim_seed_n": args.sim_seed_n, "sim_reduce_n": args.sim_reduce_n, "sim_reps": args.sim_reps},
        "results": results,
        "jiasu_first_call_ms": compile_ms,
        "simulator": simulator,
        "goal": goal,
        "env": env_info(),
    })
    if cache is not None:
        cache.cleanup()


if __name__ == "__main__":
    main()
