"""jiasu.matmul, the @ operators and jiasu.dot on the CPU backend, against NumPy: shapes (1-D, 2-D,
broadcast batches, empty), views, dtypes and their promotion, out=, and the errors. Runs on every machine."""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import jiasu

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_TYPES = ["float16", BF16, "float32", "float64", "complex64", "complex128"]
ALL_TYPES = FLOAT_TYPES + ["bool", "int8", "int32", "int64", "uint8", "uint16"]

SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),
    ((6, 2, 3), (3,)),
    ((2, 1, 2, 3), (4, 3, 5)),
    ((4, 3, 5, 2), (3, 2, 6)),
    ((0, 3), (3, 4)),
    ((2, 0), (0, 4)),
    ((2, 3), (3, 0)),
    ((0, 2, 3), (3, 4)),
]


def host(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    values = rng.standard_normal(shape)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def cpu(x):
    return jiasu.asarray(x, device="cpu")


def numpy_product(a, b, op=np.matmul):
    """NumPy's answer, in the dtype jiasu gives: ml_dtypes' bfloat16 matmul returns float32, jiasu bfloat16."""
    expected = op(a, b)
    if a.dtype == BF16 and b.dtype == BF16:
        expected = np.asarray(expected).astype(BF16)
    return np.asarray(expected)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_equals_numpy(shapes, dtype, rng):
    a, b = host(shapes[0], dtype, rng), host(shapes[1], dtype, rng)
    expected = numpy_product(a, b)
    for result in (jiasu.matmul(cpu(a), cpu(b)), cpu(a) @ cpu(b)):
        assert result.device == jiasu.Device("cpu")
        assert result.shape == expected.shape
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result.get(), expected)


def test_vector_inner_product_is_0d(rng):
    a, b = host(5, "float64", rng), host(5, "float64", rng)
    result = cpu(a) @ cpu(b)
    assert result.shape == () and result.ndim == 0
    assert result.get()[()] == pytest.approx(float(a @ b), rel=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_transposed_views(dtype, rng):
    # jiasu CPU arrays over NumPy's memory in place, with the strides of transposed contiguous matrices.
    x, y = host((4, 3), dtype, rng), host((5, 4), dtype, rng)
    a, b = jiasu.from_dlpack(x.T), jiasu.from_dlpack(y.T)
    assert a.strides == x.T.strides and not a.is_c_contiguous
    np.testing.assert_array_equal((a @ b).get(), x.T @ y.T)
    np.testing.assert_array_equal((a @ cpu(x)).get(), x.T @ x.copy())  # not the same buffer: no syrk
    batch = host((2, 4, 3), dtype, rng)
    bt = jiasu.from_dlpack(batch.transpose(0, 2, 1))
    np.testing.assert_array_equal((bt @ cpu(x)).get(), batch.transpose(0, 2, 1) @ x)


@pytest.mark.parametrize("dtype", ["float32", BF16, "int32"], ids=str)
def test_strided_and_reversed_views(dtype, rng):
    x, y = host((4, 6), dtype, rng), host((6, 5), dtype, rng)
    a, b = cpu(x)[:, ::2], cpu(y)[::-2, 1:]
    np.testing.assert_array_equal((a @ b).get(), numpy_product(x[:, ::2], y[::-2, 1:]))


@pytest.mark.parametrize("dtype", FLOAT_TYPES + ["int64"], ids=str)
def test_out(dtype, rng):
    a, b = host((3, 2, 4), dtype, rng), host((4, 5), dtype, rng)
    expected = numpy_product(a, b)
    out = jiasu.empty(expected.shape, expected.dtype, device="cpu")
    assert jiasu.matmul(cpu(a), cpu(b), out=out) is out
    np.testing.assert_array_equal(out.get(), expected)
    # A strided out: only its own elements change.
    big = jiasu.zeros((3, 2, 10), expected.dtype, device="cpu")
    jiasu.matmul(cpu(a), cpu(b), out=big[:, :, ::2])
    np.testing.assert_array_equal(big.get()[:, :, ::2], expected)
    np.testing.assert_array_equal(big.get()[:, :, 1::2], np.zeros((3, 2, 5), expected.dtype))


def test_out_errors(rng):
    a, b = cpu(host((2, 3), "float64", rng)), cpu(host((3, 4), "float64", rng))
    with pytest.raises(ValueError, match=r"matmul: out has shape \(4,2\) but the result has shape \(2,4\)"):
        jiasu.matmul(a, b, out=jiasu.empty((4, 2), device="cpu"))
    with pytest.raises(TypeError, match="out has dtype float32 but the result is float64"):
        jiasu.matmul(a, b, out=jiasu.empty((2, 4), "float32", device="cpu"))
    with pytest.raises(TypeError, match="jiasu.Array"):
        jiasu.matmul(a, b, out=np.empty((2, 4)))


def test_inplace_matmul(rng):
    x, y = host((3, 3), "float64", rng), host((3, 3), "float64", rng)
    a = cpu(x)
    same = a
    a @= cpu(y)
    assert a is same
    np.testing.assert_allclose(a.get(), x @ y, rtol=1e-14)
    with pytest.raises(ValueError, match="out has shape"):  # NumPy refuses a @= b that changes a's shape
        a @= cpu(host((3, 2), "float64", rng))


@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((2, 3, 4), (3, 4, 5)), ((), (3,)), ((3,), ()),
                                    ((3,), (4,)), ((2, 3), (2,))], ids=str)
