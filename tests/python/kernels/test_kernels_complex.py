"""Python-written kernels on complex numbers: complex64/complex128 arrays and scalars, imaginary literals,
Python's operators, abs/real/imag/conjugate, complex(), and every cmath function, against NumPy and CPython's
cmath in complex128 (special values: infinities, nans and signed zeros, as CPython gives them)."""
import cmath
import itertools
import math

import numpy as np
import pytest

import jiasu

from .kernels_support import blocks_for

COMPLEX = [np.complex64, np.complex128]
# Error against the complex128 reference, relative to the result or to 1 (the terms are of order 1, so a result
# near 0 keeps their absolute error): a few ulp of the type's float parts.
TOL = {np.dtype(np.complex64): 3e-6, np.dtype(np.complex128): 1e-14}


def random_complex(rng, n, dtype):
    return (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dtype)


def assert_close(out, ref, dtype):
    ref = np.asarray(ref, np.complex128)
    err = np.abs(out.astype(np.complex128) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= TOL[np.dtype(dtype)], (err.max(), out[err.argmax()], ref[err.argmax()])


@jiasu.kernel
def k_arithmetic(a, b, s, out):
    i = jiasu.grid(1)
    if i < out.size:
        z = a[i] * b[i] + 2j - s
        out[i] = z / (1.5 - 0.5j) + abs(a[i]) + z.conjugate() * a[i].real - b[i].imag + (-a[i]) ** 2


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_operators_and_parts_match_numpy(dtype, rng):
    n = 1000
    a, b = random_complex(rng, n, dtype), random_complex(rng, n, dtype)
    s = 0.25 + 1j  # a Python complex: weak, so complex64 stays complex64 (NEP 50)
    out = jiasu.zeros(n, dtype)
    k_arithmetic[blocks_for(n, 128), 128](jiasu.asarray(a), jiasu.asarray(b), s, out)
    a64, b64 = a.astype(np.complex128), b.astype(np.complex128)
    z = a64 * b64 + 2j - s
    ref = z / (1.5 - 0.5j) + np.abs(a64) + z.conjugate() * a64.real - b64.imag + (-a64) ** 2
    assert_close(out.get(), ref, dtype)


@jiasu.kernel
def k_compare_and_build(a, b, re, out, same):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = complex(re[i], 2 * re[i]) + complex(re[i]) + complex() + np.complex64(re[i])
        same[i] = a[i] == b[i] and not (a[i] != b[i]) and bool(a[i])


def test_comparison_construction_and_truth(rng):
    a = np.array([1 + 2j, 0j, -1j, 3 + 0j], np.complex128)
    b = np.array([1 + 2j, 0j, 1j, 3 - 0j], np.complex128)
    re = np.array([0.5, -1.0, 2.0, 0.0])
    out, same = jiasu.zeros(4, np.complex128), jiasu.zeros(4, np.bool_)
    k_compare_and_build[1, 32](jiasu.asarray(a), jiasu.asarray(b), jiasu.asarray(re), out, same)
    np.testing.assert_array_equal(out.get(), (re + 2j * re) + re + 0 + re)
    np.testing.assert_array_equal(same.get(), (a == b) & (a != 0))


@jiasu.kernel
def k_power(a, b, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = a[i] ** b[i] + pow(a[i], 3) + a[i] ** -2


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_power_matches_numpy(dtype, rng):
    n = 500
    a, b = random_complex(rng, n, dtype), random_complex(rng, n, dtype)
    out = jiasu.zeros(n, dtype)
    k_power[blocks_for(n, 128), 128](jiasu.asarray(a), jiasu.asarray(b), out)
    a64, b64 = a.astype(np.complex128), b.astype(np.complex128)
    assert_close(out.get(), a64 ** b64 + a64 ** 3 + a64 ** -2.0, dtype)


UNARY = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
         "asinh", "acosh", "atanh"]


@jiasu.kernel
def k_cmath(z, out):  # out[k, i] = cmath.UNARY[k](z[i])
    i = jiasu.grid(1)
    if i < z.size:
        v = z[i]
        out[0, i] = cmath.exp(v)
        out[1, i] = cmath.log(v)
        out[2, i] = cmath.log10(v)
        out[3, i] = cmath.sqrt(v)
        out[4, i] = cmath.sin(v)
        out[5, i] = cmath.cos(v)
        out[6, i] = cmath.tan(v)
        out[7, i] = cmath.asin(v)
        out[8, i] = cmath.acos(v)
        out[9, i] = cmath.atan(v)
        out[10, i] = cmath.sinh(v)
        out[11, i] = cmath.cosh(v)
        out[12, i] = cmath.tanh(v)
        out[13, i] = cmath.asinh(v)
        out[14, i] = cmath.acosh(v)
        out[15, i] = cmath.atanh(v)


def special_values():
    parts = [-0.0, 0.0, 1.0, -1.0, 1.5, -math.pi, math.inf, -math.inf, math.nan]
    return [complex(x, y) for x, y in itertools.product(parts, parts)]


def same_value(got, expected, tol, floor=1e-300):
    """Equal as CPython's cmath tests compare: nans match nans, infinities and zeros match with their signs; other
    parts within tol of max(|expected|, floor)."""
    for g, e in ((got.real, expected.real), (got.imag, expected.imag)):
        if math.isnan(e):
            if not math.isnan(g):
                return False
        elif math.isinf(e) or e == 0:
            if g != e or math.copysign(1, g) != math.copysign(1, e):
                return False
        elif abs(g - e) > tol * max(abs(expected), floor):
            return False
    return True


def test_cmath_functions_match_cpython_with_special_values(rng):
    """Each cmath function against CPython's on random values and on every pair of special parts that are not
    nan (with a nan part, some functions give nan parts where CPython's tables give a zero or an infinity:
    docs/kernel-language.md)."""
    z = np.array(list(random_complex(rng, 200, np.complex128)) + special_values(), np.complex128)
    out = jiasu.zeros((len(UNARY), len(z)), np.complex128)
    k_cmath[blocks_for(len(z), 128), 128](jiasu.asarray(z), out)
    got = out.get()
    bad = []
    for k, name in enumerate(UNARY):
        for i, v in enumerate(z):
            if math.isnan(v.real) or math.isnan(v.imag):
                continue
            try:
                expected = getattr(cmath, name)(v)
            except ValueError:  # CPython's domain errors (log(0), ...): jiasu gives NumPy's inf/nan instead
                continue
            # log|z| near |z| = 1 cancels: its error is a few ulp of 1, not of the small result
            floor = 1.0 if name in ("log", "log10") else 1e-300
            if not same_value(complex(got[k, i]), expected, 1e-14, floor):
                bad.append((name, v, got[k, i], expected))
    assert not bad, bad[:8]


@jiasu.kernel
def k_cmath_others(z, r, phi, phase, polar_r, polar_phi, rect, flags, logb):
    i = jiasu.grid(1)
    if i < z.size:
        phase[i] = cmath.phase(z[i])
        polar = cmath.polar(z[i])
        polar_r[i] = polar[0]
        polar_phi[i] = polar[1]
        rect[i] = cmath.rect(r[i], phi[i])
        flags[i] = cmath.isnan(z[i]) * 1 + cmath.isinf(z[i]) * 2 + cmath.isfinite(z[i]) * 4 + np.isnan(z[i]) * 8
        logb[i] = cmath.log(z[i], 2 + 1j) + cmath.pi + cmath.e


def test_phase_polar_rect_classification_and_log_base(rng):
    z = np.array(special_values() + list(random_complex(rng, 50, np.complex128)), np.complex128)
    r, phi = rng.uniform(0, 3, len(z)), rng.uniform(-4, 4, len(z))
    outs = [jiasu.zeros(len(z), d) for d in (np.float64, np.float64, np.float64, np.complex128, np.int64,
                                             np.complex128)]
    k_cmath_others[blocks_for(len(z), 64), 64](jiasu.asarray(z), jiasu.asarray(r), jiasu.asarray(phi), *outs)
    phase, polar_r, polar_phi, rect, flags, logb = (o.get() for o in outs)
    # CUDA's atan2 and hypot are within 2 ulp, not correctly rounded; special values are exact (nan, inf, +-pi).
    np.testing.assert_allclose(phase, [cmath.phase(v) for v in z], rtol=5e-16, atol=0)
    np.testing.assert_allclose(polar_r, [cmath.polar(v)[0] for v in z], rtol=5e-16, atol=0)
    np.testing.assert_allclose(polar_phi, [cmath.polar(v)[1] for v in z], rtol=5e-16, atol=0)
    np.testing.assert_allclose(rect, [cmath.rect(a, b) for a, b in zip(r, phi)], rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(flags, [cmath.isnan(v) + 2 * cmath.isinf(v) + 4 * cmath.isfinite(v) +
                                          8 * cmath.isnan(v) for v in z])
    finite = np.isfinite(z) & (z != 0)
    ref = np.array([cmath.log(v, 2 + 1j) + cmath.pi + cmath.e for v in z[finite]])
    np.testing.assert_allclose(logb[finite], ref, rtol=1e-14)


@jiasu.kernel
def k_numpy_on_complex(z, out):
    i = jiasu.grid(1)
    if i < z.size:
        out[i] = np.exp(z[i]) + np.sqrt(z[i]) + np.conj(z[i]) + np.real(z[i]) + np.imag(z[i]) * 1j + np.abs(z[i])


@jiasu.kernel
def k_complex_scalar_and_shared(z, s, out):
    buffer = jiasu.shared.array(32, np.complex64)
    t = jiasu.threadIdx.x
    buffer[t] = z[t] * s
    jiasu.syncthreads()
    out[t] = buffer[31 - t]


def test_numpy_spellings_scalar_arguments_and_shared_arrays(rng):
    z = random_complex(rng, 32, np.complex64)
    out = jiasu.zeros(32, np.complex64)
    k_numpy_on_complex[1, 32](jiasu.asarray(z), out)
    z64 = z.astype(np.complex128)
    ref = np.exp(z64) + np.sqrt(z64) + np.conj(z64) + z64.real + z64.imag * 1j + np.abs(z64)
    assert_close(out.get(), ref, np.complex64)
    for s in (2 - 1j, np.complex64(0.5 + 3j), np.complex128(-1j)):  # Python complex and NumPy complex scalars
        k_complex_scalar_and_shared[1, 32](jiasu.asarray(z), s, out)
        expected = (z.astype(np.complex128) * complex(s))[::-1]
        assert_close(out.get(), expected, np.complex64)


def test_math_functions_and_ordering_refuse_complex_numbers():
    def ordered(z, out):
        out[0] = z[0] < z[1]

    def math_sqrt(z, out):
        out[0] = math.sqrt(z[0])

    z = jiasu.zeros(2, np.complex64)
    with pytest.raises(jiasu.CompileError, match="unsupported operand types for <: complex64 and complex64"):
        jiasu.kernel(ordered)[1, 1](z, jiasu.zeros(1, np.bool_))
    with pytest.raises(jiasu.CompileError, match=r"cmath.sqrt takes complex numbers"):
        jiasu.kernel(math_sqrt)[1, 1](z, jiasu.zeros(1, np.float32))


@jiasu.kernel
def parts_as_views(z, re, im):
    i = jiasu.grid(1)
    imaginary = z.imag
    if i < imaginary.shape[0]:
        re[i] = z.real[i]
        im[i] = imaginary[i]
        jiasu.atomic.add(z.real, i, 1)  # writes through the view, into z
        imaginary[i] = -imaginary[i]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_and_imag_of_a_complex_array_are_views(rng, dtype):
    host = random_complex(rng, 80, dtype)
    z = jiasu.asarray(host)[::2]  # strided, too
    part = np.float32 if dtype == np.complex64 else np.float64
    re, im = jiasu.zeros(40, part), jiasu.zeros(40, part)
    parts_as_views[blocks_for(40, 32), 32](z, re, im)
    np.testing.assert_array_equal(re.get(), host[::2].real)
    np.testing.assert_array_equal(im.get(), host[::2].imag)
    expected = host.copy()
    expected[::2] = (host[::2].real + 1) - 1j * host[::2].imag
    np.testing.assert_array_equal(z.get(), expected[::2])


def test_imag_of_a_real_array_is_refused():
    def imaginary_of_real(a, out):
        out[0] = a.imag[0]

    with pytest.raises(jiasu.CompileError, match="only complex arrays have an imaginary part"):
        jiasu.kernel(imaginary_of_real)[1, 1](jiasu.zeros(2, np.float32), jiasu.zeros(1, np.float32))
