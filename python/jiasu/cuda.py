"""Numba-CUDA's names on jiasu: ``from jiasu import cuda`` in place of ``from numba import cuda``.

Inside a kernel, ``cuda.X`` means what ``jiasu.X`` means (``cuda.grid(1)``, ``cuda.shared.array``,
``cuda.atomic.add``, ...; docs/kernel-language.md). On the host this module gives Numba's decorator and host
API on jiasu's arrays, streams and events. Differences from Numba are listed in docs/python-api.md.
"""
import jiasu as _jiasu
from jiasu._core import HostDeviceMemory as _HostMemory

# Numba's scalar type names, as dtypes (they work in kernels, e.g. cuda.shared.array(32, cuda.float32)).
_TYPE_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
               "float64", "complex64", "complex128")
_ALIASES = {"boolean": "bool_", "b1": "bool_", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
            "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "f2": "float16", "f4": "float32",
            "f8": "float64", "c8": "complex64", "c16": "complex128", "intp": "int64", "uintp": "uint64"}
# Options Numba's cuda.jit takes that change nothing here: jiasu always caches on disk, and the generated code
# is the same with or without them.
_IGNORED_OPTIONS = frozenset({"inline", "fastmath", "max_registers", "lineinfo", "cache", "opt", "forceinline"})


def jit(func_or_sig=None, device=False, debug=False, link=(), **options):
    """Numba's ``@cuda.jit``: bare, with options, or with a signature (a string, a type or a list of them).
    jiasu compiles on first call for each argument signature; a signature's scalar types convert the scalar
    arguments, as Numba's do (``cuda.jit("void(int32[:], int32)")`` makes a Python int an int32).
    ``device=True`` makes a device function (``@jiasu.func``), ``debug=True`` is ``@jiasu.kernel(debug=True)``:
    every index and integer divisor checked, a kernel's ``raise`` reported on the GPU too. ``link=``: CUDA C++ files (.cu) defining the functions
    declared with ``declare_device`` that the kernel calls."""
    unknown = set(options) - _IGNORED_OPTIONS
    if unknown:
        raise TypeError(f"cuda.jit: unsupported option(s): {', '.join(sorted(unknown))}")
    if link and device:
        raise NotImplementedError("cuda.jit(device=True, link=...): give link= to the kernel, or to declare_device")
    from jiasu._kernel import linked_paths

    link = linked_paths(link)  # checked now, as Numba does

    def wrap(fn, signature=None):
        if device:
            return _jiasu.func(fn)
        kernel = _jiasu.kernel(fn, debug=debug, link=link)
        scalar_types = _signature_scalar_types(signature)
        if any(t is not None for t in scalar_types):
            kernel._declare_scalar_types(scalar_types)
        return kernel

    if callable(func_or_sig) and not isinstance(func_or_sig, (str, type)) and not hasattr(func_or_sig, "args"):
        return wrap(func_or_sig)
    return lambda fn: wrap(fn, func_or_sig)  # None or a signature


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Numba's ``cuda.declare_device``: a device function written in CUDA C++, defined in the ``link`` files (or
    the calling kernel's), of signature ``sig`` (``"float32(float32, float32)"`` or Numba types). Numba's ABI:
    ``extern "C" __device__ int name(float* result, float a, float b)``; ``abi="c"``: ``float name(float, float)``.
    The CPU backend compiles the same files with the host compiler."""
    if use_cooperative:
        raise NotImplementedError("cuda.declare_device(use_cooperative=True) is not supported by jiasu")
    from jiasu._kernel import ExternalFunction

    params, result = _signature_types(sig)
    if result is None:
        raise TypeError("Return type must be provided for device declarations")
    for t in params + [result]:
        if "[" in t or "*" in t or t in ("void", "none"):
            raise NotImplementedError(f"cuda.declare_device: jiasu passes numbers only, not {t}")
    return ExternalFunction(name, [_dtype_name(t) for t in params], _dtype_name(result), abi, link)


def _dtype_name(name):
    import numpy as np

    try:
        return np.dtype(_ALIASES.get(name, name)).name
    except TypeError:
        raise TypeError(f"unknown type {name!r} in a device declaration") from None


def _signature_types(sig):
    """A Numba signature's parameter type names and result type name (None where it gives none)."""
    if not isinstance(sig, str):
        args = getattr(sig, "args", sig)
        return [str(a) for a in (args if isinstance(args, tuple) else (args,))], (
            str(sig.return_type) if getattr(sig, "return_type", None) is not None else None)
    sig = sig.strip()
    if "(" not in sig:
        return [], None
    result = sig[:sig.find("(")].strip() or None
    return _split_params(sig[sig.find("(") + 1:sig.rfind(")")]), result


def _split_params(inside):
    """The comma-separated parameter types of a signature, brackets kept together: ``float32[:, ::1], int32``."""
    params, depth, start = [], 0, 0
    for i, c in enumerate(inside + ","):
        depth += c in "[(" and 1 or (-1 if c in "])" else 0)
        if c == "," and depth == 0:
            params.append(inside[start:i].strip())
            start = i + 1
    return [p for p in params if p]


