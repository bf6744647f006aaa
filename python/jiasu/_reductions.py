"""Reductions of jiasu arrays with NumPy's names, parameters and result types (docs/arrays.md, "Reductions").

They run where the array lives (the GPU, or the CPU backend's threads) and return jiasu arrays: a reduction
over every axis gives a 0-d array, which ``.get()`` or ``float()`` of its ``.get()`` reads on the host.
"""
from __future__ import annotations

from . import _core
from ._core import Array

TYPE_CHECKING = False  # typing's own, without importing typing at `import jiasu`
if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import DTypeLike

    Axis = int | Sequence[int] | None

__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all", "cumsum"]


def _array(a, op):
    if not isinstance(a, _core.Array):
        raise TypeError(f"jiasu.{op} takes a jiasu.Array, not {type(a).__module__}.{type(a).__qualname__} "
                        "(jiasu.asarray moves host data to the device)")
    return a


def sum(a: Array, axis: Axis = None, dtype: DTypeLike = None, out: Array | None = None,  # noqa: A001 (NumPy's name)
        keepdims: bool = False, initial: complex | None = None) -> Array:
    return _core._reduce("sum", _array(a, "sum"), axis, dtype, out, keepdims, None, initial)


def prod(a: Array, axis: Axis = None, dtype: DTypeLike = None, out: Array | None = None, keepdims: bool = False,
         initial: complex | None = None) -> Array:
    return _core._reduce("prod", _array(a, "prod"), axis, dtype, out, keepdims, None, initial)


def max(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False,  # noqa: A001
        initial: complex | None = None) -> Array:
    return _core._reduce("max", _array(a, "max"), axis, None, out, keepdims, None, initial)


def min(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False,  # noqa: A001
        initial: complex | None = None) -> Array:
    return _core._reduce("min", _array(a, "min"), axis, None, out, keepdims, None, initial)


def mean(a: Array, axis: Axis = None, dtype: DTypeLike = None, out: Array | None = None,
         keepdims: bool = False) -> Array:
    return _core._reduce("mean", _array(a, "mean"), axis, dtype, out, keepdims, None)


def var(a: Array, axis: Axis = None, dtype: DTypeLike = None, out: Array | None = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    return _core._reduce("var", _array(a, "var"), axis, dtype, out, keepdims, ddof)


def std(a: Array, axis: Axis = None, dtype: DTypeLike = None, out: Array | None = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    return _core._reduce("std", _array(a, "std"), axis, dtype, out, keepdims, ddof)


def argmax(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False) -> Array:
    return _core._reduce("argmax", _array(a, "argmax"), axis, None, out, keepdims, None)


def argmin(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False) -> Array:
    return _core._reduce("argmin", _array(a, "argmin"), axis, None, out, keepdims, None)


def any(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False) -> Array:  # noqa: A001
    return _core._reduce("any", _array(a, "any"), axis, None, out, keepdims, None)


def all(a: Array, axis: Axis = None, out: Array | None = None, keepdims: bool = False) -> Array:  # noqa: A001
    return _core._reduce("all", _array(a, "all"), axis, None, out, keepdims, None)


def cumsum(a: Array, axis: Axis = None, dtype: DTypeLike = None) -> Array:
    return _core._cumsum(_array(a, "cumsum"), axis, dtype)
