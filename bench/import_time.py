#!/usr/bin/env python3
"""Import time of jiasu: median over fresh interpreters of time.perf_counter() around the import, in the child.

Measured, interleaved run by run (one untimed warm-up round first, for the file cache):
  numpy              import numpy
  jiasu              import jiasu            (includes its numpy import)
  jiasu_after_numpy  import numpy untimed, then import jiasu (what jiasu itself adds)
Also, from one more child: whether libcuda is mapped after `import jiasu` (it must not be: importing
never touches the GPU) and the slowest modules by self time from `python -X importtime`.

Usage:  python3 bench/import_time.py [--json out.json] [--runs 10] [--python python3]
Goal (from the issue): import jiasu <= 0.15 s. Runs with or without a GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, median, write_json  # noqa: E402

GOAL_SECONDS = 0.15
SNIPPETS = {
    "numpy": ("", "import numpy"),
    "jiasu": ("", "import jiasu"),
    "jiasu_after_numpy": ("import numpy", "import jiasu"),
}
CHILD = """
import time
{setup}
t0 = time.perf_counter()
{statement}
print("SECONDS", time.perf_counter() - t0)
"""
PROBE = r"""
import json, sys
import jiasu
maps = ""
try:
    with open("/proc/self/maps") as f:
        maps = f.read()
except OSError:
    pass
print("PROBE", json.dumps({"version": jiasu.__version__, "file": jiasu.__file__,
                           "libcuda_loaded": "libcuda" in maps, "maps_readable": bool(maps),
                           "modules": len(sys.modules)}))
"""


def run_child(python, code, cwd, extra=()):
    result = subprocess.run([python, *extra, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)
    if result.returncode != 0:
        raise RuntimeError((result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1])
    return result


def measure(python, name, cwd):
    setup, statement = SNIPPETS[name]
    result = run_child(python, CHILD.format(setup=setup, statement=statement), cwd)
    for line in result.stdout.splitlines():
        if line.startswith("SECONDS "):
            return float(line.split()[1])
    raise RuntimeError("child printed no timing")


def importtime_top(python, cwd, count=10):
    """The modules with the largest self time in `python -X importtime -c 'import jiasu'` (µs)."""
    result = run_child(python, "import jiasu", cwd, extra=("-X", "importtime"))
    rows = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3:
            continue
        try:
            rows.append({"module": parts[2].strip(), "self_us": int(parts[0]), "cumulative_us": int(parts[1])})
        except ValueError:
            continue
    total = sum(row["self_us"] for row in rows)
    rows.sort(key=lambda row: row["self_us"], reverse=True)
    return rows[:count], total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--runs", type=int, default=10, help="fresh interpreters per measurement (default 10)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to measure (default: this one)")
    args = parser.parse_args()

    # Children start in an empty folder so that nothing in the current directory shadows an installed package.
    with tempfile.TemporaryDirectory() as cwd:
        samples = {name: [] for name in SNIPPETS}
        errors = {}
        for round_index in range(args.runs + 1):
            for name in SNIPPETS:
                if name in errors:
                    continue
                try:
                    seconds = measure(args.python, name, cwd)
                except Exception as error:  # noqa: BLE001
                    errors[name] = str(error)
                    continue
                if round_index > 0:  # round 0 warms the file cache
                    samples[name].append(seconds)
        probe, top, top_total = None, [], None
        if "jiasu" not in errors:
            try:
                result = run_child(args.python, PROBE, cwd)
                line = next(line for line in result.stdout.splitlines() if line.startswith("PROBE "))
                probe = json.loads(line[len("PROBE "):])
                top, top_total = importtime_top(args.python, cwd)
            except Exception as error:  # noqa: BLE001
                errors["probe"] = str(error)

    results = {}
    for name, values in samples.items():
        if name in errors:
            results[name] = {"status": "error", "reason": errors[name]}
        else:
            results[name] = {"status": "ok", "seconds": median(values), "min_seconds": min(values),
                             "max_seconds": max(values), "samples": values}
    jiasu_seconds = results["jiasu"].get("seconds")
    goal = {"max_seconds": GOAL_SECONDS, "seconds": jiasu_seconds,
            "met": (jiasu_seconds <= GOAL_SECONDS) if jiasu_seconds is not None else None}

    print(f"\nImport time, median of {args.runs} fresh interpreters ({args.python})")
    print(f"{'import':28} {'median s':>9} {'min s':>8} {'max s':>8}")
    print("-" * 56)
    labels = {"numpy": "import numpy", "jiasu": "import jiasu", "jiasu_after_numpy": "import jiasu (numpy loaded)"}
    for name, entry in results.items():
        if entry["status"] == "ok":
            print(f"{labels[name]:28} {entry['seconds']:9.4f} {entry['min_seconds']:8.4f} {entry['max_seconds']:8.4f}")
        else:
            print(f"{labels[name]:28} {'n/a':>9}   [{entry['reason']}]")
    if probe:
        print(f"\njiasu {probe['version']} from {probe['file']}")
        if probe["maps_readable"]:
            print(f"libcuda mapped after import: {'YES (import touched CUDA!)' if probe['libcuda_loaded'] else 'no'}")
    if top:
        print(f"slowest modules by self time (-X importtime, one run, sum of self times {top_total / 1e6:.3f} s):")
        for row in top:
            print(f"  {row['self_us'] / 1000:8.1f} ms  {row['module']}")
    if "probe" in errors:
        print(f"probe failed: {errors['probe']}")
    if goal["met"] is None:
        print(f"\ngoal import jiasu <= {GOAL_SECONDS} s: cannot tell (import failed)")
    else:
        print(f"\ngoal import jiasu <= {GOAL_SECONDS} s: {'MET' if goal['met'] else 'NOT MET'} ({jiasu_seconds:.3f} s)")

    write_json(args.json, {
        "benchmark": "import_time",
        "config": {"runs": args.runs, "python": args.python},
        "results": results,
        "goal": goal,
        "probe": probe,
        "importtime_top_self": top,
        "env": env_info(),
    })
    if "jiasu" in errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
