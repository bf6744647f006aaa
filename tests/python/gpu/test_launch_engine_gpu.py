"""The core's launch engine on a GPU: repeat launches whose arguments change kind in place (each change
must take the full path, and every launch must compute what NumPy does), and NumPy staging with the copy
back after a launch on a stream of its own."""
import warnings

import numpy as np
import pytest

import jiasu

from kernels.kernels_support import blocks_for, rand_float

pytestmark = pytest.mark.gpu


@jiasu.kernel
def scale(x, out, a):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] * a


def test_repeat_launches_follow_each_change_of_argument_kind(rng):
    n = 4097
    host32 = rand_float(rng, 2 * n, np.float32, -4, 4)
    x32 = jiasu.asarray(host32[:n])
    x64 = jiasu.asarray(host32[:n].astype(np.float64))
    strided = jiasu.asarray(host32)[::2]  # n + ... elements: a non-contiguous view
    out = jiasu.empty(n, np.float64)
    grid = blocks_for(n, 128)
    # (x, a) pairs that differ from the one before in dtype, contiguity or the scalar's kind.
    cases = [(x32, 2), (x32, 3), (x64, 3), (x64, 0.5), (strided, 0.5), (strided, np.int32(5)), (x32, np.int32(-2)),
             (x32, True), (x64, np.float32(1.5)), (x32, 7)]
    for x, a in cases * 2:  # the second round finds every signature compiled
        scale[grid, 128](x, out, a)
        expected = x.get()[:n].astype(np.float64) * np.float64(a)
        np.testing.assert_allclose(out.get(), expected, rtol=1e-6, err_msg=f"{x.dtype} {type(a).__name__}")


def test_repeat_launches_convert_scalars_to_a_signature_types(rng):
    from jiasu import cuda

    def shift(x, out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] * a + b

    n = 1000
    host = rand_float(rng, n, np.float32, -4, 4)
    x = jiasu.asarray(host)
    out = jiasu.empty(n, np.float32)
    kernel = cuda.jit("void(float32[:], float32[:], int16, float32)")(shift)
    # Each value is converted to the parameter's type, in the repeat launch too: an int wraps into int16, a float
    # becomes a float32 (then the kernel computes in float32, as Numba's does).
    cases = [(3, 0.1), (70000, 0.25), (-5, np.float64(1.0 / 3)), (np.int64(2**16 + 9), 2), (True, -0.7), (7, 1e-3)]
    for a, b in cases * 2:
        kernel[blocks_for(n, 128), 128](x, out, a, b)
        a16 = np.array(a).astype(np.int64).astype(np.int16)  # wraps
        expected = host * np.float32(a16) + np.float32(b)
        np.testing.assert_allclose(out.get(), expected, rtol=1e-6, atol=1e-6, err_msg=f"{a!r} {b!r}")


def test_staged_numpy_results_come_back_after_a_stream_launch(rng):
    n = 100_003
    x = rand_float(rng, n, np.float32, -3, 3)
    x.setflags(write=False)  # an input only: a read-only NumPy array is fine
    out = np.zeros(n, np.float32)
    out_strided_full = np.full(2 * n, np.nan, np.float32)
    stream = jiasu.Stream(non_blocking=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jiasu.PerformanceWarning)
        scale[blocks_for(n, 256), 256, stream](x, out, 4.0)
        scale[blocks_for(n, 256), 256, stream](x, out_strided_full[::2], -1.0)
    np.testing.assert_array_equal(out, x * np.float32(4))
    np.testing.assert_array_equal(out_strided_full[::2], -x)
    assert np.isnan(out_strided_full[1::2]).all()