def test_shape_errors_in_numpys_words(shapes):
    a, b = np.ones(shapes[0]), np.ones(shapes[1])
    with pytest.raises(ValueError) as expected:
        np.matmul(a, b)
    with pytest.raises(ValueError) as got:
        jiasu.matmul(cpu(a), cpu(b))
    assert str(got.value) == str(expected.value)


def test_operand_errors():
    a = cpu(np.ones((2, 2)))
    with pytest.raises(TypeError, match="matmul takes jiasu.Array operands, not list"):
        jiasu.matmul(a, [[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        a @ "text"


@pytest.mark.parametrize("first", ALL_TYPES, ids=str)
@pytest.mark.parametrize("second", ALL_TYPES, ids=str)
def test_result_dtype_is_numpys(first, second, rng):
    a, b = host((2, 3), first, rng), host((3, 2), second, rng)
    try:
        expected = np.result_type(a.dtype, b.dtype)
    except TypeError:  # ml_dtypes before 0.7: bfloat16 has no common dtype with float16, int16, ...
        pytest.skip("this ml_dtypes does not promote bfloat16 with " + str(b.dtype if a.dtype == BF16 else a.dtype) +
                    "; jiasu follows the newer ml_dtypes (array/promotion)")
    result = jiasu.matmul(cpu(a), cpu(b))
    assert result.dtype == expected
    reference = np.matmul(a.astype(expected) if expected != BF16 else a.astype(np.float32),
                          b.astype(expected) if expected != BF16 else b.astype(np.float32))
    np.testing.assert_array_equal(result.get(), reference.astype(expected))


DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 5, 3), (7, 3, 4)),
              ((2, 5, 3), (3,)), ((3,), (7, 3, 4)), ((4, 3), (2, 3, 5)), ((), (2, 3)), ((2, 3), ())]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex64", "int32"])
@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=str)
def test_dot_equals_numpy(shapes, dtype, rng):
    a, b = host(shapes[0], dtype, rng), host(shapes[1], dtype, rng)
    expected = np.asarray(np.dot(a, b))
    for result in (jiasu.dot(cpu(a), cpu(b)), cpu(a).dot(cpu(b))):
        assert result.shape == expected.shape and result.dtype == expected.dtype
        np.testing.assert_array_equal(result.get(), expected)


def test_dot_out_and_errors(rng):
    a, b = host((2, 5, 3), "float64", rng), host((7, 3, 4), "float64", rng)
    big = jiasu.zeros((2, 5, 7, 8), device="cpu")
    jiasu.dot(cpu(a), cpu(b), out=big[..., ::2])  # not C-contiguous: NumPy's dot alone would refuse it
    np.testing.assert_array_equal(big.get()[..., ::2], np.dot(a, b))
    assert not big.get()[..., 1::2].any()
    with pytest.raises(ValueError) as expected:
        np.dot(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError) as got:
        jiasu.dot(cpu(np.ones((2, 3))), cpu(np.ones((4, 5))))
    assert str(got.value) == str(expected.value)


def test_matmul_precision():
    assert jiasu.get_matmul_precision() == "highest"
    try:
        for name, expected in [("high", "high"), ("medium", "high"), ("tf32", "high"), ("highest", "highest")]:
            jiasu.set_matmul_precision(name)
            assert jiasu.get_matmul_precision() == expected
        with pytest.raises(ValueError, match="unknown matmul precision 'low'"):
            jiasu.set_matmul_precision("low")
    finally:
        jiasu.set_matmul_precision("highest")


def test_cublaslt_override_naming_a_missing_file_raises():
    code = ("import jiasu\n"
            "try:\n"
            "    jiasu._core.library_info('cublaslt')\n"
            "except jiasu.LibraryNotFoundError as e:\n"
            "    print('raised:', e)\n")
    env = dict(os.environ, JIASU_CUBLASLT="/nonexistent/libcublasLt.so.13")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "raised: JIASU_CUBLASLT=/nonexistent/libcublasLt.so.13 does not name a loadable cuBLASLt" in result.stdout


def test_doctor_lists_cublaslt():
    from jiasu import _doctor
    entry = _doctor.collect()["cublaslt"]
    assert (entry["path"] and entry["source"]) if entry["found"] else (entry["error"] and "nvidia-cublas" in entry["fix"])
