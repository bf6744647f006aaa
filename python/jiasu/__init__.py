"""jiasu (加速): GPU acceleration for Python with a C++ engine.

Importing jiasu never touches the GPU: the CUDA driver and libraries are loaded on first use.
"""
import sys as _sys

from . import _core
from ._errors import (CompileError, CudaError, CudaOutOfMemoryError, DistributedError, DistributedTimeoutError,
                      InvalidArrayError, JiasuError, LaunchError, LibraryNotFoundError, NvrtcError,
                      PerformanceWarning)
from ._errors import ALL as _ALL_ERRORS

_core._register_errors(_ALL_ERRORS)
# NVIDIA's pip wheels (nvidia-cuda-nvrtc, nvidia-cudnn-cu13, ...) install under a site-packages folder.
_core.set_wheel_roots([p for p in _sys.path if p])

from ._kernel import func, kernel  # noqa: E402
from ._arrays import (Array, asarray, empty, empty_like, from_dlpack, full, full_like, ones,  # noqa: E402
                      ones_like, pinned_empty, zeros, zeros_like)
from ._arrays import (arange, ascontiguousarray, broadcast_shapes, broadcast_to, concatenate, copy,  # noqa: E402
                      expand_dims, eye, linspace, ravel, reshape, squeeze, stack, swapaxes, transpose)
from ._linalg import dot, get_matmul_precision, matmul, set_matmul_precision  # noqa: E402
from ._vectorize import reduce, vectorize  # noqa: E402,A004
from ._ufuncs import *  # noqa: E402,F401,F403  (the elementwise operations: add, sqrt, where, ...)
from ._reductions import all, any, argmax, argmin, cumsum, max, mean, min, prod, std, sum, var  # noqa: E402,A004

__version__ = _core.__version__

Device = _core.Device
Stream = _core.Stream
Event = _core.Event
RawKernel = _core.RawKernel
SourceModule = _core.SourceModule
compile_cuda = _core.compile_cuda
synchronize = _core.synchronize
Graph = _core.Graph
graph = _core.Graph  # `with jiasu.graph() as g:` records GPU work; g.replay() runs it again
from ._profile import Profile, profile  # noqa: E402  (`with jiasu.profile() as p:` times every launch inside)


KernelResources = _core.KernelResources
Occupancy = _core.Occupancy
BenchmarkResult = _core.BenchmarkResult


def benchmark(fn, /, *args, n_repeat: int = 100, n_warmup: int = 10, flush_l2: bool = False, **kwargs):
    """Time ``fn(*args, **kwargs)``: ``n_warmup`` untimed calls, then ``n_repeat`` timed ones.

    Each timed call's wall clock is measured on the host (``result.cpu``); on a GPU also the time between CUDA
    events recorded on the default stream before and after it, waited for after each call (``result.gpu``, None on
    the CPU backend). ``flush_l2=True`` overwrites a buffer twice the GPU's L2 cache before each timed call. Returns a
    ``BenchmarkResult``: ``cpu`` and ``gpu`` each have ``min``, ``median``, ``mean``, ``max``, ``std`` (milliseconds)
    and ``times`` (a NumPy array of every call's).
    """
    return _core.benchmark(fn, args, kwargs, n_repeat, n_warmup, flush_l2)


get_backend = _core.get_backend
set_backend = _core.set_backend


class backend:
    """``with jiasu.backend("cpu"): ...`` runs the block on that backend, then restores the previous one."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._previous = []

    def __enter__(self):
        self._previous.append(get_backend())
        set_backend(self._name)
        return self

    def __exit__(self, *exc):
        set_backend(self._previous.pop())
        return False


def is_available() -> bool:
    """True when a CUDA driver and at least one GPU are usable."""
    return _core.device_count() > 0


def devices() -> list[Device]:
    """Every visible CUDA device (an empty list without a driver or GPU)."""
    return [Device(i) for i in range(_core.device_count())]


def get_device() -> Device:
    """The device of the active backend: this thread's current GPU, or the CPU device."""
    return Device(None)


def set_device(device: int | Device) -> None:
    _core.set_device(device if isinstance(device, int) else device.id)


_NUMPY_TYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "complex64", "complex128")


def _kernel_names():
    from ._intrinsics import NAMES  # jiasu.grid, jiasu.atomic, ...: imported on first use

    return NAMES


def __getattr__(name):
    # The scalar types are NumPy's (bfloat16 is ml_dtypes'), imported on first use to keep import fast.
    if name in _NUMPY_TYPES:
        import numpy
        value = getattr(numpy, name)
    elif name == "bfloat16":
        import ml_dtypes
        value = ml_dtypes.bfloat16
    elif name in _kernel_names():
        value = _kernel_names()[name]
    else:
        raise AttributeError(f"module 'jiasu' has no attribute {name!r}")
    globals()[name] = value  # found once: later lookups skip this function
    return value


from . import _interop  # noqa: E402,F401  (NumPy's dispatch protocols on jiasu.Array)
from . import nn  # noqa: E402,F401
