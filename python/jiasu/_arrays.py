"""Array creation. The arrays themselves (jiasu.Array) live in C++; this only routes Python inputs.

NumPy is imported inside the functions that need it, so that `import jiasu` stays fast.
"""
from . import _core

Array = _core.Array
Device = _core.Device


def empty(shape, dtype="float64", device=None, order="C"):
    """An uninitialised array on ``device``: 'cpu', 'cuda', 'cuda:N', a GPU ordinal or a jiasu.Device
    (default: the active backend's device, see jiasu.set_backend); ``order`` 'C' (row-major) or 'F'."""
    return _core.empty(shape, dtype, device, order)


def full(shape, fill_value, dtype=None, device=None, order="C"):
    import numpy as np

    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype, device, order)
    out._fill_bytes(np.asarray(fill_value, dtype=out.dtype).tobytes())
    return out


def zeros(shape, dtype="float64", device=None, order="C"):
    return full(shape, 0, dtype, device, order)


def ones(shape, dtype="float64", device=None, order="C"):
    return full(shape, 1, dtype, device, order)


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


# ---- shapes: views where NumPy gives views (the rules are the core's)
expand_dims = _core.expand_dims
broadcast_to = _core.broadcast_to
broadcast_shapes = _core.broadcast_shapes
concatenate = _core.concatenate
stack = _core.stack
ascontiguousarray = _core.ascontiguousarray


def transpose(a, axes=None):
    return a.transpose(axes)


def swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2)


def squeeze(a, axis=None):
    return a.squeeze(axis)


def reshape(a, shape):
    return a.reshape(shape)


def ravel(a):
    return a.ravel()


def copy(a):
    return a.copy()


# ---- ranges: computed by NumPy on the host, then copied to the device once
def _from_host(values, device):
    return asarray(values, device=device)


def arange(start, stop=None, step=None, dtype=None, device=None):
    """NumPy's arange (the same values and dtype), on ``device``."""
    import numpy as np

    args = (start,) if stop is None and step is None else (start, stop) if step is None else (start, stop, step)
    return _from_host(np.arange(*args, dtype=dtype), device)


def linspace(start, stop, num=50, endpoint=True, dtype=None, device=None):
    """NumPy's linspace (the same values and dtype), on ``device``."""
    import numpy as np

    return _from_host(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device)


def eye(N, M=None, k=0, dtype="float64", device=None):
    """NumPy's eye: ones on the k-th diagonal of an N x M array, on ``device``."""
    import numpy as np

    return _from_host(np.eye(N, M, k, dtype=dtype), device)
