"""Matrix products: jiasu.matmul (the @ operator), jiasu.dot, and the float32 precision of GPU products.

The work is done in C++ (core/ops/matmul): cuBLASLt on a GPU, NumPy's own product on the CPU backend.
"""
from __future__ import annotations

from . import _core


def matmul(a: _core.Array, b: _core.Array, /, out: _core.Array | None = None) -> _core.Array:
    """NumPy's matmul of two jiasu arrays on one device: 1-D operands are promoted to matrices (and the
    added dimension removed from the result), batch dimensions broadcast. ``out`` must have the result's
    shape and dtype. On a GPU: cuBLASLt, for float16, bfloat16, float32, float64, complex64 and complex128."""
    return _core.matmul(a, b, out)


def dot(a: _core.Array, b: _core.Array, out: _core.Array | None = None) -> _core.Array:
    """NumPy's dot: the inner product of 1-D arrays, matmul of 2-D ones, and for N-D arrays a sum over the
    last axis of ``a`` and the second-to-last of ``b``."""
    return _core.dot(a, b, out)


def set_matmul_precision(precision: str) -> None:
    """Whether float32 products on a GPU may use TF32 tensor cores, as ``torch.set_float32_matmul_precision``:
    ``"highest"`` (the default) computes in float32; ``"high"``, ``"medium"`` and ``"tf32"`` allow TF32
    (about 10 bits of mantissa in the products, several times faster). Process-wide."""
    _core.set_matmul_precision(precision)


def get_matmul_precision() -> str:
    """``"highest"`` or ``"high"`` (TF32 allowed): see set_matmul_precision."""
    return _core.get_matmul_precision()
