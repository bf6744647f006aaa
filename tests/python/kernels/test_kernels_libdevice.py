"""Numba's cuda.libdevice functions in kernels: libdevice.NAMEf on float32 values and libdevice.NAME on float64 ones,
against float64 NumPy references (the float32 ones within float32's tolerance), spelled both ways Numba's code
spells them (``cuda.libdevice.sinf(x)`` and, after ``from numba.cuda import libdevice``, ``libdevice.sinf(x)``).
Every function of a group runs in one generated kernel (one row of a 2-D array each), so that the test compiles a
few kernels rather than a hundred."""
import importlib.util
import math

import numpy as np
import pytest

import jiasu
from jiasu import cuda

from .kernels_support import assert_rel, assert_same, blocks_for, poisoned, rand_float

N = 4099
TOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-14}
FAST_TOL = 1e-5  # CUDA's approximate intrinsics (__expf, __sinf, ...); the CPU backend computes the exact functions


def _vectorized(f):
    return np.vectorize(f, otypes=[np.float64])


# name: (float64 reference, range of each argument); every one has a float32 (NAMEf) and a float64 (NAME) function
UNARY = {
    "sqrt": (np.sqrt, (0.0, 100.0)), "exp": (np.exp, (-10.0, 10.0)), "log": (np.log, (0.01, 100.0)),
    "log2": (np.log2, (0.01, 100.0)), "log10": (np.log10, (0.01, 100.0)), "log1p": (np.log1p, (-0.9, 10.0)),
    "expm1": (np.expm1, (-5.0, 5.0)), "sin": (np.sin, (-10.0, 10.0)), "cos": (np.cos, (-10.0, 10.0)),
    "tan": (np.tan, (-1.4, 1.4)), "asin": (np.arcsin, (-1.0, 1.0)), "acos": (np.arccos, (-1.0, 1.0)),
    "atan": (np.arctan, (-10.0, 10.0)), "sinh": (np.sinh, (-5.0, 5.0)), "cosh": (np.cosh, (-5.0, 5.0)),
    "tanh": (np.tanh, (-5.0, 5.0)), "erf": (_vectorized(math.erf), (-3.0, 3.0)),
    "erfc": (_vectorized(math.erfc), (-3.0, 3.0)), "fabs": (np.abs, (-50.0, 50.0)), "exp2": (np.exp2, (-20.0, 20.0)),
    "acosh": (np.arccosh, (1.0, 100.0)), "asinh": (np.arcsinh, (-100.0, 100.0)), "atanh": (np.arctanh, (-0.99, 0.99)),
    "cbrt": (np.cbrt, (-1e3, 1e3)), "lgamma": (_vectorized(math.lgamma), (0.1, 30.0)),
    "tgamma": (_vectorized(math.gamma), (0.1, 10.0)), "exp10": (lambda x: 10.0 ** x, (-5.0, 5.0)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100.0)),
}
BINARY = {
    "atan2": (np.arctan2, (-10.0, 10.0), (-10.0, 10.0)), "pow": (np.power, (0.1, 10.0), (-3.0, 3.0)),
    "fmod": (np.fmod, (-100.0, 100.0), (1.0, 10.0)), "copysign": (np.copysign, (-10.0, 10.0), (-1.0, 1.0)),
    "hypot": (np.hypot, (-10.0, 10.0), (-10.0, 10.0)),
    "remainder": (_vectorized(math.remainder), (-100.0, 100.0), (1.0, 10.0)),
    "fdim": (lambda x, y: np.where(x > y, x - y, 0.0), (-10.0, 10.0), (-10.0, 10.0)),
    "fmax": (np.fmax, (-10.0, 10.0), (-10.0, 10.0)), "fmin": (np.fmin, (-10.0, 10.0), (-10.0, 10.0)),
}
TERNARY = {"fma": (lambda x, y, z: x * y + z, (-10.0, 10.0), (-10.0, 10.0), (-10.0, 10.0))}
# Rounding to an integral float, exact on both backends; `round` rounds half away from zero (C's round).
ROUNDING = {
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    "round": lambda x: np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x)),
}
# float32 only: on a GPU, CUDA's approximate intrinsics
FAST_UNARY = {
    "fast_expf": (np.exp, (-10.0, 10.0)), "fast_exp10f": (lambda x: 10.0 ** x, (-5.0, 5.0)),
    "fast_logf": (np.log, (0.01, 100.0)), "fast_log2f": (np.log2, (0.01, 100.0)),
    "fast_log10f": (np.log10, (0.01, 100.0)), "fast_sinf": (np.sin, (-3.0, 3.0)), "fast_cosf": (np.cos, (-3.0, 3.0)),
    "fast_tanf": (np.tan, (-1.0, 1.0)),
}
FAST_BINARY = {"fast_powf": (np.power, (0.5, 4.0), (-3.0, 3.0)), "fast_fdividef": (np.divide, (-10.0, 10.0), (1.0, 10.0))}


def _functions(dtype):
    """(libdevice name, reference, ranges, tolerance, exact) of every function taking `dtype`."""
    suffix, tol = "f" if dtype == np.float32 else "", TOL[np.dtype(dtype)]
    out = [(name + suffix, ref, ranges, tol, False) for name, (ref, *ranges) in {**UNARY, **BINARY, **TERNARY}.items()]
    out += [(name + suffix, ref, [(-20.0, 20.0)], 0, True) for name, ref in ROUNDING.items()]
    if dtype == np.float32:
        out += [(name, ref, ranges, FAST_TOL, False) for name, (ref, *ranges) in {**FAST_UNARY, **FAST_BINARY}.items()]
    return out


