"""Importing jiasu: no GPU work at import, version, exception hierarchy."""
import json
import os
import pathlib
import re

import pytest

import jiasu

from support import run_python

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_import_without_driver():
    result = run_python("""
        import json, jiasu
        print(json.dumps({"available": jiasu.is_available(), "devices": jiasu.devices()}))
    """, JIASU_LIBCUDA="/nonexistent/libcuda.so.1")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"available": False, "devices": []}


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps (Linux)")
def test_import_loads_no_cuda_library():
    # Without any override: on a GPU machine the driver would be found, so this is the real check.
    result = run_python("""
        import json, jiasu
        maps = open("/proc/self/maps").read()
        print(json.dumps([line.split()[-1] for line in maps.splitlines()
                          if any(n in line for n in ("libcuda", "libnvrtc", "libcublas", "libcudnn", "libnccl"))]))
    """, JIASU_LIBCUDA=None)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"import jiasu loaded {loaded}"


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps (Linux)")
def test_maps_check_can_see_a_loaded_library():
    # The check above would pass vacuously if /proc/self/maps never listed dlopen'd libraries; make
    # sure it does by loading NVRTC (present wherever the compile tests run).
    result = run_python("""
        import jiasu
        try:
            jiasu._core.library_info("nvrtc")
        except jiasu.LibraryNotFoundError:
            print("MISSING")
        else:
            print("LOADED" if "libnvrtc" in open("/proc/self/maps").read() else "NOT LISTED")
    """)
    assert result.returncode == 0, result.stderr
    status = result.stdout.strip().splitlines()[-1]
    if status == "MISSING":
        pytest.skip("NVRTC is not installed")
    assert status == "LOADED"


def test_version_matches_pyproject():
    text = (REPO / "pyproject.toml").read_text()
    project = text[text.index("[project]"):]
    match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    assert match, "no version in pyproject.toml's [project] table"
    assert jiasu.__version__ == match.group(1)
    assert jiasu._core.__version__ == jiasu.__version__


def test_error_hierarchy():
    assert issubclass(jiasu.JiasuError, RuntimeError)
    for cls in (jiasu.CudaError, jiasu.CudaOutOfMemoryError, jiasu.LaunchError, jiasu.InvalidArrayError,
                jiasu.NvrtcError, jiasu.LibraryNotFoundError, jiasu.DistributedError):
        assert issubclass(cls, jiasu.JiasuError), cls
        assert issubclass(cls, RuntimeError), cls
    assert issubclass(jiasu.CudaOutOfMemoryError, jiasu.CudaError)
    assert issubclass(jiasu.CudaOutOfMemoryError, MemoryError)
    assert issubclass(jiasu.LaunchError, jiasu.CudaError)
    assert issubclass(jiasu.InvalidArrayError, jiasu.CudaError)
    # These are not CUDA (driver) errors.
    assert not issubclass(jiasu.NvrtcError, jiasu.CudaError)
    assert not issubclass(jiasu.LibraryNotFoundError, jiasu.CudaError)
    assert not issubclass(jiasu.LaunchError, MemoryError)
    assert issubclass(jiasu.DistributedTimeoutError, jiasu.DistributedError)
    assert issubclass(jiasu.DistributedTimeoutError, TimeoutError)  # `except TimeoutError` catches a lost peer
    assert not issubclass(jiasu.DistributedError, jiasu.CudaError)
    # An out-of-memory error is caught by `except MemoryError`.
    with pytest.raises(MemoryError):
        raise jiasu.CudaOutOfMemoryError("out of memory")


def test_errors_are_the_ones_raised_by_the_core():
    # The classes exported by jiasu are the ones the C++ translator raises: a bad NVRTC override
    # must come back as jiasu.LibraryNotFoundError, not a plain RuntimeError.
    result = run_python("""
        import jiasu
        try:
            jiasu.compile_cuda("", arch="compute_90")
        except jiasu.LibraryNotFoundError as e:
            print("LibraryNotFoundError")
        except Exception as e:
            print("other", type(e).__mro__)
    """, JIASU_NVRTC="/nonexistent/libnvrtc.so")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "LibraryNotFoundError"
