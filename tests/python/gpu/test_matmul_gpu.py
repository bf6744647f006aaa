"""jiasu.matmul / @ / jiasu.dot on the GPU (cuBLASLt) against NumPy float64 references computed from the same
inputs, with tolerances for each dtype's rounding, and against torch where it is installed: every dtype,
1-D/2-D/batched shapes, transposed views (read without copies), strided views, out=, TF32 on and off, the
algorithm cache, and the errors."""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import jiasu

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["float16", BF16, "float32", "float64", "complex64", "complex128"]
# Relative error of one product term, for the tolerances below: the inputs are exact in their dtype, the
# result is rounded to it (float16, bfloat16) and accumulated in float32 or float64.
EPS = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 2e-6, "float64": 1e-14, "complex64": 2e-6,
       "complex128": 1e-14}
TF32_EPS = 1e-3


def host(shape, dtype, rng):
    dtype = np.dtype(dtype)
    values = rng.standard_normal(shape)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def reference(a, b, op=np.matmul):
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return op(a.astype(wide), b.astype(wide))


def assert_close(result, expected, k, eps):
    """|result - expected| within eps relative to the entries' size (sqrt(k) for unit normal inputs)."""
    got = np.asarray(result.get() if isinstance(result, jiasu.Array) else result).astype(expected.dtype)
    scale = max(np.sqrt(max(k, 1)), 1.0)
    np.testing.assert_allclose(got, expected, rtol=4 * eps, atol=4 * eps * scale)


def gpu(x):
    return jiasu.asarray(x, device=0)


class _Interface:
    """A zero-copy strided view of a jiasu GPU array, through the CUDA Array Interface."""

    def __init__(self, base, shape, strides):
        self.base = base
        self.__cuda_array_interface__ = {"shape": tuple(shape), "strides": tuple(strides),
                                         "typestr": base.dtype.str, "data": (base.ptr, False), "version": 3}


def transposed(a):
    """a.T (the last two axes swapped) as a view, without a copy."""
    if a.ndim == 2 and hasattr(a, "T"):
        return a.T
    if a.dtype == BF16:
        pytest.skip("no strided bfloat16 view without Array.T (the CUDA Array Interface has no bfloat16)")
    shape, strides = list(a.shape), list(a.strides)
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    view = jiasu.asarray(_Interface(a, shape, strides))
    assert view.ptr == a.ptr and not view.is_c_contiguous
    return view


