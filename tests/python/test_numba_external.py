"""External device functions written in CUDA C++: Numba's ``cuda.declare_device`` with ``link=`` (on the declaration
or on the kernel), in Numba's ABI and the C ABI, on both backends, checked against NumPy."""
import os

import numpy as np
import pytest

import jiasu
from jiasu import cuda

pytestmark = pytest.mark.usefixtures("each_backend")

LINKED = os.path.join(os.path.dirname(__file__), "numba_linked.cu")

mul = cuda.declare_device("mul_f32", "float32(float32, float32)")  # linked by the kernel
hypot_c = cuda.declare_device("hypot_c", "float64(float64, float64)", abi="c", link=[LINKED])
clamp = cuda.declare_device("clamp_i32", "int32(int32, int32, int32)", link=LINKED)


@cuda.jit(link=[LINKED])
def products(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], y[i])


@cuda.jit
def distances(r, x, y, low, high):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = hypot_c(x[i], y[i]) + clamp(i, low, high)


def test_numba_abi_with_the_kernels_link(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    r = np.zeros(1000, np.float32)
    products.forall(r.size)(r, x, y)
    np.testing.assert_array_equal(r, x * y)  # one float32 rounding, as NumPy's


def test_c_abi_and_the_declarations_link(rng):
    x = rng.standard_normal(300)
    y = rng.standard_normal(300)
    r = np.zeros(300)
    distances[3, 128](r, x, y, 10, 200)
    expected = np.hypot(x, y) + np.clip(np.arange(300), 10, 200)
    np.testing.assert_allclose(r, expected, rtol=1e-15)


def test_bad_declarations_and_calls(tmp_path):
    with pytest.raises(NotImplementedError, match="PTX, cubin"):
        cuda.declare_device("f", "float32(float32)", link=[str(tmp_path / "f.ptx")])
    with pytest.raises(FileNotFoundError, match="no such file"):
        cuda.declare_device("f", "float32(float32)", link=[str(tmp_path / "missing.cu")])
    with pytest.raises(NotImplementedError, match="Unsupported ABI"):
        cuda.declare_device("f", "float32(float32)", abi="fortran")
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", "(float32)")
    with pytest.raises(NotImplementedError, match="numbers only"):
        cuda.declare_device("f", "float32(float32[:])")
    with pytest.raises(ValueError, match="C identifier"):
        cuda.declare_device("not a name", "float32(float32)")
    with pytest.raises(TypeError, match="call it from a kernel"):
        mul(1.0, 2.0)
    with pytest.raises(FileNotFoundError):
        cuda.jit(link=[str(tmp_path / "missing.cu")])


def test_a_missing_definition_is_a_compile_error():
    @cuda.jit
    def unlinked(r, x, y):  # mul's definition is linked by `products` only
        i = cuda.grid(1)
        if i < r.size:
            r[i] = mul(x[i], y[i])

    with pytest.raises(jiasu.CompileError, match="mul_f32.*which no linked file names"):
        unlinked[1, 32](np.zeros(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))
