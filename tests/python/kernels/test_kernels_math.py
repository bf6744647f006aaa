"""Python-written kernels: the math module (every function, on float32 and float64, against float64 NumPy
references), its constants, jiasu.fma and jiasu.cbrt, and the bit intrinsics popc, clz, ffs and brev."""
import math
from fractions import Fraction

import numpy as np
import pytest

import jiasu

from .kernels_support import assert_rel, assert_same, blocks_for, opposite, param_id, poisoned, rand_bits, rand_float


N = 65_537
FLOATS = [np.float32, np.float64]
# Relative-norm tolerance of a math function against the float64 reference: CUDA's float32 functions are
# within a few ulp (2**-23 each), its float64 ones within a few ulp of 2**-52.
MATH_TOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-14}


# ---------------------------------------------------------------- one-argument functions


@jiasu.kernel
def k_sqrt(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.sqrt(x[i])


@jiasu.kernel
def k_exp(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.exp(x[i])


@jiasu.kernel
def k_log(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.log(x[i])


@jiasu.kernel
def k_log2(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.log2(x[i])


@jiasu.kernel
def k_log10(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.log10(x[i])


@jiasu.kernel
def k_log1p(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.log1p(x[i])


@jiasu.kernel
def k_expm1(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.expm1(x[i])


@jiasu.kernel
def k_sin(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i])


@jiasu.kernel
def k_cos(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.cos(x[i])


@jiasu.kernel
def k_tan(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.tan(x[i])


@jiasu.kernel
def k_asin(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.asin(x[i])


@jiasu.kernel
def k_acos(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.acos(x[i])


@jiasu.kernel
def k_atan(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.atan(x[i])


@jiasu.kernel
def k_sinh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.sinh(x[i])


@jiasu.kernel
def k_cosh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.cosh(x[i])


@jiasu.kernel
def k_tanh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.tanh(x[i])


@jiasu.kernel
def k_erf(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.erf(x[i])


@jiasu.kernel
def k_erfc(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.erfc(x[i])


@jiasu.kernel
def k_fabs(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.fabs(x[i])


@jiasu.kernel
def k_exp2(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.exp2(x[i])


@jiasu.kernel
def k_acosh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.acosh(x[i])


@jiasu.kernel
def k_asinh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.asinh(x[i])


@jiasu.kernel
def k_atanh(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.atanh(x[i])


@jiasu.kernel
def k_cbrt(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.cbrt(x[i])


@jiasu.kernel
def k_gamma(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.gamma(x[i])


@jiasu.kernel
def k_lgamma(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.lgamma(x[i])


@jiasu.kernel
def k_degrees(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.degrees(x[i])


@jiasu.kernel
def k_radians(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.radians(x[i])


@jiasu.kernel
def k_jiasu_cbrt(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = jiasu.cbrt(x[i])


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_gamma = np.vectorize(math.gamma, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_degrees = np.vectorize(math.degrees, otypes=[np.float64])
_radians = np.vectorize(math.radians, otypes=[np.float64])

# name: (kernel, float64 reference, input range)
UNARY = {
    "sqrt": (k_sqrt, np.sqrt, (0.0, 100.0)),
    "exp": (k_exp, np.exp, (-10.0, 10.0)),
    "log": (k_log, np.log, (0.01, 100.0)),
    "log2": (k_log2, np.log2, (0.01, 100.0)),
    "log10": (k_log10, np.log10, (0.01, 100.0)),
    "log1p": (k_log1p, np.log1p, (-0.9, 10.0)),
    "expm1": (k_expm1, np.expm1, (-5.0, 5.0)),
    "sin": (k_sin, np.sin, (-10.0, 10.0)),
    "cos": (k_cos, np.cos, (-10.0, 10.0)),
    "tan": (k_tan, np.tan, (-1.4, 1.4)),
    "asin": (k_asin, np.arcsin, (-1.0, 1.0)),
    "acos": (k_acos, np.arccos, (-1.0, 1.0)),
    "atan": (k_atan, np.arctan, (-10.0, 10.0)),
    "sinh": (k_sinh, np.sinh, (-5.0, 5.0)),
    "cosh": (k_cosh, np.cosh, (-5.0, 5.0)),
    "tanh": (k_tanh, np.tanh, (-5.0, 5.0)),
    "erf": (k_erf, _erf, (-3.0, 3.0)),
    "erfc": (k_erfc, _erfc, (-3.0, 3.0)),
    "fabs": (k_fabs, np.abs, (-50.0, 50.0)),
    "exp2": (k_exp2, np.exp2, (-20.0, 20.0)),
    "acosh": (k_acosh, np.arccosh, (1.0, 100.0)),
    "asinh": (k_asinh, np.arcsinh, (-100.0, 100.0)),
    "atanh": (k_atanh, np.arctanh, (-0.99, 0.99)),
    "cbrt": (k_cbrt, np.cbrt, (-1e3, 1e3)),
    "jiasu.cbrt": (k_jiasu_cbrt, np.cbrt, (-1e3, 1e3)),
    "gamma": (k_gamma, _gamma, (0.1, 10.0)),
    "lgamma": (k_lgamma, _lgamma, (0.1, 30.0)),
    "degrees": (k_degrees, _degrees, (-10.0, 10.0)),
    "radians": (k_radians, _radians, (-720.0, 720.0)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=param_id)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_math_unary(rng, name, dtype):
    kernel, reference, (lo, hi) = UNARY[name]
    x = rand_float(rng, N, dtype, lo, hi)
    out = poisoned(N, dtype)
    kernel[blocks_for(N, 256), 256](jiasu.asarray(x), out)
    got = out.get()
    assert got.dtype == np.dtype(dtype), f"math.{name} of {np.dtype(dtype)} must stay {np.dtype(dtype)}"
    assert_rel(got, reference(x.astype(np.float64)), MATH_TOL[np.dtype(dtype)], f"math.{name}")


def test_math_of_integers_is_float64(rng):
    x = rand_float(rng, N, np.float64, 0, 10**6).astype(np.int32)
    out = poisoned(N, np.float64)
    k_sqrt[blocks_for(N, 256), 256](jiasu.asarray(x), out)
    assert_rel(out, np.sqrt(x.astype(np.float64)), 1e-15, "math.sqrt(int32)")


# ---------------------------------------------------------------- two-argument functions


@jiasu.kernel
def k_atan2(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.atan2(y[i], x[i])


@jiasu.kernel
def k_pow(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.pow(y[i], x[i])


@jiasu.kernel
def k_fmod(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.fmod(y[i], x[i])


@jiasu.kernel
def k_copysign(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.copysign(y[i], x[i])


@jiasu.kernel
def k_hypot(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.hypot(y[i], x[i])


@jiasu.kernel
def k_remainder(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.remainder(y[i], x[i])


@jiasu.kernel
def k_nextafter(y, x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = math.nextafter(y[i], x[i])


_remainder = np.vectorize(math.remainder, otypes=[np.float64])


# name: (kernel, float64 reference, first argument's range, second argument's range)
BINARY = {
    "atan2": (k_atan2, np.arctan2, (-10.0, 10.0), (-10.0, 10.0)),
    "pow": (k_pow, np.power, (0.1, 4.0), (-3.0, 3.0)),
    "fmod": (k_fmod, np.fmod, (-100.0, 100.0), (-7.0, 7.0)),
    "copysign": (k_copysign, np.copysign, (-50.0, 50.0), (-1.0, 1.0)),
    "hypot": (k_hypot, np.hypot, (-1e3, 1e3), (-1e3, 1e3)),
    "remainder": (k_remainder, _remainder, (-100.0, 100.0), (-7.0, 7.0)),
    "nextafter": (k_nextafter, np.nextafter, (-100.0, 100.0), (-100.0, 100.0)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=param_id)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_math_binary(rng, name, dtype):
    kernel, reference, (lo1, hi1), (lo2, hi2) = BINARY[name]
    y = rand_float(rng, N, dtype, lo1, hi1)
    x = rand_float(rng, N, dtype, lo2, hi2, avoid=0.05)
    out = poisoned(N, dtype)
    kernel[blocks_for(N, 256), 256](jiasu.asarray(y), jiasu.asarray(x), out)
    got = out.get()
    assert got.dtype == np.dtype(dtype)
    assert_rel(got, reference(y.astype(np.float64), x.astype(np.float64)), MATH_TOL[np.dtype(dtype)],
               f"math.{name}")
    if name in ("fmod", "copysign", "remainder", "nextafter"):  # exact operations, in the argument's precision
        exact = np.nextafter(y, x) if name == "nextafter" else reference(y, x).astype(dtype)
        assert_same(got, exact, f"math.{name} (exact)")


# ---------------------------------------------------------------- floor, ceil, trunc, predicates, constants


@jiasu.kernel
def k_rounding(x, fl, ce, tr):
    i = jiasu.grid(1)
    if i < x.size:
        fl[i] = math.floor(x[i])
        ce[i] = math.ceil(x[i])
        tr[i] = math.trunc(x[i])


@pytest.mark.parametrize("dtype", FLOATS, ids=param_id)
def test_floor_ceil_trunc_give_int64(rng, dtype):
    x = rand_float(rng, N, dtype, -1e5, 1e5)
    x[:8] = [2.0, -2.0, 2.5, -2.5, 0.25, -0.25, 1e5 - 0.5, -1e5 + 0.5]
    outs = [poisoned(N, np.int64) for _ in range(3)]
    k_rounding[blocks_for(N, 256), 256](jiasu.asarray(x), *outs)
    for got, ref, what in zip(outs, [np.floor(x), np.ceil(x), np.trunc(x)], ["floor", "ceil", "trunc"]):
        assert_same(got, ref.astype(np.int64), f"math.{what}")


@jiasu.kernel
def k_predicates(x, isnan_, isinf_, isfinite_):
    i = jiasu.grid(1)
    if i < x.size:
        isnan_[i] = math.isnan(x[i])
        isinf_[i] = math.isinf(x[i])
        isfinite_[i] = math.isfinite(x[i])


@pytest.mark.parametrize("dtype", FLOATS, ids=param_id)
def test_isnan_isinf_isfinite(rng, dtype):
    x = rand_float(rng, N, dtype, -1e3, 1e3)
    special = rng.choice(N, size=N // 4, replace=False)
    x[special] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype=dtype), size=special.size)
    x[:3] = [np.nan, np.inf, -np.inf]
    expected = [np.isnan(x), np.isinf(x), np.isfinite(x)]
    outs = [opposite(e) for e in expected]
    k_predicates[blocks_for(N, 256), 256](jiasu.asarray(x), *outs)
    for got, ref, what in zip(outs, expected, ["isnan", "isinf", "isfinite"]):
        assert_same(got, ref, f"math.{what}")


@jiasu.kernel
def k_constants(out, out32):
    if jiasu.grid(1) == 0:
        out[0] = math.pi
        out[1] = math.e
        out[2] = math.inf
        out[3] = -math.inf
        out[4] = math.nan
        out[5] = math.cos(math.pi)
        out32[0] = math.pi
        out32[1] = math.e


def test_math_constants():
    out = jiasu.full(6, 12345.0, dtype=np.float64)
    out32 = jiasu.full(2, 12345.0, dtype=np.float32)
    k_constants[1, 32](out, out32)
    got = out.get()
    assert got[0] == math.pi and got[1] == math.e
    assert got[2] == math.inf and got[3] == -math.inf
    assert math.isnan(got[4])
    assert got[5] == -1.0
    assert_same(out32, np.array([math.pi, math.e], dtype=np.float32))


# ---------------------------------------------------------------- fma


@jiasu.kernel
def k_fma(a, b, c, out):
    i = jiasu.grid(1)
    if i < a.size:
        out[i] = jiasu.fma(a[i], b[i], c[i])


@pytest.mark.parametrize("dtype", FLOATS, ids=param_id)
def test_fma_rounds_once(rng, dtype):
    n = 4096
    a = rand_float(rng, n, dtype, -3, 3)
    b = rand_float(rng, n, dtype, -3, 3)
    c = rand_float(rng, n, dtype, -3, 3)
    half = n // 2
    # In the first half c = -round(a*b): the fused result is the rounding error of a*b, which an unfused
    # multiply-add would lose (giving 0). The exact value is representable, so the comparison is exact.
    c[:half] = -(a[:half] * b[:half])
    out = poisoned(n, dtype)
    k_fma[blocks_for(n, 128), 128](jiasu.asarray(a), jiasu.asarray(b), jiasu.asarray(c), out)
    exact = [Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)) for p, q, r in zip(a, b, c)]
    residual = np.array([float(e) for e in exact[:half]]).astype(dtype)
    assert np.count_nonzero(residual) > half // 2, "test data: a*b should rarely be exact"
    got = out.get()
    assert_same(got[:half], residual, "fma(a, b, -round(a*b))")
    assert_rel(got[half:], np.array([float(e) for e in exact[half:]]), MATH_TOL[np.dtype(dtype)] / 4,
               "fma(a, b, c)")


# ---------------------------------------------------------------- bit intrinsics


def _width(dtype):
    return np.dtype(dtype).itemsize * 8


def _unsigned(v, width):
    return int(v) & ((1 << width) - 1)


def _popc(v, width):
    return bin(_unsigned(v, width)).count("1")


def _clz(v, width):
    return width - _unsigned(v, width).bit_length()


def _ffs(v, width):
    u = _unsigned(v, width)
    return (u & -u).bit_length()


def _brev(v, width):
    return int(format(_unsigned(v, width), f"0{width}b")[::-1], 2)


@jiasu.kernel
def k_bits(x, popc, clz, ffs):
    i = jiasu.grid(1)
    if i < x.size:
        popc[i] = np.int32(jiasu.popc(x[i]))
        clz[i] = np.int32(jiasu.clz(x[i]))
        ffs[i] = np.int32(jiasu.ffs(x[i]))


@jiasu.kernel
def k_brev(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = jiasu.brev(x[i])


def _bit_inputs(rng, dtype, n=20_000):
    dtype = np.dtype(dtype)
    x = rand_bits(rng, n, dtype)
    # Fewer set bits in part of the data, so that clz and ffs see every position.
    shifts = rng.integers(0, _width(dtype), size=n // 2).astype(np.uint64)
    sparse = (np.uint64(1) << shifts).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    x[: n // 2] = sparse
    width = _width(dtype)
    edges = [0, 1, 2, 3, (1 << (width - 1)), (1 << width) - 1, 0x0F0F0F0F & ((1 << width) - 1)]
    x[:len(edges)] = np.array(edges, dtype=np.uint64).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    return x


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.uint64, np.int64], ids=param_id)
def test_popc_clz_ffs(rng, dtype):
    x = _bit_inputs(rng, dtype)
    width = _width(dtype)
    outs = [poisoned(x.size, np.int32) for _ in range(3)]
    k_bits[blocks_for(x.size, 256), 256](jiasu.asarray(x), *outs)
    for got, fn, what in zip(outs, [_popc, _clz, _ffs], ["popc", "clz", "ffs"]):
        assert_same(got, np.array([fn(v, width) for v in x], dtype=np.int32), f"jiasu.{what} on {np.dtype(dtype)}")


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64], ids=param_id)
def test_brev(rng, dtype):
    x = _bit_inputs(rng, dtype)
    width = _width(dtype)
    out = poisoned(x.size, dtype)
    k_brev[blocks_for(x.size, 256), 256](jiasu.asarray(x), out)
    expected = np.array([_brev(v, width) for v in x], dtype=np.uint64).astype(dtype)
    assert_same(out, expected, f"jiasu.brev on {np.dtype(dtype)}")
