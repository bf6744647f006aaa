"""Array creation. The arrays themselves (jiasu.Array) live in C++; this only routes Python inputs.

NumPy is imported inside the functions that need it, so that `import jiasu` stays fast.
"""
from __future__ import annotations

from . import _core

TYPE_CHECKING = False  # typing's own, without importing typing at `import jiasu`
if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy
    from numpy.typing import ArrayLike, DTypeLike

    Shape = int | Sequence[int]
    DeviceLike = str | int | Device | None

Array = _core.Array
Device = _core.Device


def empty(shape: Shape, dtype: DTypeLike = "float64", device: DeviceLike = None, order: str = "C") -> Array:
    """An uninitialised array on ``device``: 'cpu', 'cuda', 'cuda:N', a GPU ordinal or a jiasu.Device
    (default: the active backend's device, see jiasu.set_backend); ``order`` 'C' (row-major) or 'F'."""
    return _core.empty(shape, dtype, device, order)


def full(shape: Shape, fill_value: complex, dtype: DTypeLike = None, device: DeviceLike = None,
         order: str = "C") -> Array:
    import numpy as np

    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype, device, order)
    out._fill_bytes(np.asarray(fill_value, dtype=out.dtype).tobytes())
    return out


def zeros(shape: Shape, dtype: DTypeLike = "float64", device: DeviceLike = None, order: str = "C") -> Array:
    return full(shape, 0, dtype, device, order)


def ones(shape: Shape, dtype: DTypeLike = "float64", device: DeviceLike = None, order: str = "C") -> Array:
    return full(shape, 1, dtype, device, order)


def empty_like(a: Array | ArrayLike, dtype: DTypeLike = None) -> Array:
    return empty(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def zeros_like(a: Array | ArrayLike, dtype: DTypeLike = None) -> Array:
    return zeros(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def ones_like(a: Array | ArrayLike, dtype: DTypeLike = None) -> Array:
    return ones(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def full_like(a: Array | ArrayLike, fill_value: complex, dtype: DTypeLike = None) -> Array:
    return full(a.shape, fill_value, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def _on_gpu(obj):
    # hasattr, not C++'s PyObject_HasAttr: torch's property raises for a tensor that requires grad, and that
    # error (which says to detach) must reach the caller.
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 13)


def asarray(obj: object, dtype: DTypeLike = None, device: DeviceLike = None) -> Array:
    """A jiasu.Array from ``obj`` on ``device`` (default: where ``obj`` is, else the active backend's device).

    GPU objects (torch tensors, CuPy and Numba arrays, anything with ``__dlpack__`` or
    ``__cuda_array_interface__``) and jiasu arrays already on ``device`` are wrapped without a copy and
    kept alive while the result lives. Host data (NumPy arrays, lists, scalars) is copied, for the CPU
    device too, so that code behaves the same on both backends; ``jiasu.from_dlpack(a)`` views a NumPy
    array in place, and kernels use NumPy arguments in place on the CPU backend.
    """
    import numpy as np

    target = None if device is None else Device(device)
    if isinstance(obj, Array) or _on_gpu(obj):
        out = _core.as_device_array(obj) if not isinstance(obj, Array) else obj
        if target is not None and target != out.device:
            return asarray(out.get(), dtype, target)
        if dtype is not None and np.dtype(dtype) != out.dtype:
            out = out.astype(dtype)
        return out
    host = np.asarray(obj, dtype=dtype)
    if target is None:
        target = Device(None)
    out = empty(host.shape, host.dtype, target)
    out.set(host)
    return out


def from_dlpack(x: object) -> Array:
    """A zero-copy jiasu.Array over a DLPack producer (GPU memory; host memory gives a CPU array)."""
    return _core.from_dlpack(x)


def pinned_empty(shape: Shape, dtype: DTypeLike = "float64") -> numpy.ndarray:
    """An uninitialised NumPy array in page-locked host memory (fast, asynchronous transfers)."""
    import numpy as np

    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    count = int(np.prod(shape, dtype=np.int64))
    buffer = _core.PinnedBuffer(count * dtype.itemsize)
    return np.asarray(buffer)[: count * dtype.itemsize].view(dtype).reshape(shape)


# ---- shapes: views where NumPy gives views (the rules are the core's)
expand_dims = _core.expand_dims
broadcast_to = _core.broadcast_to
broadcast_shapes = _core.broadcast_shapes
concatenate = _core.concatenate
stack = _core.stack
ascontiguousarray = _core.ascontiguousarray


def transpose(a: Array, axes: Sequence[int] | None = None) -> Array:
    return a.transpose(axes)


def swapaxes(a: Array, axis1: int, axis2: int) -> Array:
    return a.swapaxes(axis1, axis2)


def squeeze(a: Array, axis: int | Sequence[int] | None = None) -> Array:
    return a.squeeze(axis)


def reshape(a: Array, shape: Shape) -> Array:
    return a.reshape(shape)


def ravel(a: Array) -> Array:
    return a.ravel()


def copy(a: Array) -> Array:
    return a.copy()


# ---- ranges: computed by NumPy on the host, then copied to the device once
def _from_host(values, device):
    return asarray(values, device=device)


def arange(start: float, stop: float | None = None, step: float | None = None, dtype: DTypeLike = None,
           device: DeviceLike = None) -> Array:
    """NumPy's arange (the same values and dtype), on ``device``."""
    import numpy as np

    args = (start,) if stop is None and step is None else (start, stop) if step is None else (start, stop, step)
    return _from_host(np.arange(*args, dtype=dtype), device)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: DTypeLike = None,
             device: DeviceLike = None) -> Array:
    """NumPy's linspace (the same values and dtype), on ``device``."""
    import numpy as np

    return _from_host(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device)


def eye(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike = "float64", device: DeviceLike = None) -> Array:
    """NumPy's eye: ones on the k-th diagonal of an N x M array, on ``device``."""
    import numpy as np

    return _from_host(np.eye(N, M, k, dtype=dtype), device)
