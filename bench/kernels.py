"""Python kernels side by side: jiasu @kernel, Numba-CUDA @cuda.jit and CuPy (cupyx.jit), same jobs, one run.

  launch          µs per launch of the seed kernel on 1000 elements (launch overhead), each contender called
                  through a lambda; bench/launch.py times the launch alone against a C++ loop in one process
  seed_numpy      the seed kernel on 1e6 float32 NumPy arrays (copies in and out included), ms per call
  seed_device     the seed kernel on 1e6 float32 device arrays, µs per call (launches back to back)
  big             the seed kernel on 2^28 float32 device arrays, GB/s (12 bytes per element, CUDA events)
  compile         first call in a fresh process: cold (empty cache) and cached, ms beyond context creation

Usage: python3 bench/kernels.py [--json FILE] [--launch-loop PATH]
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, import_numba_cuda, median, write_json  # noqa: E402

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

COMPILE_PROBE = f"""
import sys, time
sys.path.insert(0, {BENCH_DIR!r})
import numpy as np, jiasu
from seed_kernels import add
x = jiasu.asarray(np.ones(1000, np.float32)); out = jiasu.empty_like(x); jiasu.synchronize()
t = time.perf_counter(); add[4, 256](x, x, out); jiasu.synchronize()
print((time.perf_counter() - t) * 1e3)
"""


def per_call_us(launch, sync, calls, reps=5):
    times = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        for _ in range(calls):
            launch()
        sync()
        times.append((time.perf_counter() - t) / calls * 1e6)
    return median(times)


def contenders(n, jiasu, np):
    """(name, make(x, y, out host arrays) -> (launch, sync, device arrays)) for each available system."""
    from seed_kernels import add

    found = {}

    def jiasu_make(x, y, out, on_device):
        args = tuple(jiasu.asarray(a) for a in (x, y, out)) if on_device else (x, y, out)
        blocks = (x.size + 255) // 256
        return (lambda: add[blocks, 256](*args)), jiasu.synchronize, args
    found["jiasu"] = jiasu_make
    try:
        cuda = import_numba_cuda()

        @cuda.jit
        def numba_add(x, y, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = x[i] + y[i]

        def numba_make(x, y, out, on_device):
            args = tuple(cuda.to_device(a) for a in (x, y, out)) if on_device else (x, y, out)
            blocks = (x.size + 255) // 256
            return (lambda: numba_add[blocks, 256](*args)), cuda.synchronize, args
        found["numba"] = numba_make
    except Exception as error:  # noqa: BLE001
        found["numba"] = first_line(error)
    try:
        import cupy
        from cupyx import jit

        @jit.rawkernel()
        def cupy_add(x, y, out, n):
            i = jit.grid(1)
            if i < n:
                out[i] = x[i] + y[i]

        def cupy_make(x, y, out, on_device):
            if not on_device:
                return None
            args = tuple(cupy.asarray(a) for a in (x, y, out))
            blocks = (x.size + 255) // 256
            n = np.int32(x.size)
            return (lambda: cupy_add((blocks,), (256,), (*args, n))), cupy.cuda.runtime.deviceSynchronize, args
        found["cupy"] = cupy_make
    except Exception as error:  # noqa: BLE001
        found["cupy"] = first_line(error)
    return found


def cpp_loop_us(path, n, launches):
    if not path or not os.path.exists(path):
        return None
    import json
    result = subprocess.run([path, "--n", str(n), "--launches", str(launches), "--reps", "3", "--warmup", "3"],
                            capture_output=True, text=True, timeout=300)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1]).get("us_per_launch")
    except (ValueError, IndexError):
        return None


def compile_times(cache_dir):
    env = dict(os.environ, JIASU_CACHE_DIR=cache_dir, PYTHONDONTWRITEBYTECODE="1")
    out = {}
    for label in ("cold", "cached"):
        result = subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, capture_output=True, text=True,
                                timeout=120)
        out[label] = float(result.stdout.strip().splitlines()[-1]) if result.returncode == 0 else None
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json")
    parser.add_argument("--launch-loop", help="bench/launch_loop binary: the C++ anchor")
    args = parser.parse_args()
    jiasu = import_jiasu_or_skip("kernels.py", args.json, "kernels")
    import numpy as np

    import warnings
    warnings.simplefilter("ignore")  # the NumPy-argument PerformanceWarning is what we measure here
    rng = np.random.default_rng(0)
    found = contenders(1000, jiasu, np)
    results = {name: ({} if callable(make) else {"n/a": make}) for name, make in found.items()}

    def run(job, n, on_device, calls, check=True):
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        for name, make in found.items():
            if not callable(make):
                continue
            try:
                made = make(x, y, np.full(n, np.nan, np.float32), on_device)
                if made is None:
                    continue
                launch, sync, arrays = made
                launch()
                sync()
                if check:
                    got = arrays[2] if not on_device else np.asarray(
                        arrays[2].get() if hasattr(arrays[2], "get") else arrays[2].copy_to_host())
                    if not np.array_equal(got, x + y):
                        results[name][job] = "wrong result"
                        continue
                results[name][job] = per_call_us(launch, sync, calls)
            except Exception as error:  # noqa: BLE001
                results[name][job] = first_line(error)

    run("launch_us", 1000, True, 20000)
    run("seed_numpy_us", 1_000_000, False, 20)
    run("seed_device_us", 1_000_000, True, 2000)
    big = 1 << 28
    run("big_us", big, True, 10, check=False)
    for name in results:
        if isinstance(results[name].get("big_us"), float):
            results[name]["big_gbps"] = 12 * big / (results[name]["big_us"] * 1e-6) / 1e9
    cpp = {"launch_us": cpp_loop_us(args.launch_loop, 1000, 20000),
           "seed_device_us": cpp_loop_us(args.launch_loop, 1_000_000, 2000),
           "big_us": cpp_loop_us(args.launch_loop, big, 10)}
    if cpp["big_us"]:
        cpp["big_gbps"] = 12 * big / (cpp["big_us"] * 1e-6) / 1e9
    results["cpp"] = cpp
    import tempfile
    with tempfile.TemporaryDirectory() as cache_dir:
        results["jiasu"]["compile_ms"] = compile_times(cache_dir)

    def cell(value, spec):
        return format(value, spec) if isinstance(value, float) else ("n/a" if value is None else str(value)[:14])

    print("\nPython kernels: the seed kernel out[i] = x[i] + y[i] (float32)")
    header = f"{'job':34}" + "".join(f"{name:>16}" for name in ("jiasu", "numba", "cupy", "cpp")) + "   issue"
    print(header)
    print("-" * len(header))
    rows = [("launch, n=1e3 (us)", "launch_us", ".2f", "numba 73, C++ 3.6"),
            ("1e6 NumPy arrays (us/call)", "seed_numpy_us", ".0f", "numba 2808, goal <= 800"),
            ("1e6 device arrays (us/call)", "seed_device_us", ".2f", "numba 40, C++ 8.2, goal <= 10"),
            ("2^28 device arrays (GB/s)", "big_gbps", ".0f", "numba 3340, C++ 3485")]
    for label, key, spec, issue in rows:
        print(f"{label:34}" + "".join(f"{cell(results.get(name, {}).get(key), spec):>16}"
                                      for name in ("jiasu", "numba", "cupy", "cpp")) + f"   {issue}")
    compile_ms = results["jiasu"].get("compile_ms", {})
    print(f"{'jiasu first call, cold (ms)':34}{cell(compile_ms.get('cold'), '.1f'):>16}   goal <= 250")
    print(f"{'jiasu first call, cached (ms)':34}{cell(compile_ms.get('cached'), '.1f'):>16}   goal <= 50")
    write_json(args.json, {"benchmark": "kernels", "results": results, "env": env_info()})


if __name__ == "__main__":
    main()
