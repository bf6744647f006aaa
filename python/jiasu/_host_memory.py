"""NumPy arrays in host memory that GPU kernels read and write in place (Numba's cuda.mapped_array and
cuda.managed_array). The memory is the core's (_core.HostDeviceMemory): it goes back when the last array
viewing it is gone."""
import ctypes
import math
import operator

import numpy as np

from . import _core


class HostDeviceArray(np.ndarray):
    """A NumPy array whose memory a GPU uses in place: kernels take it with no copies, and it exports
    ``__cuda_array_interface__`` (``jiasu.asarray`` views it). Arrays computed from it (``a + 1``) are in
    ordinary host memory and export nothing; so are these arrays on the CPU backend."""

    def _memory(self):
        """The HostDeviceMemory this array views, or None."""
        base = self.base
        while isinstance(base, np.ndarray):
            base = base.base
        return base if isinstance(base, _core.HostDeviceMemory) else None

    def _device_address(self):
        memory = self._memory()
        if memory is None:
            raise AttributeError("this array is in ordinary host memory, which kernels do not use in place")
        return memory.device_ptr + (self.__array_interface__["data"][0] - memory.ptr)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "strides": None if self.flags.c_contiguous else self.strides,
                "typestr": self.dtype.str, "data": (self._device_address(), not self.flags.writeable),
                "version": 3, "stream": None}

    @property
    def device_ctypes_pointer(self):
        """Numba's: the address kernels use, as a ctypes pointer."""
        return ctypes.c_void_p(self._device_address())

    def copy_to_host(self, ary=None, stream=0):
        """Numba's: a copy in ordinary host memory (into ``ary`` when given), once the GPU's queued work is
        done."""
        memory = self._memory()
        if memory is not None:
            _core.synchronize(memory.device)
        if ary is None:
            return np.array(self, subok=False)
        ary[...] = self
        return ary


def host_device_array(what, shape, dtype, strides, order, allocate):
    """A HostDeviceArray on the memory ``allocate(nbytes)`` returns, or on ordinary host memory when it is None
    (``what``: the function asked, for messages)."""
    shape = tuple(operator.index(d) for d in ((shape,) if hasattr(shape, "__index__") else shape))
    if any(d < 0 for d in shape):
        raise ValueError(f"{what}: negative dimensions are not allowed (shape {shape})")
    if order not in ("C", "F"):
        raise ValueError(f"{what}: order must be 'C' or 'F', not {order!r}")
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if allocate is None:
        out = np.empty(shape, dtype, order=order)
    else:
        out = np.ndarray(shape, dtype, buffer=np.asarray(allocate(nbytes)), order=order)
    if strides is not None and tuple(strides) != out.strides:
        raise NotImplementedError(f"{what}(strides=...) other than C or F order is not supported by jiasu")
    return out.view(HostDeviceArray)
