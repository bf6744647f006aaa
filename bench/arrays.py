"""Array operations side by side: jiasu.Array, torch and CuPy on one GPU, and jiasu's CPU backend beside NumPy.

  copy            device-to-device copy of 2^28 float32 (the bandwidth anchor), GB/s counting read + write
  add             a + b, 2^28 float32, GB/s (12 bytes per element)
  fused           a * 2.0 + b through @jiasu.vectorize (one kernel; torch and CuPy run two ops), GB/s of 3 streams
  broadcast       (4096, 1) + (1, 65536) float32, GB/s of the output
  transposed      a.T + b, (16384, 16384) float32, GB/s (12 bytes per element)
  sum             sum of 2^28 float32 (all axes), GB/s read
  sum0 / sum1     sum(axis=0) / sum(axis=1) of a (16384, 16384) float32, GB/s read
  max1 / argmax1  max / argmax along axis 1 of a (16384, 16384) float32, GB/s read
  small           a + b on 1000 float32, µs per call (dispatch cost; calls back to back)
  cpu add / sum   the CPU backend on 2^24 float32 beside NumPy, GB/s (alone, without a GPU: --cpu); also
                  sum(axis=0) of that as a square, and argmax
Large cases: the median over reps of `inner` calls, timed with each library's own CUDA events.
Every result is also checked against NumPy on a slice. A contender that lacks an operation is n/a, with the reason.

Usage: python3 bench/arrays.py [--json FILE] [--reps 7] [--quick]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

GB = 1e9


class Contender:
    """How to make arrays, synchronise and time on one library."""

    def __init__(self, name, asarray, sync, events):
        self.name, self.asarray, self.sync, self.events = name, asarray, sync, events


def jiasu_contender(jiasu):
    def events():
        start, end = jiasu.Event(), jiasu.Event()
        return (lambda: start.record()), (lambda: (end.record(), end.synchronize(), start.elapsed_time(end))[-1])
    return Contender("jiasu", jiasu.asarray, jiasu.synchronize, events)


def torch_contender():
    import torch

    def events():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        return (lambda: start.record()), (lambda: (end.record(), end.synchronize(), start.elapsed_time(end))[-1])
    return Contender("torch", lambda x: torch.from_numpy(x).cuda(), torch.cuda.synchronize, events)


def cupy_contender():
    import cupy

    def events():
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        return (lambda: start.record()), (lambda: (end.record(), end.synchronize(),
                                                   cupy.cuda.get_elapsed_time(start, end))[-1])
    return Contender("cupy", cupy.asarray, cupy.cuda.Device().synchronize, events)


def to_numpy(x):
    if hasattr(x, "get"):  # jiasu, CuPy
        return x.get()
    if hasattr(x, "cpu"):  # torch
        return x.cpu().numpy()
    return x  # NumPy


def time_ms(contender, op, reps, inner):
    """Median milliseconds per call of op(), timed with the contender's events."""
    op()
    contender.sync()
    times = []
    for _ in range(reps):
        start, stop = contender.events()
        start()
        for _ in range(inner):
            op()
        times.append(stop() / inner)
    return median(times)