def In(ary):
    """Numba's ``cuda.In``: the array goes to the kernel and is not copied back (the kernel gets a copy of it)."""
    import numpy as np

    return ary.copy() if isinstance(ary, np.ndarray) else ary


def InOut(ary):
    """Numba's ``cuda.InOut`` (and ``cuda.Out``): the array goes to the kernel and its results come back, as
    every NumPy argument of a jiasu kernel does."""
    return ary


Out = InOut


def _prepare_arguments(extensions, args, stream):
    """A launch of a kernel with Numba's extensions (``kernel.extensions``): each argument goes through every
    extension's ``prepare_args(ty, value, stream=, retr=)`` in turn (jiasu has no Numba type to give: ``ty`` is
    None); the callbacks they append to ``retr`` run after the launch."""
    retr, prepared = [], []
    for value in args:
        ty = None
        for extension in extensions:
            ty, value = extension.prepare_args(ty, value, stream=stream, retr=retr)
        prepared.append(value)
    return tuple(prepared), retr


def _signature_scalar_types(signature):
    """Per kernel parameter, the dtype name a Numba signature gives it: None for arrays, for what is not a
    scalar type, and for every parameter when there is no signature or a list of several."""
    if isinstance(signature, list):
        signature = signature[0] if len(signature) == 1 else None
    if signature is None:
        return []
    if isinstance(signature, str):
        inside = signature[signature.find("(") + 1:signature.rfind(")")] if "(" in signature else signature
        names = [p if "[" not in p else None for p in _split_params(inside)]
    else:
        args = getattr(signature, "args", signature)  # a Signature, or a tuple of argument types
        names = [None if hasattr(a, "ndim") else str(a) for a in (args if isinstance(args, tuple) else (args,))]
    import numpy as np

    def scalar_type(name):
        if name not in _TYPE_NAMES and name not in _ALIASES:
            return None
        return np.dtype(getattr(np, _ALIASES.get(name, name))).name
    return [scalar_type(name) if name else None for name in names]


# Host API: arrays.
def to_device(obj, stream=0, copy=True, to=None):
    """A device copy of a host array (``to``: copy into that device array instead)."""
    if to is not None:
        to.copy_to_device(obj, stream=stream)
        return to
    import numpy as np

    host = np.asarray(obj)
    out = _jiasu.empty(host.shape, host.dtype)  # on the active backend's device
    if copy:
        out.copy_to_device(host, stream=stream)
    return out


def device_array(shape, dtype="float64", strides=None, order="C", stream=0):
    """An uninitialised device array (``strides`` other than the order's are not supported)."""
    out = _jiasu.empty(shape, dtype, order=order)
    if strides is not None and tuple(strides) != out.strides:
        raise NotImplementedError("cuda.device_array(strides=...) other than C or F order is not supported by jiasu")
    return out


def device_array_like(ary, stream=0):
    return device_array(ary.shape, ary.dtype, order="F" if _f_ordered(ary) else "C")


def pinned_array(shape, dtype="float64", strides=None, order="C"):
    """A NumPy array in page-locked host memory (plain host memory on the CPU backend)."""
    if order != "C" or strides is not None:
        raise NotImplementedError("cuda.pinned_array supports C order only in jiasu")
    if _jiasu.get_backend() == "cpu":
        import numpy as np
        return np.empty(shape, dtype)
    return _jiasu.pinned_empty(shape, dtype)


def pinned_array_like(ary):
    return pinned_array(ary.shape, ary.dtype)


def mapped_array(shape, dtype="float64", strides=None, order="C", stream=0, portable=False, wc=False):
    """A NumPy array in page-locked host memory mapped into the current GPU's address space: kernels read and
    write it in place, with no copies (``portable``: page-locked for every context; ``wc``: write-combined, fast
    for the GPU to read and slow for the host to read). Plain host memory on the CPU backend."""
    return _host_memory_array("cuda.mapped_array", shape, dtype, strides, order, lambda nbytes: _HostMemory.mapped(
        nbytes, portable, wc))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return mapped_array(ary.shape, ary.dtype, order="F" if _f_ordered(ary) else "C", portable=portable, wc=wc)


def managed_array(shape, dtype="float64", strides=None, order="C", stream=0, attach_global=True):
    """A NumPy array in managed memory, which the driver moves between the host and the current GPU on demand:
    kernels read and write it in place, with no copies (``attach_global=False``: for the host alone until a stream
    uses it). Plain host memory on the CPU backend."""
    return _host_memory_array("cuda.managed_array", shape, dtype, strides, order, lambda nbytes: _HostMemory.managed(
        nbytes, attach_global))


