"""@jiasu.vectorize and @jiasu.reduce: scalar Python functions as elementwise operations and reductions.

The function is written in jiasu's kernel language on numbers (docs/kernels.md) and compiled by the C++ core
(core/ops/user_function) once per dtype signature and backend, through the disk cache.
"""
from __future__ import annotations

import functools
import operator

from . import _core
from ._kernel import _Description

TYPE_CHECKING = False  # typing's own, without importing typing at `import jiasu`
if TYPE_CHECKING:
    from collections.abc import Callable


def _arity(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        raise TypeError(f"jiasu.vectorize and jiasu.reduce take Python functions, not {type(fn).__name__}")
    if code.co_flags & 0x0C or code.co_kwonlyargcount:  # *args, **kwargs, keyword-only parameters
        raise TypeError(f"{fn.__name__}: a @jiasu.vectorize function takes plain positional parameters")
    return code.co_argcount


class Vectorized:
    """A ufunc made from a scalar function: ``f(x, y, out=None)`` broadcasts its array operands, types each
    Python scalar as NumPy does beside them (NEP 50), and computes f element by element where the arrays
    live, giving f's result type for their dtypes (``out`` takes any dtype it casts to under 'same_kind')."""

    def __init__(self, fn):
        self._function = _core.UserFunction(_Description(fn), _arity(fn))
        functools.update_wrapper(self, fn)

    @property
    def nin(self):
        return self._function.arity

    def __call__(self, *args, out=None):
        return self._function(args, out)

    def inspect_source(self, *dtypes, backend="cuda"):
        """The generated code for these argument dtypes: the CUDA device function, or the CPU loop's C++."""
        if backend not in ("cuda", "cpu"):
            raise ValueError(f"backend must be 'cuda' or 'cpu', not {backend!r}")
        return self._function.source(list(dtypes), backend == "cuda")

    def __repr__(self):
        return f"<jiasu.vectorize {self.__name__}>"


class Reduction:
    """A reduction made from a binary scalar function f(a, b), which must be associative: ``r(a, axis=None,
    init=None, keepdims=False)`` folds f over the axes (all by default) in order, as a balanced tree, then
    applies f(init, result) when ``init`` is given. An empty reduction gives ``init`` (a ValueError without
    it). ``r.vectorized`` is f as an elementwise operation."""

    def __init__(self, fn):
        self.vectorized = Vectorized(fn)
        if self.vectorized.nin != 2:
            raise TypeError(f"@jiasu.reduce needs a function of two parameters; {fn.__name__} has "
                            f"{self.vectorized.nin}")
        functools.update_wrapper(self, fn)

    def __call__(self, a, axis=None, init=None, keepdims=False):
        if not isinstance(a, _core.Array):
            raise TypeError(f"{self.__name__} takes a jiasu.Array, not {type(a).__module__}."
                            f"{type(a).__qualname__} (jiasu.asarray moves host data to the device)")
        if axis is None:
            axes = list(range(a.ndim))
        elif isinstance(axis, (tuple, list)):
            axes = [operator.index(x) for x in axis]
        else:
            axes = [operator.index(axis)]
        return self.vectorized._function.reduce(a, axes, bool(keepdims), init)

    def __repr__(self):
        return f"<jiasu.reduce {self.__name__}>"


def vectorize(fn: Callable[..., object] | None = None) -> Vectorized | type[Vectorized]:
    """Make a scalar function an elementwise operation on jiasu arrays (see Vectorized)."""
    return Vectorized if fn is None else Vectorized(fn)


def reduce(fn: Callable[[object, object], object]) -> Reduction:  # noqa: A001 (functools' name, jiasu's meaning)
    """Make an associative binary scalar function a reduction of jiasu arrays (see Reduction)."""
    return Reduction(fn)