SHAPES = [((3,), (3,)), ((64, 96), (96,)), ((96,), (96, 80)), ((128, 256), (256, 192)), ((5, 33, 47), (47, 29)),
          ((47,), (4, 47, 29)), ((2, 1, 16, 24), (3, 24, 8)), ((3, 4, 8, 16), (3, 4, 16, 8)), ((0, 8), (8, 4)),
          ((4, 0), (0, 8)), ((2, 0, 3), (3, 5))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_against_float64(shapes, dtype, rng):
    a, b = host(shapes[0], dtype, rng), host(shapes[1], dtype, rng)
    result = gpu(a) @ gpu(b)
    assert result.device == jiasu.Device(0)
    assert result.dtype == np.dtype(dtype)
    expected = reference(a, b)
    assert result.shape == expected.shape
    assert_close(result, expected, shapes[0][-1], EPS[np.dtype(dtype).name])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("which", ["a", "b", "both"])
def test_transposed_views(which, dtype, rng):
    x, y = host((96, 64), dtype, rng), host((80, 96), dtype, rng)  # a = x.T (64 x 96), b = y.T (96 x 80)
    a = transposed(gpu(x)) if which in ("a", "both") else gpu(np.ascontiguousarray(x.T))
    b = transposed(gpu(y)) if which in ("b", "both") else gpu(np.ascontiguousarray(y.T))
    assert_close(a @ b, reference(x.T, y.T), 96, EPS[np.dtype(dtype).name])


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64"])
def test_batched_transposed_and_broadcast(dtype, rng):
    x, y = host((4, 1, 24, 16), dtype, rng), host((3, 24, 32), dtype, rng)
    a = transposed(gpu(x))  # (4, 1, 16, 24) read transposed
    assert_close(a @ gpu(y), reference(np.swapaxes(x, -1, -2), y), 24, EPS[dtype])


@pytest.mark.parametrize("dtype", ["float32", BF16], ids=str)
def test_strided_operands_are_copied(dtype, rng):
    x, y = host((64, 96), dtype, rng), host((48, 40), dtype, rng)
    a, b = gpu(x)[:, ::2], gpu(y)[::-1, 3:]  # neither row- nor column-major: copied first
    assert_close(a @ b, reference(x[:, ::2], y[::-1, 3:]), 48, EPS[np.dtype(dtype).name])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_out(dtype, rng):
    a, b = host((3, 32, 16), dtype, rng), host((16, 24), dtype, rng)
    expected = reference(a, b)
    out = jiasu.empty((3, 32, 24), dtype, device=0)
    assert jiasu.matmul(gpu(a), gpu(b), out=out) is out
    assert_close(out, expected, 16, EPS[np.dtype(dtype).name])
    big = jiasu.zeros((3, 32, 48), dtype, device=0)
    jiasu.matmul(gpu(a), gpu(b), out=big[:, :, 1::2])  # a strided out
    assert_close(big.get()[:, :, 1::2], expected, 16, EPS[np.dtype(dtype).name])
    assert not np.count_nonzero(np.ascontiguousarray(big.get()[:, :, ::2]).view(np.uint8))  # the other columns stay zero


def test_inplace_matmul_reads_before_writing(rng):
    x, y = host((64, 64), "float64", rng), host((64, 64), "float64", rng)
    a = gpu(x)
    a @= gpu(y)  # out is an operand: through a temporary
    assert_close(a, x @ y, 64, EPS["float64"])


@pytest.mark.parametrize("dtype", ["float16", BF16, "float32"], ids=str)
def test_same_shape_twice_is_bit_equal(dtype, rng):
    # The second product takes the cached algorithm (test_matmul_fake_gpu.py counts the heuristic queries);
    # the same algorithm on the same inputs gives the same bits.
    a, b = gpu(host((256, 128), dtype, rng)), gpu(host((128, 192), dtype, rng))
    first, second = (a @ b).get(), (a @ b).get()
    np.testing.assert_array_equal(first.view(np.uint8), second.view(np.uint8))


def test_tf32_only_when_asked(rng):
    x, y = host((1024, 1024), "float32", rng), host((1024, 1024), "float32", rng)
    expected = reference(x, y)
    a, b = gpu(x), gpu(y)
    try:
        jiasu.set_matmul_precision("highest")
        exact = np.abs((a @ b).get() - expected).max()
        jiasu.set_matmul_precision("tf32")
        fast = np.abs((a @ b).get() - expected).max()
    finally:
        jiasu.set_matmul_precision("highest")
    scale = np.sqrt(1024)
    assert exact <= 4 * EPS["float32"] * scale * 10
    assert fast <= 4 * TF32_EPS * scale * 10
    assert fast > 10 * exact, (fast, exact)  # TF32 keeps 10 mantissa bits: its error is far larger


DOT_SHAPES = [((96,), (96,)), ((32, 48), (48,)), ((48,), (48, 40)), ((32, 48), (48, 40)), ((2, 5, 48), (7, 48, 4)),
              ((3, 48), (2, 48, 5)), ((48,), (3, 48, 5))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=str)
def test_dot_against_float64(shapes, dtype, rng):
    a, b = host(shapes[0], dtype, rng), host(shapes[1], dtype, rng)
    result = jiasu.dot(gpu(a), gpu(b))
    expected = reference(a, b, np.dot)
    assert result.shape == expected.shape
    assert_close(result, expected, shapes[0][-1], EPS[dtype])
    assert_close(gpu(a).dot(gpu(b)), expected, shapes[0][-1], EPS[dtype])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_against_torch(dtype, torch, rng):
    a, b = host((4, 96, 160), "float32", rng), host((160, 128), "float32", rng)
    ta = torch.tensor(a, device="cuda").to(getattr(torch, dtype))
    tb = torch.tensor(b, device="cuda").to(getattr(torch, dtype))
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        expected = (ta @ tb).float().cpu().numpy()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    result = jiasu.asarray(ta) @ jiasu.asarray(tb)
    got = torch.from_dlpack(result).float().cpu().numpy()
    eps = EPS[dtype] if dtype != "float32" else EPS["float32"]
    np.testing.assert_allclose(got, expected, rtol=4 * eps, atol=4 * eps * np.sqrt(160))


def test_errors(rng):
    a = gpu(host((4, 4), "float32", rng))
    with pytest.raises(jiasu.InvalidArrayError, match="different devices"):
        a @ jiasu.asarray(np.ones((4, 4), np.float32), device="cpu")
    with pytest.raises(TypeError, match="matmul of int32 arrays is not supported on the GPU"):
        gpu(np.ones((4, 4), np.int32)) @ gpu(np.ones((4, 4), np.int32))
    with pytest.raises(TypeError, match="float32 and float64"):
        a @ gpu(np.ones((4, 4)))
    with pytest.raises(ValueError, match="Input operand 1 has a mismatch in its core dimension 0"):
        a @ gpu(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match="0-d"):
        jiasu.dot(gpu(np.float32(2)), a)


def test_missing_cublaslt_raises_library_not_found():
    code = ("import jiasu, numpy as np\n"
            "a = jiasu.asarray(np.ones((4, 4), np.float32), device=0)\n"
            "try:\n"
            "    a @ a\n"
            "except jiasu.LibraryNotFoundError as e:\n"
            "    print('raised:', e)\n")
    env = dict(os.environ, JIASU_CUBLASLT="/nonexistent/libcublasLt.so.13")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "raised: JIASU_CUBLASLT=/nonexistent/libcublasLt.so.13" in result.stdout, result.stdout


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_dot_into_a_strided_out(dtype, rng):
    a = rng.standard_normal((2, 4, 5)).astype(dtype)
    b = rng.standard_normal((3, 5, 6)).astype(dtype)
    big = gpu(np.zeros((2, 4, 3, 12), dtype))
    jiasu.dot(gpu(a), gpu(b), out=big[..., ::2])
    assert_close(big.get()[..., ::2], reference(a, b, np.dot), 16, EPS[np.dtype(dtype).name])
    assert not np.count_nonzero(np.ascontiguousarray(big.get()[..., 1::2]).view(np.uint8))
