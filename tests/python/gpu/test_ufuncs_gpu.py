"""The elementwise engine's GPU paths that the parametrised suite (tests/python/test_array_ufuncs.py, which
runs on CUDA too) does not reach with small arrays: the vectorised path with its tail, misaligned views that
take the scalar path, 64-bit strided indexing, and devices that must not mix."""
import numpy as np
import pytest

import jiasu


def test_vectorised_path_with_tails(rng):
    for n in (1, 3, 4, 1023, 4096 * 4 + 3, (1 << 22) + 5):
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        np.testing.assert_array_equal((jiasu.asarray(a) + jiasu.asarray(b)).get(), a + b)
        h = rng.random(n).astype(np.float16)
        np.testing.assert_array_equal((jiasu.asarray(h) < 0.5).get(), h < 0.5)


def test_misaligned_views_take_the_scalar_path(rng):
    a, b = rng.random(10001, dtype=np.float32), rng.random(10001, dtype=np.float32)
    ja, jb = jiasu.asarray(a), jiasu.asarray(b)
    np.testing.assert_array_equal((ja[1:] + jb[:-1]).get(), a[1:] + b[:-1])
    out = jiasu.empty(10001, np.float32)
    jiasu.multiply(ja[3:], 2.0, out=out[:-3])
    np.testing.assert_array_equal(out[:-3].get(), a[3:] * np.float32(2))


def test_wide_index_strided_path():
    n = (1 << 31) + 7  # more elements than 32-bit index math covers
    x = jiasu.zeros(n, np.int8)
    x[-3:] = jiasu.asarray(np.array([1, 2, 3], np.int8))
    y = x[::-1] + 1  # a negative stride: the strided path, with 64-bit offsets
    np.testing.assert_array_equal(y[:4].get(), [4, 3, 2, 1])
    assert int(y[-1:].get()[0]) == 1
    del x, y


def test_broadcast_and_transposed_operands(rng):
    col, row = rng.random((4096, 1), dtype=np.float32), rng.random((1, 512), dtype=np.float32)
    np.testing.assert_array_equal((jiasu.asarray(col) + jiasu.asarray(row)).get(), col + row)
    m = rng.random((64, 48), dtype=np.float32)
    jm = jiasu.asarray(m)
    np.testing.assert_array_equal((jm[::-1, ::2] * jm[:, :24]).get(), m[::-1, ::2] * m[:, :24])


def test_cpu_and_gpu_arrays_do_not_mix():
    gpu = jiasu.asarray(np.ones(4, np.float32))
    with jiasu.backend("cpu"):
        cpu = jiasu.asarray(np.ones(4, np.float32))
    with pytest.raises(jiasu.InvalidArrayError):
        gpu + cpu
    with pytest.raises(jiasu.InvalidArrayError):
        jiasu.add(gpu, gpu, out=jiasu.empty(4, np.float32, device="cpu"))
    with pytest.raises(jiasu.InvalidArrayError):
        gpu[...] = cpu


def test_strided_copy_stays_on_the_device(rng):
    a = rng.random((256, 300))
    j = jiasu.asarray(a)[::-3, 1::2]
    np.testing.assert_array_equal(j.copy().get(), a[::-3, 1::2])
    np.testing.assert_array_equal(j.astype(np.float16).get(), a[::-3, 1::2].astype(np.float16))