def make_cases(jiasu, np, quick):
    n = 1 << (24 if quick else 28)
    side = 4096 if quick else 16384
    rng = np.random.default_rng(0)
    vector = rng.random(n, dtype=np.float32)
    square = rng.random((side, side), dtype=np.float32)
    col, row = rng.random((4096, 1), dtype=np.float32), rng.random((1, 16384 if quick else 65536), dtype=np.float32)

    def fused_op(lib):
        if lib.name != "jiasu":
            return lambda a, b: a * 2.0 + b

        @jiasu.vectorize
        def fma(x, y):
            return x * 2.0 + y

        return fma

    # name: (inputs, op(lib) -> f(*arrays), reference(*host arrays), bytes moved, inner calls)
    return {
        "copy": ((vector,), lambda lib: (lambda a: a.copy()) if lib.name != "torch" else (lambda a: a.clone()),
                 lambda a: a, 8 * n, 20),
        "add": ((vector, vector[::-1].copy()), lambda lib: (lambda a, b: a + b), lambda a, b: a + b, 12 * n, 20),
        "fused": ((vector, vector[::-1].copy()), fused_op, lambda a, b: a * np.float32(2.0) + b, 12 * n, 20),
        "broadcast": ((col, row), lambda lib: (lambda a, b: a + b), lambda a, b: a + b,
                      4 * col.size * row.size, 20),
        "transposed": ((square, square[::-1].copy()), lambda lib: (lambda a, b: a.T + b), lambda a, b: a.T + b,
                       12 * square.size, 10),
        "sum": ((vector,), lambda lib: (lambda a: a.sum()), lambda a: a.astype(np.float64).sum(), 4 * n, 20),
        "sum0": ((square,), lambda lib: (lambda a: a.sum(axis=0)), lambda a: a.astype(np.float64).sum(axis=0),
                 4 * square.size, 10),
        "sum1": ((square,), lambda lib: (lambda a: a.sum(axis=1)), lambda a: a.astype(np.float64).sum(axis=1),
                 4 * square.size, 10),
        "max1": ((square,), lambda lib: (lambda a: a.max(axis=1)) if lib.name != "torch" else
                 (lambda a: a.amax(dim=1)), lambda a: a.max(axis=1), 4 * square.size, 10),
        "argmax1": ((square,), lambda lib: (lambda a: a.argmax(axis=1)) if lib.name != "torch" else
                    (lambda a: a.argmax(dim=1)), lambda a: a.argmax(axis=1), 4 * square.size, 10),
    }


def check(result, expected, np):
    got = to_numpy(result).astype(np.float64).ravel()
    want = np.asarray(expected, dtype=np.float64).ravel()
    # Sums of 2^28 values in float32 differ from the float64 sum by rounding of the partial sums.
    if not np.allclose(got[:4096], want[:4096], rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(want[:4096]).max()))):
        raise AssertionError(f"wrong result: {got[:4]} vs {want[:4]}")


def run_gpu(jiasu, np, contenders, reps, quick):
    results = {}
    for name, (inputs, op_for, reference, nbytes, inner) in make_cases(jiasu, np, quick).items():
        expected = reference(*inputs)
        row = {}
        for lib in contenders:
            try:
                arrays = [lib.asarray(x) for x in inputs]
                op = op_for(lib)
                check(op(*arrays), expected, np)
                ms = time_ms(lib, lambda: op(*arrays), reps, inner)
                row[lib.name] = {"ms": ms, "gbs": nbytes / (ms * 1e-3) / GB}
            except Exception as error:  # noqa: BLE001 - a missing operation is reported, not fatal
                row[lib.name] = {"na": first_line(error)}
            finally:
                arrays = None
                lib.sync()
        results[name] = row
    return results


def run_small(np, contenders, calls=10000, reps=5):
    x = np.random.default_rng(1).random(1000, dtype=np.float32)
    row = {}
    for lib in contenders:
        try:
            a, b = lib.asarray(x), lib.asarray(x)
            check(a + b, x + x, np)
            times = []
            for _ in range(reps):
                lib.sync()
                t = time.perf_counter()
                for _ in range(calls):
                    a + b
                lib.sync()
                times.append((time.perf_counter() - t) / calls * 1e6)
            row[lib.name] = {"us": median(times)}
        except Exception as error:  # noqa: BLE001
            row[lib.name] = {"na": first_line(error)}
    return row


