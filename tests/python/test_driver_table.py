"""core/runtime/driver_api.def against the CUDA toolkit's cudaTypedefs.h: every driver function jiasu asks
cuGetProcAddress for, at the CUDA version it names, must have the parameters jiasu passes. cuGetProcAddress
answers by name and version, and a name whose newest ABI is older than cuda.h's macro for it (cuGraphInstantiate,
which cuda.h maps to cuGraphInstantiateWithFlags) gives a function that reads other arguments than ours."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def typedefs_header():
    for base in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"):
        path = pathlib.Path(base, "include", "cudaTypedefs.h")
        if base and path.exists():
            return path
    pytest.skip("no CUDA toolkit headers (cudaTypedefs.h) to compare with")


def parameter_count(params):
    params = " ".join(params.split())
    return 0 if params in ("", "void") else params.count(",") + 1


def test_each_driver_function_has_the_parameters_of_the_abi_it_asks_for():
    text = typedefs_header().read_text()
    abis = {}  # name -> [(version, parameter count)], the per-thread-stream (_ptsz) variants left out
    for m in re.finditer(r"typedef CUresult \(CUDAAPI \*PFN_(\w+?)_v(\d+)\)\((.*?)\);", text, re.S):
        abis.setdefault(m.group(1), []).append((int(m.group(2)), parameter_count(m.group(3))))
    rows = re.findall(r"JIASU_CU\((\w+),\s*(\d+),\s*(\d),\s*\((.*?)\)\)\n",
                      (ROOT / "core/runtime/driver_api.def").read_text(), re.S)
    assert len(rows) > 40
    wrong = []
    for name, version, _, params in rows:
        older = [abi for abi in abis.get(name, []) if abi[0] <= int(version)]
        if not older:
            wrong.append(f"{name}: no ABI at or before CUDA {version}")
            continue
        abi_version, count = max(older)
        if count != parameter_count(params):
            wrong.append(f"{name} at {version} is the v{abi_version} ABI with {count} parameters, not "
                         f"{parameter_count(params)}")
    assert not wrong, wrong
