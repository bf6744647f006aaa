"""Array creation. The arrays themselves (jiasu.Array) live in C++; this only routes Python inputs.

NumPy is imported inside the functions that need it, so that `import jiasu` stays fast.
"""
from . import _core

Array = _core.Array
Device = _core.Device


def empty(shape, dtype="float64", device=None):
    """An uninitialised array on ``device``: 'cpu', 'cuda', 'cuda:N', a GPU ordinal or a jiasu.Device
    (default: the active backend's device, see jiasu.set_backend)."""
    return _core.empty(shape, dtype, device)


def full(shape, fill_value, dtype=None, device=None):
    import numpy as np

    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype, device)
    out._fill_bytes(np.asarray(fill_value, dtype=out.dtype).tobytes())
    return out


def zeros(shape, dtype="float64", device=None):
    return full(shape, 0, dtype, device)


def ones(shape, dtype="float64", device=None):
    return full(shape, 1, dtype, device)


def empty_like(a, dtype=None):
    return empty(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def zeros_like(a, dtype=None):
    return zeros(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def ones_like(a, dtype=None):
    return ones(a.shape, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def full_like(a, fill_value, dtype=None):
    return full(a.shape, fill_value, a.dtype if dtype is None else dtype, a.device if isinstance(a, Array) else None)


def _on_gpu(obj):
    # hasattr, not C++'s PyObject_HasAttr: torch's property raises for a tensor that requires grad, and that
    # error (which says to detach) must reach the caller.
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 13)


def asarray(obj, dtype=None, device=None):
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


def from_dlpack(x):
    """A zero-copy jiasu.Array over a DLPack producer (GPU memory; host memory gives a CPU array)."""
    return _core.from_dlpack(x)


def pinned_empty(shape, dtype="float64"):
    """An uninitialised NumPy array in page-locked host memory (fast, asynchronous transfers)."""
    import numpy as np

    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    count = int(np.prod(shape, dtype=np.int64))
    buffer = _core.PinnedBuffer(count * dtype.itemsize)
    return np.asarray(buffer)[: count * dtype.itemsize].view(dtype).reshape(shape)
