"""Python-written kernels (@jiasu.kernel): the seed example with every kind of array, scalar arguments,
launch forms (streams, shared-memory bytes, forall) and introspection (inspect_cuda, inspect_ptx,
resources, lazy per-signature compilation, the compile cache across processes)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jiasu

from .conftest import cache_entries
from kernels.kernels_support import (assert_rel, assert_same, assert_untouched, blocks_for, first_signature, host, poisoned,
                              rand_float)

pytestmark = pytest.mark.gpu


# The seed example, verbatim.
@jiasu.kernel
def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


# The same body, undecorated: jiasu.kernel(_plain_add) makes a fresh kernel object whenever a test needs one.
def _plain_add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def _perf_warnings(caught):
    return [w for w in caught if issubclass(w.category, jiasu.PerformanceWarning)]


def _seed_inputs(rng, n=1_000_000):
    return rand_float(rng, n, np.float32, -10, 10), rand_float(rng, n, np.float32, -10, 10)


# ---------------------------------------------------------------- the seed example


def test_seed_add_numpy_arrays_copy_and_warn_once(rng):
    n = 1_000_000
    x, y = _seed_inputs(rng, n)
    x_before, y_before = x.copy(), y.copy()
    out = np.full(n, np.nan, dtype=np.float32)
    threads = 256
    blocks = (n + 255) // 256
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        add[blocks, threads](x, y, out)
        first = list(caught)
        out2 = np.full(n, np.nan, dtype=np.float32)
        add[blocks, threads](x, y, out2)
    perf = _perf_warnings(caught)
    assert len(_perf_warnings(first)) == 1, [str(w.message) for w in caught]
    assert len(perf) == 1, f"expected one PerformanceWarning per kernel, got {[str(w.message) for w in perf]}"
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x + y)
    np.testing.assert_array_equal(out2, x + y)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(y, y_before)


def test_reused_numpy_arrays_stay_correct_when_pinned_in_place(rng):
    """The second launch with the same NumPy arrays page-locks them; results must track every change."""
    import gc
    n = 1 << 20  # 4 MiB per array: large enough to be pinned
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    blocks = (n + 255) // 256
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jiasu.PerformanceWarning)
        for step in range(4):
            x *= np.float32(1.5)  # change the inputs in place between launches
            out.fill(np.nan)
            add[blocks, 256](x, y, out)
            np.testing.assert_array_equal(out, x + y, err_msg=f"launch {step}")
        del x, y, out
        gc.collect()  # the pinned ranges are released with their arrays; new arrays work as before
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        c = np.full(n, np.nan, np.float32)
        for _ in range(2):
            add[blocks, 256](a, b, c)
        np.testing.assert_array_equal(c, a + b)


def test_numpy_warning_is_per_kernel_object(rng):
    n = 4099
    x, y = _seed_inputs(rng, n)
    k1, k2 = jiasu.kernel(_plain_add), jiasu.kernel(_plain_add)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in (k1, k2, k1, k2):
            out = np.full(n, np.nan, dtype=np.float32)
            k[blocks_for(n, 128), 128](x, y, out)
            np.testing.assert_array_equal(out, x + y)
    assert len(_perf_warnings(caught)) == 2


def test_seed_add_jiasu_arrays_no_warning(rng):
    n = 1_000_000
    x, y = _seed_inputs(rng, n)
    dx, dy = jiasu.asarray(x), jiasu.asarray(y)
    out = poisoned(n, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        add[(n + 255) // 256, 256](dx, dy, out)
    assert not _perf_warnings(caught)
    assert_same(out, x + y, "jiasu-array add")
    assert_same(dx, x, "x after the launch")


def test_seed_add_torch_tensors(torch, rng):
    n = 1_000_000
    x, y = _seed_inputs(rng, n)
    tx = torch.from_numpy(x).cuda()
    ty = torch.from_numpy(y).cuda()
    tout = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
    ptr = tout.data_ptr()
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        add[(n + 255) // 256, 256](tx, ty, tout)
    jiasu.synchronize()
    torch.cuda.synchronize()
    assert not _perf_warnings(caught)
    assert tout.data_ptr() == ptr
    assert_same(host(tout), x + y, "torch add (written in place)")


def test_seed_add_cupy_arrays(cupy, rng):
    n = 300_007
    x, y = _seed_inputs(rng, n)
    cx, cy = cupy.asarray(x), cupy.asarray(y)
    cout = cupy.full(n, cupy.nan, dtype=cupy.float32)
    cupy.cuda.runtime.deviceSynchronize()
    add[blocks_for(n, 256), 256](cx, cy, cout)
    jiasu.synchronize()
    assert_same(cout.get(), x + y, "CuPy add (written in place)")


def test_mixed_array_kinds_in_one_launch(torch, rng):
    n = 100_003
    x, y = _seed_inputs(rng, n)
    tx = torch.from_numpy(x).cuda()
    dy = jiasu.asarray(y)
    out = np.full(n, np.nan, dtype=np.float32)
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jiasu.PerformanceWarning)
        jiasu.kernel(_plain_add)[blocks_for(n, 256), 256](tx, dy, out)
    np.testing.assert_array_equal(out, x + y)


def test_numpy_noncontiguous_views_are_staged_and_copied_back(rng):
    n = 50_001
    x_full = rand_float(rng, 3 * n, np.float32, -5, 5)
    y = rand_float(rng, n, np.float32, -5, 5)
    out_full = np.full(2 * n, np.nan, dtype=np.float32)
    k = jiasu.kernel(_plain_add)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jiasu.PerformanceWarning)
        k[blocks_for(n, 128), 128](x_full[2::3], y, out_full[::2])
    np.testing.assert_array_equal(out_full[::2], x_full[2::3] + y)
    assert np.isnan(out_full[1::2]).all(), "elements between the strided output's were overwritten"


# ---------------------------------------------------------------- scalar arguments


@jiasu.kernel
def affine_n(x, out, a, b, n):
    i = jiasu.grid(1)
    if i < n:
        out[i] = x[i] * a + b


@pytest.mark.parametrize("n_kind", [int, np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("a, b", [(0.5, 2), (np.float32(0.5), np.float32(2.0)), (-1.25, 3.5)])
def test_scalar_arguments(rng, n_kind, a, b):
    size = 20_000
    n = 12_345  # fewer than the elements: the rest must stay untouched
    x = rand_float(rng, size, np.float32, -3, 3)
    dx = jiasu.asarray(x)
    out = poisoned(size, np.float32)
    affine_n[blocks_for(size, 256), 256](dx, out, a, b, n_kind(n))
    got = out.get()
    assert_rel(got[:n], x[:n].astype(np.float64) * float(a) + float(b), 1e-6, "x * a + b")
    assert_untouched(got[n:], np.float32, "elements at and beyond n")


@jiasu.kernel
def maybe_negate(x, out, negate):
    i = jiasu.grid(1)
    if i < x.size:
        if negate:
            out[i] = -x[i]
        else:
            out[i] = x[i]


@pytest.mark.parametrize("negate", [True, False, np.bool_(True)])
def test_bool_scalar_argument(rng, negate):
    n = 3000
    x = rand_float(rng, n, np.float64, -2, 2)
    out = poisoned(n, np.float64)
    maybe_negate[blocks_for(n, 128), 128](jiasu.asarray(x), out, negate)
    assert_same(out, -x if negate else x)


# ---------------------------------------------------------------- streams, shared-memory bytes, forall


@jiasu.kernel
def axpy_inplace(a, x, y):
    i = jiasu.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


def test_launches_on_a_stream_run_in_order(rng):
    n = 200_003
    x = rng.integers(-100, 100, n).astype(np.float32)
    y0 = rng.integers(-1000, 1000, n).astype(np.float32)
    dx, dy = jiasu.asarray(x), jiasu.asarray(y0)
    s = jiasu.Stream()
    blocks = blocks_for(n, 256)
    for _ in range(10):
        axpy_inplace[blocks, 256, s](1.0, dx, dy)
    for _ in range(3):
        axpy_inplace[blocks, 256, s, 0](-2.0, dx, dy)  # with the dynamic shared-memory bytes too
    s.synchronize()
    assert_same(dy, y0 + 4 * x, "ten additions of x, then three subtractions of 2x")
    axpy_inplace[blocks, 256, s](3.0, dx, dy)
    s.synchronize()
    assert_same(dy, y0 + 7 * x)


def test_launch_on_a_nonblocking_stream_with_torch(torch, rng):
    n = 65_536
    x, y = _seed_inputs(rng, n)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    tout = torch.full((n,), float("nan"), device="cuda")
    torch.cuda.synchronize()
    s = jiasu.Stream(non_blocking=True)
    add[n // 256, 256, s](tx, ty, tout)
    s.synchronize()
    assert_same(host(tout), x + y)


@jiasu.kernel
def square_and_count(x, out, covered, launched):
    i = jiasu.grid(1)
    jiasu.atomic.add(launched, 0, 1)
    if i < x.size:
        out[i] = x[i] * x[i]
        jiasu.atomic.add(covered, 0, 1)


@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
def test_forall_covers_n_threads(rng, n):
    x = rand_float(rng, n, np.float32, -4, 4)
    out = poisoned(n, np.float32)
    covered = jiasu.zeros(1, np.int64)
    launched = jiasu.zeros(1, np.int64)
    square_and_count.forall(n)(jiasu.asarray(x), out, covered, launched)
    assert_same(out, x * x)
    assert covered.get()[0] == n
    assert launched.get()[0] >= n


# ---------------------------------------------------------------- introspection and compilation


@jiasu.kernel
def sig_probe(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] * 3.0 - 1.0


def test_signatures_compile_lazily_and_once(rng):
    assert sig_probe.inspect_cuda() == {}, "nothing is compiled before the first launch"
    for n in (1000, 5000):  # another size, same signature
        x = rand_float(rng, n, np.float32, -2, 2)
        out = poisoned(n, np.float32)
        sig_probe[blocks_for(n, 128), 128](jiasu.asarray(x), out)
        assert_rel(out, x.astype(np.float64) * 3 - 1, 1e-6)
        if n == 1000:
            first = sig_probe.inspect_cuda()
            assert len(first) == 1
        else:
            assert sig_probe.inspect_cuda() == first, "the same signature was compiled again"
    (key, source), = first.items()
    assert isinstance(key, str) and "float32" in key
    assert "__global__" in source
    x64 = rand_float(rng, 777, np.float64, -2, 2)
    out64 = poisoned(777, np.float64)
    sig_probe[blocks_for(777, 128), 128](jiasu.asarray(x64), out64)
    assert_rel(out64, x64 * 3 - 1, 1e-14)
    both = sig_probe.inspect_cuda()
    assert len(both) == 2 and key in both and both[key] == source
    (key64,) = set(both) - {key}
    assert "float64" in key64


@jiasu.kernel
def scale_shift(x, out, a, b):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] * a + b


def test_signature_changes_between_launches_pick_the_right_kernel(rng):
    """A launch with the last launch's signature skips the signature lookup; every change of dtype, layout,
    scalar kind or argument count must still reach the kernel compiled for it."""
    n = 4099
    x32 = rand_float(rng, 2 * n, np.float32, -2, 2)
    x64 = rand_float(rng, n, np.float64, -2, 2)
    d32, d64 = jiasu.asarray(x32), jiasu.asarray(x64)
    strided = d32[::2]  # the same dtype and ndim, not contiguous
    cases = [  # (x, host x, out dtype, a, b)
        (d32[:n], x32[:n], np.float32, 3, 1),
        (d32[:n], x32[:n], np.float32, 3, 1),          # the same signature again
        (d32[:n], x32[:n], np.float32, 0.5, 1),        # a float where an int was
        (d64, x64, np.float64, 0.5, 1),                 # another dtype
        (strided, x32[::2], np.float32, 0.5, 1),        # the same dtype, strided
        (d32[:n], x32[:n], np.float32, True, -2),       # a bool scalar
        (d32[:n], x32[:n], np.float32, 2, 2 ** 40),     # an int64 value
        (d64, x64, np.float64, -1, 0.25),
        (d32[:n], x32[:n], np.float32, 3, 1),
        (d32[:n], x32[:n], np.float32, np.float32(0.5), 1),  # a NumPy scalar (never a repeat launch)
        (d32[:n], x32[:n], np.float32, np.float32(0.5), 1),
        (d32[:n], x32[:n], np.float32, 3, 1),
    ]
    for x, hx, dtype, a, b in cases * 2:
        out = poisoned(n, dtype)
        scale_shift[blocks_for(n, 128), 128](x, out, a, b)
        tolerance = 1e-6 if dtype == np.float32 else 1e-14
        assert_rel(out, hx.astype(np.float64) * float(a) + float(b), tolerance, f"{dtype.__name__} a={a!r} b={b!r}")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'b'"):  # the full path explains
        scale_shift[blocks_for(n, 128), 128](d32[:n], poisoned(n, np.float32), 3)
    with pytest.raises(jiasu.InvalidArrayError):  # a CPU array where a GPU one was
        scale_shift[blocks_for(n, 128), 128](jiasu.asarray(x32[:n], device="cpu"), poisoned(n, np.float32), 3, 1)
    scale_shift[blocks_for(n, 128), 128](d32[:n], poisoned(n, np.float32), 3, 1)
    with pytest.raises(ValueError, match="too large for int64"):  # an int where an int was, too large
        scale_shift[blocks_for(n, 128), 128](d32[:n], poisoned(n, np.float32), 2 ** 70, 1)
    freed = jiasu.asarray(x32[:n])
    freed.free()
    with pytest.raises(jiasu.InvalidArrayError, match="freed"):  # an array like the last one's, freed
        scale_shift[blocks_for(n, 128), 128](freed, poisoned(n, np.float32), 3, 1)
    out = poisoned(n, np.float32)
    scale_shift[blocks_for(n, 128), 128](d32[:n], out, 3, 1)  # and the next launch is whole again
    assert_rel(out, x32[:n].astype(np.float64) * 3 + 1, 1e-6, "after the errors")


@jiasu.kernel
def commented_probe(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] + 41.5


def test_inspect_cuda_carries_the_python_lines(rng):
    x = rand_float(rng, 64, np.float64)
    out = poisoned(64, np.float64)
    commented_probe[1, 64](jiasu.asarray(x), out)
    assert_same(out, x + 41.5)
    source = first_signature(commented_probe)
    assert "out[i] = x[i] + 41.5" in source
    assert os.path.basename(__file__) in source


def test_inspect_ptx_and_resources(rng):
    n = 4096
    x, y = _seed_inputs(rng, n)
    k = jiasu.kernel(_plain_add)
    out = poisoned(n, np.float32)
    k[n // 256, 256](jiasu.asarray(x), jiasu.asarray(y), out)
    assert_same(out, x + y)
    ptx = first_signature(k, "inspect_ptx")
    assert ".entry" in ptx
    assert set(k.inspect_ptx()) == set(k.inspect_cuda())
    resources = first_signature(k, "resources")
    assert set(k.resources()) == set(k.inspect_cuda())
    assert isinstance(resources, jiasu.KernelResources)
    assert isinstance(resources.registers, int)
    assert resources.registers > 0
    assert resources.device == jiasu.get_device()


def test_launch_without_configuration_is_an_error(rng):
    x = jiasu.asarray(rand_float(rng, 8, np.float32))
    with pytest.raises(ValueError, match=r"launch configuration was not specified: a kernel is launched as add\[blocks"):
        add(x, x, x)


CACHE_SCRIPT = '''
import numpy as np
import jiasu


@jiasu.kernel
def cached_poly(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i] * 3.0 + 7.0


def main():
    n = 1000
    x = np.arange(n, dtype=np.float64) * 0.25 - 100.0
    out = jiasu.full(n, np.nan, dtype=np.float64)
    cached_poly[(n + 127) // 128, 128](jiasu.asarray(x), out)
    got = out.get()
    ref = x * x * 3.0 + 7.0
    assert np.allclose(got, ref, rtol=1e-14, atol=0), (got[:4], ref[:4])
    print("cache_dir=" + jiasu._core.cache_dir())
    print("signatures=%d" % len(cached_poly.inspect_cuda()))
    print("ok")


main()
'''


def test_compiled_kernels_are_cached_across_processes(tmp_path):
    script = tmp_path / "cached_kernel_probe.py"
    script.write_text(CACHE_SCRIPT)
    cache = tmp_path / "jiasu-cache"
    env = dict(os.environ, JIASU_CACHE_DIR=str(cache))

    def run():
        result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                                timeout=300, cwd=str(tmp_path))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "ok" in result.stdout
        assert f"cache_dir={cache}" in result.stdout
        assert "signatures=1" in result.stdout
        return result

    run()
    first = cache_entries(cache)
    assert first, "the first process stored nothing in the compile cache"
    run()
    # The second process compiled the same kernel for the same signature: it must have found it on disk
    # (a recompile would have stored a new file, or rewritten one with a new inode and mtime).
    assert cache_entries(cache) == first
