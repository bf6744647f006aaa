"""NumPy's dispatch protocols on jiasu.Array: ``np.add(a, b)``, ``np.sum(a, axis=0)`` or ``np.matmul(a, b)`` with
jiasu arrays run jiasu's own function of the same name and return jiasu arrays, as CuPy does. A NumPy function
jiasu has no counterpart for raises NumPy's TypeError ("no implementation found"), rather than copying the data to
the host behind the caller's back; ``a.get()`` (or ``np.asarray(a)``) copies explicitly.
"""
import jiasu

# NumPy's names that jiasu spells otherwise (np.absolute is jiasu.abs, np.remainder is jiasu.mod).
_RENAMED = {"absolute": "abs", "remainder": "mod", "true_divide": "divide", "amax": "max", "amin": "min"}
# ufunc.reduce(a, axis=...) is this reduction.
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
               "logical_or": "any"}


# Metadata NumPy reads through functions.
_METADATA = {"shape": lambda a: a.shape, "ndim": lambda a: a.ndim,
             "size": lambda a, axis=None: a.size if axis is None else a.shape[axis]}


def _jiasu_function(name):
    return getattr(jiasu, _RENAMED.get(name, name), None) or _METADATA.get(name)


def _no_host_arrays(name, values):
    import numpy as np

    for value in values:
        if isinstance(value, np.ndarray):
            raise TypeError(f"numpy.{name} was given a jiasu array and a NumPy array: convert the NumPy array with "
                            "jiasu.asarray(x) (or the jiasu array with a.get()); jiasu does not copy implicitly")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "__call__":
        function = _jiasu_function(ufunc.__name__)
    elif method == "reduce" and ufunc.__name__ in _REDUCTIONS:
        function = getattr(jiasu, _REDUCTIONS[ufunc.__name__], None)
        kwargs.setdefault("axis", 0)  # ufunc.reduce's default, where the reductions' is None
    elif method == "accumulate" and ufunc.__name__ == "add":
        function = getattr(jiasu, "cumsum", None)
        kwargs.setdefault("axis", 0)
    else:
        function = None
    if function is None:
        return NotImplemented
    out = kwargs.get("out")
    if isinstance(out, tuple):  # NumPy always passes out= as a tuple to __array_ufunc__
        if len(out) != 1:
            return NotImplemented
        kwargs["out"] = out[0]
    _no_host_arrays(ufunc.__name__, inputs + ((kwargs["out"],) if "out" in kwargs else ()))
    return function(*inputs, **kwargs)


def array_function(self, func, types, args, kwargs):
    function = _jiasu_function(func.__name__)
    if function is None or function is func:
        return NotImplemented
    if not all(issubclass(t, jiasu.Array) or t.__module__.startswith("numpy") for t in types):
        return NotImplemented
    flat = [a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else (arg,))]
    _no_host_arrays(func.__name__, flat)
    return function(*args, **kwargs)


jiasu.Array.__array_ufunc__ = array_ufunc
jiasu.Array.__array_function__ = array_function
