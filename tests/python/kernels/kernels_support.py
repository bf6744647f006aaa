"""Helpers shared by the test_kernels_*.py modules (kernels written in Python with @jiasu.kernel).

Conventions of those modules:
* every kernel is defined at module level (jiasu compiles a kernel from its source text, read from the file);
* inputs are fresh random data from the ``rng`` fixture, never all zeros;
* every output is poisoned before the launch (NaN for floats, an unlikely sentinel for integers, the
  negation of the expected value for booleans), so that an element the kernel forgot to write fails;
* float results are compared with a relative norm against a float64 NumPy reference
  (``assert_rel``), integer and bit-exact results with ``assert_array_equal``.
"""
import ml_dtypes
import numpy as np

import jiasu

BF16 = np.dtype(ml_dtypes.bfloat16)

# Relative-norm tolerances, ||out - ref|| / ||ref||, for simple elementwise arithmetic of each dtype.
TOL = {
    np.dtype(np.float16): 2e-3,
    BF16: 1.6e-2,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-13,
}


def param_id(value):
    """A readable pytest id: the dtype name for dtypes and scalar types, repr() for anything else."""
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    return repr(value)


def blocks_for(n, threads):
    """Enough blocks of `threads` to cover n."""
    return (n + threads - 1) // threads


def is_float(dtype):
    dtype = np.dtype(dtype)
    return dtype == BF16 or np.issubdtype(dtype, np.floating)


def sentinel(dtype):
    """The poison value of an output of this dtype: NaN for floats, an unlikely value for integers."""
    dtype = np.dtype(dtype)
    if is_float(dtype):
        return np.nan
    if dtype == np.bool_:
        raise ValueError("poison boolean outputs with the negation of the expected result instead")
    info = np.iinfo(dtype)
    if info.min < 0:
        return info.min + 7  # -2147483641 for int32: not a result any test here expects
    return info.max - 7


def poisoned_host(shape, dtype):
    return np.full(shape, sentinel(dtype), dtype=np.dtype(dtype))


def poisoned(shape, dtype):
    """A jiasu array of this shape and dtype, full of the dtype's poison value."""
    return jiasu.asarray(poisoned_host(shape, dtype))


def opposite(expected_bools):
    """A jiasu bool array holding the negation of `expected_bools`: every element must be overwritten."""
    return jiasu.asarray(np.logical_not(np.asarray(expected_bools, dtype=np.bool_)))


def host(a):
    """NumPy data of a jiasu array, a torch/CuPy tensor or NumPy data."""
    if isinstance(a, jiasu.Array):
        return a.get()
    if hasattr(a, "get") and type(a).__module__.startswith("cupy"):
        return a.get()
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().numpy()
    return np.asarray(a)


def rand_float(rng, shape, dtype=np.float32, lo=-1.0, hi=1.0, avoid=None):
    """Uniform floats in [lo, hi) of `dtype`, never 0: values closer to 0 than `avoid` (default: a
    thousandth of the range) are moved to the middle of the positive (or negative) half."""
    values = rng.uniform(lo, hi, size=shape)
    if lo <= 0 <= hi:
        floor = avoid if avoid is not None else 1e-3 * (hi - lo)
        values[np.abs(values) < floor] = hi / 2 if hi > 0 else lo / 2
    return values.astype(np.dtype(dtype))


def rand_int(rng, shape, dtype, lo, hi, nonzero=False):
    """Uniform integers in [lo, hi] of `dtype` (zeros replaced by 1 or lo when `nonzero`)."""
    values = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)
    values = values.astype(np.dtype(dtype))
    if nonzero:
        values[values == 0] = 1 if hi >= 1 else lo
    return values


def rand_bits(rng, shape, dtype):
    """Integers with every bit random (the full range of `dtype`)."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 2 ** 64, size=shape, dtype=np.uint64, endpoint=False)
    return raw.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


def rel_err(out, ref):
    out = np.asarray(out).astype(np.float64)
    ref = np.asarray(ref).astype(np.float64)
    scale = np.linalg.norm(ref)
    diff = np.linalg.norm(out - ref)
    return diff / scale if scale else diff


def assert_rel(out, ref, tol, what="result"):
    """||out - ref|| / ||ref|| < tol (fails on NaN: a poisoned element that was never written)."""
    out = host(out)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != expected {ref.shape}"
    bad = np.isnan(out.astype(np.float64)) & ~np.isnan(ref.astype(np.float64))
    assert not bad.any(), f"{what}: {int(bad.sum())} element(s) NaN, first at {np.argwhere(bad)[0].tolist()}"
    err = rel_err(out, ref)
    assert err < tol, f"{what}: relative error {err:.3e} >= {tol:.1e}"


def assert_same(out, ref, what="result"):
    """Exact equality (same dtype and values; NaNs compare equal where both have one)."""
    out = host(out)
    ref = np.asarray(ref)
    assert out.dtype == ref.dtype, f"{what}: dtype {out.dtype} != expected {ref.dtype}"
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != expected {ref.shape}"
    if out.dtype == BF16 or np.issubdtype(out.dtype, np.floating):
        a, b = out.astype(np.float64), ref.astype(np.float64)
        mismatch = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    else:
        mismatch = out != ref
    if mismatch.any():
        first = tuple(np.argwhere(mismatch)[0].tolist())
        raise AssertionError(f"{what}: {int(mismatch.sum())} of {out.size} element(s) differ; first at {first}: "
                             f"got {out[first]!r}, expected {ref[first]!r}")


def assert_untouched(values, dtype, what="untouched elements"):
    """Every element still holds the poison of `dtype` (the kernel wrote nothing there)."""
    values = host(values)
    poison = sentinel(dtype)
    if isinstance(poison, float) and np.isnan(poison):
        ok = np.isnan(values.astype(np.float64))
    else:
        ok = values == poison
    assert ok.all(), f"{what}: {int((~ok).sum())} element(s) overwritten"


def first_signature(kernel, what="inspect_cuda"):
    """The only entry of kernel.<what>() (asserting there is exactly one)."""
    entries = getattr(kernel, what)()
    assert len(entries) == 1, f"{what}: expected one signature, got {list(entries)}"
    return next(iter(entries.values()))


def source_line(path, fragment):
    """The line of the file at `path` where `fragment` first appears (for an expected file:line)."""
    with open(path) as f:
        for number, text in enumerate(f, start=1):
            if fragment in text:
                return number
    raise AssertionError(fragment)
