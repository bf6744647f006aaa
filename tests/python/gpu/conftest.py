"""Shared fixtures of the GPU tests.

Every module here is marked ``gpu`` (tests/python/conftest.py skips that marker without a GPU); the
autouse fixture below makes this folder skip on its own as well, so that it never fails on a machine
without a GPU whatever the outer conftest does. Optional frameworks (torch, CuPy, Numba) are fixtures
that skip when the framework or its GPU support is missing; nothing optional is imported at collection.
"""
import os

import numpy as np
import pytest

import jiasu


@pytest.fixture(autouse=True)
def _require_gpu():
    if not jiasu.is_available():
        pytest.skip("needs a CUDA GPU")


@pytest.fixture(scope="session")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


@pytest.fixture(scope="session")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except Exception as error:  # CuPy without a usable CUDA runtime
        pytest.skip(f"CuPy cannot use CUDA: {error}")
    return cupy


@pytest.fixture(scope="session")
def numba_cuda():
    # numba still refers to np.row_stack, which NumPy 2.5 removed.
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    try:
        from numba import cuda
    except ImportError as error:
        pytest.skip(f"numba-cuda is not installed: {error}")
    except Exception as error:  # numba that cannot load with this NumPy
        pytest.skip(f"numba cannot be imported: {error!r}")
    if not cuda.is_available():
        pytest.skip("numba.cuda sees no CUDA device")
    return cuda


# A kernel every test module uses to prove that the context still works (after errors, for instance).
ADD_SOURCE = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}
"""


def _check_context_healthy(n=4099):
    """A normal launch and copy still work and give the right answer."""
    rng = np.random.default_rng()
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    dx, dy = jiasu.asarray(x), jiasu.asarray(y)
    out = jiasu.full(n, np.nan, dtype=np.float32)
    jiasu.RawKernel(ADD_SOURCE, "add")((n + 127) // 128, 128, (dx, dy, out, n))
    jiasu.synchronize()
    np.testing.assert_array_equal(out.get(), x + y)


@pytest.fixture
def healthy():
    """Call the returned function to assert that the CUDA context is still usable."""
    return _check_context_healthy


@pytest.fixture
def add_kernel():
    """The seed article's vector add, `add(x, y, out, n)` on float32, as a fresh RawKernel."""
    return jiasu.RawKernel(ADD_SOURCE, "add")


# The disk cache's entries (path -> inode, mtime, size), to tell a cache hit (nothing rewritten) from a miss.
def cache_entries(root):
    entries = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.startswith(".tmp"):
                continue
            path = os.path.join(folder, name)
            st = os.stat(path)
            entries[path] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return entries
