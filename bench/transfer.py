#!/usr/bin/env python3
"""Host <-> device copy bandwidth (GB/s, 1 GB = 1e9 bytes) of jiasu, with PyTorch in the same run as the anchor.

Cases (jiasu / torch):
  h2d_pageable        arr.set(numpy)                  dev.copy_(torch.from_numpy(numpy))
  h2d_pageable_alloc  jiasu.asarray(numpy)            torch.from_numpy(numpy).to("cuda")
  d2h_pageable        arr.get()   (new NumPy array)   dev.cpu()   (new tensor)
  d2h_pageable_out    arr.get(out=numpy)              host.copy_(dev)
  h2d_pinned          arr.set(jiasu.pinned_empty)     dev.copy_(torch.empty(..., pin_memory=True))
  d2h_pinned          arr.get(out=pinned)             pinned.copy_(dev)
Every copy is synchronous. One repetition is: synchronize; t0; copy; synchronize; t1. The figure is
size / median(t1 - t0) over the repetitions, jiasu and torch repetitions interleaved.

Usage:  python3 bench/transfer.py [--json out.json] [--mib 256] [--reps 7] [--warmup 2]
Issue figures (H200, jiasu): pageable H2D 8.6 / D2H 14.6 GB/s, pinned 55 / 55 GB/s.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import env_info, first_line, import_jiasu_or_skip, median, write_json  # noqa: E402

CASES = [
    ("h2d_pageable", "H2D pageable", "arr.set(np)", "t.copy_(from_numpy)"),
    ("h2d_pageable_alloc", "H2D pageable + alloc", "jiasu.asarray(np)", "from_numpy.to(cuda)"),
    ("d2h_pageable", "D2H pageable + alloc", "arr.get()", "t.cpu()"),
    ("d2h_pageable_out", "D2H pageable, existing", "arr.get(out=np)", "host.copy_(t)"),
    ("h2d_pinned", "H2D pinned", "arr.set(pinned)", "t.copy_(pinned)"),
    ("d2h_pinned", "D2H pinned", "arr.get(out=pinned)", "pinned.copy_(t)"),
]
ISSUE_FIGURES = {"h2d_pageable": 8.6, "d2h_pageable": 14.6, "h2d_pinned": 55.0, "d2h_pinned": 55.0}


def jiasu_cases(jiasu, source, count):
    """Callables doing one synchronous copy each, plus synchronize and a correctness check."""
    dev = jiasu.empty(count, dtype=np.float32)
    host_out = np.empty(count, dtype=np.float32)
    host_out[:] = 0  # touch every page now, not inside the timed copy
    pinned = jiasu.pinned_empty(count, np.float32)
    pinned[:] = source

    cases = {
        "h2d_pageable": lambda: dev.set(source),
        "h2d_pageable_alloc": lambda: jiasu.asarray(source),
        "d2h_pageable": lambda: dev.get(),
        "d2h_pageable_out": lambda: dev.get(out=host_out),
        "h2d_pinned": lambda: dev.set(pinned),
        "d2h_pinned": lambda: dev.get(out=pinned),
    }

    def check():
        dev.set(source)
        pinned[:] = 0
        dev.get(out=pinned)
        return np.array_equal(pinned, source) and np.array_equal(dev.get(out=host_out), source)

    def cleanup():
        dev.free()

    return cases, jiasu.synchronize, check, cleanup


def torch_cases(source, count):
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    host = torch.from_numpy(source)
    dev = torch.empty(count, dtype=torch.float32, device="cuda")
    host_out = torch.empty(count, dtype=torch.float32)
    host_out.zero_()
    pinned = torch.empty(count, dtype=torch.float32, pin_memory=True)
    pinned.copy_(host)

    cases = {
        "h2d_pageable": lambda: dev.copy_(host),
        "h2d_pageable_alloc": lambda: host.to("cuda"),
        "d2h_pageable": lambda: dev.cpu(),
        "d2h_pageable_out": lambda: host_out.copy_(dev),
        "h2d_pinned": lambda: dev.copy_(pinned),
        "d2h_pinned": lambda: pinned.copy_(dev),
    }

    def check():
        dev.copy_(host)
        pinned.zero_()
        pinned.copy_(dev)
        torch.cuda.synchronize()
        return bool(torch.equal(pinned, host))

    def cleanup():
        pass

    return cases, torch.cuda.synchronize, check, cleanup


def time_once(copy, sync):
    sync()
    t0 = time.perf_counter()
    result = copy()
    sync()
    elapsed = time.perf_counter() - t0
    del result  # freeing what asarray()/get()/.cpu() made is not part of the copy
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--mib", type=int, default=256, help="transfer size in MiB (default 256)")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--no-torch", action="store_true", help="skip the torch anchor")
    args = parser.parse_args()

    jiasu = import_jiasu_or_skip("transfer.py", args.json, "transfer")
    nbytes = args.mib * 1024 * 1024
    count = nbytes // 4
    source = np.random.default_rng(0).random(count, dtype=np.float32)

    libraries = {}
    try:
        libraries["jiasu"] = jiasu_cases(jiasu, source, count)
    except Exception as error:  # noqa: BLE001
        libraries["jiasu"] = first_line(error)
    if args.no_torch:
        libraries["torch"] = "skipped (--no-torch)"
    else:
        try:
            libraries["torch"] = torch_cases(source, count)
        except ImportError as error:
            libraries["torch"] = f"not installed ({first_line(error)})"
        except Exception as error:  # noqa: BLE001
            libraries["torch"] = first_line(error)

    results = {}
    for lib, value in libraries.items():
        if isinstance(value, str):
            results[lib] = {"status": "n/a", "reason": value}
            continue
        cases, sync, check, _ = value
        try:
            if not check():
                raise RuntimeError("round trip returned wrong data")
            for copy in cases.values():
                for _ in range(args.warmup):
                    time_once(copy, sync)
            results[lib] = {"status": "ok", "cases": {key: {"seconds": []} for key in cases}}
        except Exception as error:  # noqa: BLE001
            results[lib] = {"status": "error", "reason": first_line(error)}

    active = [lib for lib in libraries if results[lib]["status"] == "ok"]
    for key, *_ in CASES:
        for _ in range(args.reps):
            for lib in active:
                entry = results[lib]["cases"][key]
                if "error" in entry:
                    continue
                cases, sync = libraries[lib][0], libraries[lib][1]
                try:
                    entry["seconds"].append(time_once(cases[key], sync))
                except Exception as error:  # noqa: BLE001
                    entry["error"] = first_line(error)
    for lib in active:
        for key, entry in results[lib]["cases"].items():
            if entry["seconds"] and "error" not in entry:
                entry["gbps"] = nbytes / median(entry["seconds"]) / 1e9
                entry["best_gbps"] = nbytes / min(entry["seconds"]) / 1e9
        try:
            libraries[lib][3]()
        except Exception:  # noqa: BLE001
            pass

    def cell(lib, key):
        entry = results.get(lib, {}).get("cases", {}).get(key, {})
        return f"{entry['gbps']:.1f}" if "gbps" in entry else "n/a"

    print(f"\nHost<->device copies of {args.mib} MiB, GB/s (1e9 B/s), median of {args.reps} reps")
    print(f"{'case':24} {'jiasu':>7} {'torch':>7} {'j/t':>6} {'issue':>6}   jiasu call / torch call")
    print("-" * 96)
    for key, label, jiasu_call, torch_call in CASES:
        j, t = cell("jiasu", key), cell("torch", key)
        ratio = f"{float(j) / float(t):.2f}" if j != "n/a" and t != "n/a" else ""
        issue = f"{ISSUE_FIGURES[key]:.1f}" if key in ISSUE_FIGURES else ""
        print(f"{label:24} {j:>7} {t:>7} {ratio:>6} {issue:>6}   {jiasu_call} / {torch_call}")
    for lib in ("jiasu", "torch"):
        entry = results[lib]
        if entry["status"] != "ok":
            print(f"{lib}: {entry['status']}: {entry['reason']}")
        else:
            for key, case in entry["cases"].items():
                if "error" in case:
                    print(f"{lib} {key}: error: {case['error']}")

    write_json(args.json, {
        "benchmark": "transfer",
        "config": {"mib": args.mib, "bytes": nbytes, "dtype": "float32", "reps": args.reps, "warmup": args.warmup},
        "results": results,
        "issue_figures_gbps": ISSUE_FIGURES,
        "env": env_info(),
    })


if __name__ == "__main__":
    main()