def _host_memory_array(what, shape, dtype, strides, order, allocate):
    from jiasu._host_memory import host_device_array

    return host_device_array(what, shape, dtype, strides, order, None if _jiasu.get_backend() == "cpu" else allocate)


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A jiasu array on the memory a ``__cuda_array_interface__`` dict describes (no copy); ``owner`` is kept
    alive with it."""
    exporter = type("CudaArrayInterface", (), {"__cuda_array_interface__": desc, "owner": owner})()
    return _jiasu.asarray(exporter)


def defer_cleanup():
    """Numba's ``with cuda.defer_cleanup():``. jiasu frees memory when the last reference goes (the memory pool
    reuses it), so there is nothing to defer."""
    import contextlib

    return contextlib.nullcontext()


def as_cuda_array(obj, sync=True):
    """A jiasu array on the same GPU memory (no copy)."""
    if not is_cuda_array(obj):
        raise TypeError(f"{type(obj).__name__} does not export __cuda_array_interface__")
    return _jiasu.asarray(obj)


# Host API: devices, streams, events.
def synchronize():
    _jiasu.synchronize()


def is_available():
    return _jiasu.is_available()


def detect():
    """Print the GPUs found; True when there is one."""
    found = _jiasu.devices()
    print(f"Found {len(found)} CUDA devices")
    for d in found:
        print(f"id {d.id} {d.name}")
    return bool(found)


def select_device(device_id):
    _jiasu.set_device(device_id)
    return _jiasu.get_device()


def get_current_device():
    return _jiasu.get_device()


def stream():
    return _jiasu.Stream()


def default_stream():
    return 0


def event(timing=True):
    return _jiasu.Event(timing)


# Host API: reductions and ufuncs made from scalar functions (jiasu.reduce, jiasu.vectorize), generalized ufuncs.
class Reduce:
    """Numba's ``cuda.reduce(f)``: ``r(arr, size=None, res=None, init=0, stream=0)`` folds the associative
    binary function f over arr (its first ``size`` elements), then f(init, result), as Numba's does; it returns
    the result (a NumPy scalar), or writes it into ``res[0]`` of a device array."""

    def __init__(self, fn):
        import functools

        self._reduction = _jiasu.reduce(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        a = arr if isinstance(arr, _jiasu.Array) else _jiasu.asarray(arr)
        if size is not None:
            a = a[:size]
        result = self._reduction(a, init=init).get()[()]
        if res is None:
            return result
        host = res.copy_to_host()
        host[0] = result
        res.copy_to_device(host)
        return None


def reduce(fn):  # noqa: A001 (Numba's name)
    return Reduce(fn)


class _Vectorized:
    """Numba's ``cuda.vectorize``: a ufunc on device arrays, and on host arrays (copied there and back)."""

    def __init__(self, fn):
        import functools

        self._ufunc = _jiasu.vectorize(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, out=None, stream=0):
        on_device = any(isinstance(a, _jiasu.Array) for a in args + (out,))
        import numpy as np

        operands = [a if isinstance(a, _jiasu.Array) or np.isscalar(a) else _jiasu.asarray(a) for a in args]
        result = self._ufunc(*operands, out=out if isinstance(out, _jiasu.Array) or out is None else None)
        if on_device:
            return result
        host = result.get()
        if out is not None:
            out[...] = host
            return out
        return host


def vectorize(func_or_signatures=None, **options):
    """Numba's ``@cuda.vectorize`` (bare or with signatures, which jiasu does not need: it compiles for the
    operands' dtypes)."""
    if callable(func_or_signatures):
        return _Vectorized(func_or_signatures)
    return _Vectorized


def guvectorize(*args, **options):
    """Numba's ``@cuda.guvectorize(signatures, layout)``: a generalized ufunc (jiasu._gufunc.GUFunc), its function
    called at every index of the loop dimensions by a jiasu kernel."""
    from jiasu._gufunc import guvectorize

    return guvectorize(*args, **options)


# Numba-CUDA's names jiasu does not serve yet: using one says so (other unknown names are AttributeErrors).
_UNSERVED = {
    "external_stream": "streams made outside jiasu",
    "compile_ptx": "Numba's PTX compiler (use jiasu's inspect_ptx)", "compile": "Numba's compiler",
    "list_devices": "list_devices (use cuda.gpus)",
    "current_context": "CUDA contexts", "require_context": "CUDA contexts", "close": "closing the context",
    "per_thread_default_stream": "the per-thread default stream", "legacy_default_stream": "the legacy default stream",
}


def __getattr__(name):
    if name in _TYPE_NAMES or name in _ALIASES:
        import numpy as np
        value = getattr(np, _ALIASES.get(name, name))
    elif name in _jiasu._kernel_names():  # cuda.grid, cuda.atomic, cuda.fp16, cuda.libdevice, ...: kernel names
        value = _jiasu._kernel_names()[name]
    elif name == "random":
        from jiasu import cuda_random as value
    elif name == "gpus":
        value = _jiasu.devices()
        return value  # not kept: devices may come and go with CUDA_VISIBLE_DEVICES in subprocesses
    elif name in _UNSERVED:
        raise NotImplementedError(f"numba.cuda.{name} ({_UNSERVED[name]}) is not served by jiasu yet")
    else:
        raise AttributeError(f"module 'jiasu.cuda' has no attribute {name!r}")
    globals()[name] = value
    return value


def _f_ordered(ary):
    flags = getattr(ary, "flags", None)
    return bool(flags is not None and flags["F_CONTIGUOUS"] and not flags["C_CONTIGUOUS"])

