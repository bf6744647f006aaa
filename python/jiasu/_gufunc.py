"""Numba's generalized ufuncs (``@cuda.guvectorize``) on jiasu: the C++ core (core/ops/gufunc) parses the layout,
chooses the signature, binds the core dimensions, broadcasts the loop dimensions and writes the kernel that calls
the function at every loop index; here are Numba's signatures and calling convention (host or device arrays,
``out=``, ``stream=``)."""
import functools

import numpy as np

import jiasu as _jiasu

from . import _core
from ._kernel import DeviceFunction
from .cuda import _ALIASES, _split_params, to_device


def _param(text, sig):
    """A string signature's parameter, ``float32[:, :]`` or ``int32``, as (dtype, ndim or None for a number)."""
    name, _, dims = text.partition("[")
    name = name.strip()
    try:
        dtype = np.dtype(_ALIASES.get(name, name))
    except TypeError:
        raise TypeError(f"unknown type {name!r} in the signature {sig!r}") from None
    return dtype, (dims.count(",") + 1 if dims else None)


def _signature(sig):
    """A Numba signature (a string, a Signature, or a tuple of Numba types) as its parameters' (dtype, ndim) pairs.
    A gufunc writes its results into its output parameters: a return type other than void is a TypeError."""
    if isinstance(sig, str):
        text = sig.strip()
        if "(" not in text or not text.endswith(")"):
            raise TypeError(f"a gufunc signature is written as 'void(float32[:], float32[:])', not {sig!r}")
        result = text[:text.find("(")].strip() or None
        params = [_param(p, sig) for p in _split_params(text[text.find("(") + 1:-1])]
    else:
        args = getattr(sig, "args", sig)
        result = getattr(sig, "return_type", None)
        params = [(np.dtype(str(a.dtype)), a.ndim) if hasattr(a, "ndim") else (np.dtype(str(a)), None)
                  for a in (args if isinstance(args, tuple) else (args,))]
    if result is not None and str(result) not in ("void", "none"):
        raise TypeError(f"guvectorized functions cannot return values: signature {sig} specifies {result} return type")
    return params


def _is_device(obj):
    return isinstance(obj, _jiasu.Array) or hasattr(obj, "__cuda_array_interface__")


def _count(n):
    return f"{n} positional argument{'s' * (n != 1)}"


class _KernelText:
    """The kernel that calls the function at every loop index, described to the front end as ``@jiasu.kernel``
    describes a Python function (_kernel._Description): its text is the core's, its one global the function."""

    def __init__(self, name, source, function, variant):
        self.name, self.source, self.function = name, source, function
        self.file, self.first_line, self.link = f"<guvectorize {function.__name__}>", 1, ()
        self.identity = f"{function._description.identity}:{name}{variant}"

    def resolve(self, name):
        if name == "core":
            return ("function", self.function._description)
        return ("module", "jiasu") if name == "jiasu" else ("missing",)


class GUFunc:
    """Numba's CUDA gufunc: ``f(*inputs)`` returns the output(s), ``f(*inputs, *outputs)`` and ``f(*inputs,
    out=...)`` write given ones; ``stream=`` orders the copies and the launch. Inputs are NumPy or device arrays
    (or anything NumPy converts); with NumPy inputs and outputs alone the results come back as NumPy arrays, else
    they stay on the device. Host inputs are converted to the chosen signature's dtypes, as Numba converts them."""

    def __init__(self, fn, signatures, layout):
        self._gufunc = _core.Gufunc(layout, [_signature(sig) for sig in signatures])
        self._function = DeviceFunction(fn)
        self._kernels = {}  # (signature, loop rank) -> kernel
        functools.update_wrapper(self, fn)

    def _kernel(self, index, loop_rank):
        kernel = self._kernels.get((index, loop_rank))
        if kernel is None:
            name = f"gufunc_{self.__name__}" if self.__name__.isidentifier() else "gufunc"
            source = self._gufunc.kernel_source(index, loop_rank, name)
            text = _KernelText(name, source, self._function, (index, loop_rank))
            kernel = self._kernels[index, loop_rank] = _core.KernelFunction(text, False)
        return kernel

    def __call__(self, *args, out=None, stream=0):
        nin, nout = self._gufunc.nin, self._gufunc.nout
        if out is None and len(args) not in (nin, nin + nout):
            raise TypeError(f"This gufunc accepts {_count(nin)} (when providing input only) or {_count(nin + nout)} "
                            f"(when providing input and output). Got {_count(len(args))}.")
        if out is not None and len(args) > nin:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        if len(args) > nin:
            outputs = list(args[nin:])
        elif isinstance(out, tuple):
            if len(out) != nout:
                raise ValueError(f"out= takes a tuple of {nout} arrays, not of {len(out)}")
            outputs = list(out)
        else:
            outputs = [out] * nout
        for given in outputs:
            if not (given is None or _is_device(given) or isinstance(given, np.ndarray)):
                raise TypeError(f"an output is a device array or a NumPy array, not {type(given).__name__}")
        to_host = not any(_is_device(a) for a in (*args, *outputs))
        inputs = [_jiasu.asarray(a) if _is_device(a) else np.asarray(a) for a in args[:nin]]
        index = self._gufunc.choose([a.dtype for a in inputs])
        dtypes = self._gufunc.dtypes(index)
        inputs = [a if isinstance(a, _jiasu.Array) else to_device(a.astype(dtype, copy=False), stream=stream)
                  for a, dtype in zip(inputs, dtypes)]
        # A NumPy output is computed into a device array of its shape and dtype, then copied into it.
        made = [None if o is None else _jiasu.asarray(o) if _is_device(o) else _jiasu.empty(o.shape, o.dtype)
                for o in outputs]
        loop, count, operands, results = self._gufunc.prepare(index, inputs, made)
        if count:
            self._kernel(index, len(loop)).forall(count, stream=stream)(count, loop, *operands)
        if stream and (to_host or any(isinstance(o, np.ndarray) for o in outputs)):
            _jiasu.synchronize()  # the copies to the host below are on the default stream
        returned = []
        for given, result in zip(outputs, results):
            if isinstance(given, np.ndarray) and not _is_device(given):
                given[...] = result.copy_to_host()
                returned.append(given)
            elif given is not None:
                returned.append(given)
            else:
                returned.append(result.copy_to_host() if to_host else result)
        return returned[0] if nout == 1 else tuple(returned)

    def __repr__(self):
        return f"<jiasu gufunc {self.__name__}>"


def guvectorize(*args, target="cuda", **options):
    """Numba's ``guvectorize(signatures, layout, target='cuda')``: the decorator making a GUFunc."""
    if len(args) != 2:
        raise TypeError("guvectorize(signatures, layout) takes the signatures and the layout (jiasu compiles a gufunc "
                        "for its signatures only)")
    signatures, layout = args
    if target != "cuda":
        raise ValueError(f"Unsupported target: {target}")
    options.pop("identity", None)  # a reduction's identity: a gufunc call reduces nothing
    if options.pop("cache", False):
        raise TypeError("caching is not supported")
    if options.pop("writable_args", ()):
        raise TypeError("writable_args are not supported")
    if not options.pop("nopython", True):
        raise TypeError("nopython flag must be True")
    if options:
        raise TypeError(f"The following target options are not supported: {', '.join(map(repr, options))}")
    signatures = [signatures] if isinstance(signatures, str) else list(signatures)
    return lambda fn: GUFunc(fn, signatures, layout)