def _kernel_source(name, functions):
    """A kernel computing out[k, i] = f_k(x[k, i], ...) for each function f_k of one arity, alternating the two
    spellings of Numba's code."""
    lines = [f"@cuda.jit\ndef {name}(x, y, z, out):", "    i = cuda.grid(1)", "    if i < out.shape[1]:"]
    for k, (function, _, ranges, _, _) in enumerate(functions):
        args = ", ".join(f"{v}[{k}, i]" for v in "xyz"[:len(ranges)])
        prefix = "cuda.libdevice" if k % 2 else "libdevice"
        lines.append(f"        out[{k}, i] = {prefix}.{function}({args})")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated kernels, as a module of their own (jiasu reads a kernel's source from its file)."""
    groups = {}
    for dtype in (np.float32, np.float64):
        for arity in (1, 2, 3):
            functions = [f for f in _functions(dtype) if len(f[2]) == arity]
            groups[f"apply{arity}_{np.dtype(dtype).name}"] = (dtype, functions)
    source = "from jiasu import cuda\nfrom jiasu.cuda import libdevice\n\n\n" + "\n\n".join(
        _kernel_source(name, functions) for name, (_, functions) in groups.items())
    path = tmp_path_factory.mktemp("libdevice") / "libdevice_kernels.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("libdevice_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: (getattr(module, name), dtype, functions) for name, (dtype, functions) in groups.items()}


def _inputs(rng, dtype, ranges, exact):
    if exact:  # halves and other fractions, where the five roundings differ
        return [(rng.integers(-80, 80, N) / 4).astype(dtype)]
    return [rand_float(rng, N, dtype, lo, hi) for lo, hi in ranges]


@pytest.mark.parametrize("group", [f"apply{a}_{d}" for d in ("float32", "float64") for a in (1, 2, 3)])
def test_libdevice_functions_against_numpy(rng, generated, group):
    kernel, dtype, functions = generated[group]
    count = len(functions)
    args = np.ones((3, count, N), dtype)
    for k, (_, _, ranges, _, exact) in enumerate(functions):
        for j, values in enumerate(_inputs(rng, dtype, ranges, exact)):
            args[j, k] = values
    out = poisoned((count, N), dtype)
    kernel[blocks_for(N, 128), 128](jiasu.asarray(args[0]), jiasu.asarray(args[1]), jiasu.asarray(args[2]), out)
    got = out.get()
    assert got.dtype == np.dtype(dtype)
    wide = args.astype(np.float64)
    for k, (name, reference, ranges, tol, exact) in enumerate(functions):
        expected = reference(*(wide[j, k] for j in range(len(ranges))))
        if exact:
            assert_same(got[k], expected.astype(dtype), f"libdevice.{name}")
        else:
            assert_rel(got[k], expected, tol, f"libdevice.{name}")


@cuda.jit
def k_nextafter(x, y, out32, out64):
    i = cuda.grid(1)
    if i < x.size:
        out32[i] = cuda.libdevice.nextafterf(x[i], y[i])
        out64[i] = cuda.libdevice.nextafter(x[i], y[i])


def test_nextafter_steps_in_the_precision_of_its_name(rng):
    x = rand_float(rng, N, np.float32, -10.0, 10.0)
    y = np.where(rng.random(N) < 0.5, np.float32(np.inf), np.float32(-np.inf))
    out32, out64 = poisoned(N, np.float32), poisoned(N, np.float64)
    k_nextafter[blocks_for(N, 128), 128](jiasu.asarray(x), jiasu.asarray(y), out32, out64)
    assert_same(out32, np.nextafter(x, y))
    assert_same(out64, np.nextafter(x.astype(np.float64), y.astype(np.float64)))


@cuda.jit
def k_precision(x, single, double):
    i = cuda.grid(1)
    if i < x.size:
        single[i] = cuda.libdevice.sinf(x[i])  # a float64 argument, converted to float32 as Numba converts it
        double[i] = cuda.libdevice.sin(np.float32(x[i]))


def test_the_f_functions_compute_in_float32_the_others_in_float64(rng):
    x = rand_float(rng, N, np.float64, -10.0, 10.0)
    single, double = poisoned(N, np.float64), poisoned(N, np.float64)
    k_precision[blocks_for(N, 128), 128](jiasu.asarray(x), single, double)
    single, double = single.get(), double.get()
    assert_same(single, single.astype(np.float32).astype(np.float64), "libdevice.sinf gives float32 values")
    assert_rel(single, np.sin(x), TOL[np.dtype(np.float32)], "libdevice.sinf")
    assert np.mean(single != np.sin(x)) > 0.9, "libdevice.sinf must not compute in float64"
    assert_rel(double, np.sin(x.astype(np.float32).astype(np.float64)), TOL[np.dtype(np.float64)], "libdevice.sin")


def test_libdevice_on_the_host_says_it_works_in_kernels():
    assert cuda.libdevice is jiasu.libdevice and cuda.libdevice.sinf is jiasu.libdevice.sinf
    assert {"sinf", "sin", "fast_expf", "rsqrtf", "fma", "powf", "round", "tgammaf"} <= set(dir(cuda.libdevice))
    with pytest.raises(TypeError, match="jiasu.libdevice.sinf works inside kernels only"):
        cuda.libdevice.sinf(1.0)
    with pytest.raises(AttributeError, match="jiasu.libdevice has no kernel name 'sincosf'"):
        cuda.libdevice.sincosf  # noqa: B018