def run_cpu(jiasu, np, reps, quick):
    n = 1 << (22 if quick else 24)
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    y = x[::-1].copy()
    side = 1 << (n.bit_length() // 2)  # a square of n elements
    cases = {"cpu add": (lambda a, b: a + b, 12 * n), "cpu sum": (lambda a, b: a.sum(), 4 * n),
             "cpu sum0": (lambda a, b: a.reshape(side, side).sum(axis=0), 4 * n),
             "cpu argmax": (lambda a, b: a.argmax(), 4 * n)}
    results = {}
    for name, (op, nbytes) in cases.items():
        row = {}
        for lib, (a, b) in (("numpy", (x, y)),
                            ("jiasu", (jiasu.asarray(x, device="cpu"), jiasu.asarray(y, device="cpu")))):
            try:
                check(op(a, b), op(x.astype(np.float64), y.astype(np.float64)), np)
                times = []
                for _ in range(reps):
                    t = time.perf_counter()
                    for _ in range(10):
                        op(a, b)
                    times.append((time.perf_counter() - t) / 10)
                row[lib] = {"ms": median(times) * 1e3, "gbs": nbytes / median(times) / GB}
            except Exception as error:  # noqa: BLE001
                row[lib] = {"na": first_line(error)}
        results[name] = row
    return results


def cell(row, lib, key):
    entry = row.get(lib, {})
    if "na" in entry:
        return "n/a"
    return f"{entry[key]:.1f}" if key in entry else "-"


def print_cpu(cpu):
    print(f"{'CPU backend':<12}{'jiasu':>10}{'numpy':>10}  GB/s")
    for case, row in cpu.items():
        j, n_ = row.get("jiasu", {}).get("gbs"), row.get("numpy", {}).get("gbs")
        ratio = f"{j / n_:.2f}x NumPy" if j and n_ else "-"
        print(f"{case:<12}{cell(row, 'jiasu', 'gbs'):>10}{cell(row, 'numpy', 'gbs'):>10}  {ratio}")
        for lib, entry in row.items():
            if "na" in entry:
                print(f"  n/a: {case} {lib}: {entry['na']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--cpu", action="store_true", help="only the CPU backend beside NumPy (needs no GPU)")
    args = parser.parse_args()
    if args.cpu:
        import jiasu
        import numpy as np

        cpu = run_cpu(jiasu, np, args.reps, args.quick)
        print_cpu(cpu)
        write_json(args.json, {"benchmark": "arrays", "env": env_info(), "cpu": cpu, "quick": args.quick})
        return
    jiasu = import_jiasu_or_skip("arrays.py", args.json, "arrays")
    import numpy as np

    contenders = [jiasu_contender(jiasu)]
    missing = {}
    for make in (torch_contender, cupy_contender):
        try:
            contenders.append(make())
        except Exception as error:  # noqa: BLE001
            missing[make.__name__.split("_")[0]] = first_line(error)

    gpu = run_gpu(jiasu, np, contenders, args.reps, args.quick)
    small = run_small(np, contenders)
    cpu = run_cpu(jiasu, np, args.reps, args.quick)

    names = [c.name for c in contenders]
    copies = [entry["gbs"] for entry in gpu["copy"].values() if "gbs" in entry]
    copy_gbs = max(copies) if copies else None  # the fastest D2D copy of the run is the anchor
    print("\nArray operations, GB/s (higher is better); ratios: jiasu / torch and jiasu / the D2D copy")
    print(f"{'case':<12}" + "".join(f"{n:>10}" for n in names) + f"{'j/torch':>10}{'j/copy':>10}")
    for case, row in gpu.items():
        j, t = row.get("jiasu", {}).get("gbs"), row.get("torch", {}).get("gbs")
        ratio = f"{j / t:.3f}" if j and t else "-"
        of_copy = f"{j / copy_gbs:.3f}" if j and copy_gbs and case != "broadcast" else "-"
        print(f"{case:<12}" + "".join(f"{cell(row, n, 'gbs'):>10}" for n in names) + f"{ratio:>10}{of_copy:>10}")
    print(f"{'small us':<12}" + "".join(f"{cell(small, n, 'us'):>10}" for n in names))
    print_cpu(cpu)
    for case, row in {**gpu, "small": small}.items():
        for lib, entry in row.items():
            if "na" in entry:
                print(f"  n/a: {case} {lib}: {entry['na']}")
    for lib, why in missing.items():
        print(f"  {lib} not available: {why}")
    write_json(args.json, {"benchmark": "arrays", "env": env_info(), "gpu": gpu, "small": small, "cpu": cpu,
                           "missing": missing, "quick": args.quick})


if __name__ == "__main__":
    main()
