"""The GPU path of matmul and dot on a machine without a GPU: jiasu's own code (the cuBLASLt plan, the
descriptors, the batch loop, copies of strided operands, temporaries for outputs, the algorithm cache, the
compute type) against a stand-in cuBLASLt (fake_cublaslt.cpp: it checks each descriptor as cuBLASLt documents
it and multiplies on the host in double precision) and the stand-in libcuda of tools/launch-overhead, whose
device memory is host memory. The real library runs in tests/python/gpu/test_matmul_gpu.py."""
import os
import subprocess
import sys
import textwrap

import pytest

from support import FAKE_DRIVER, HERE, build_stand_ins


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return build_stand_ins(tmp_path_factory.mktemp("fake_gpu"), {
        "libcuda.so.1": FAKE_DRIVER, "libcublasLt.so.13": os.path.join(HERE, "fake_cublaslt.cpp")})


PRELUDE = """
import ctypes
import ml_dtypes
import numpy as np
import jiasu

BF16 = np.dtype(ml_dtypes.bfloat16)
fake = ctypes.CDLL(jiasu._core.library_info("cublaslt")["path"])
rng = np.random.default_rng(0)

def host(shape, dtype):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)

def gpu(x):
    return jiasu.asarray(x, device=0)

class Interface:
    def __init__(self, base, shape, strides):
        self.base = base
        self.__cuda_array_interface__ = {"shape": tuple(shape), "strides": tuple(strides),
                                         "typestr": base.dtype.str, "data": (base.ptr, False), "version": 3}

def transposed(a):
    shape, strides = list(a.shape), list(a.strides)
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return jiasu.asarray(Interface(a, shape, strides))

def expect(result, wanted, dtype):
    # The stand-in sums in double and rounds once to the dtype: as close as one rounding of the result.
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    got = np.asarray(result.get() if isinstance(result, jiasu.Array) else result).astype(wide)
    rounding = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1.2e-7, "complex64": 1.2e-7}.get(np.dtype(dtype).name, 1e-15)
    assert got.shape == wanted.shape, (got.shape, wanted.shape)
    scale = max(1.0, float(np.abs(wanted).max())) if wanted.size else 1.0  # sums in another order: cancellation
    np.testing.assert_allclose(got, wanted, rtol=rounding, atol=4 * rounding * scale)

def reference(a, b, op=np.matmul):
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return op(a.astype(wide), b.astype(wide))

def error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {error}".splitlines()[0]
    return "no error"
"""


def run(fakes, tmp_path, body):
    script = tmp_path / "probe.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nprint('ALL OK')\n")
    env = dict(os.environ, JIASU_LIBCUDA=fakes[0], JIASU_CUBLASLT=fakes[1], JIASU_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "ALL OK" in result.stdout, result.stdout + result.stderr
    return result.stdout


def test_shapes_and_dtypes(fakes, tmp_path):
    run(fakes, tmp_path, """
        shapes = [((3,), (3,)), ((6, 5), (5,)), ((5,), (5, 4)), ((6, 5), (5, 4)), ((3, 6, 5), (5, 4)),
                  ((5,), (3, 5, 4)), ((3, 6, 5), (5,)), ((2, 1, 6, 5), (3, 5, 4)), ((3, 1, 2, 2), (3, 4, 2, 2)),
                  ((4, 3, 5, 2), (3, 2, 6)), ((0, 5), (5, 4)), ((2, 0, 3), (3, 5))]
        for dtype in ["float16", BF16, "float32", "float64", "complex64", "complex128"]:
            for sa, sb in shapes:
                a, b = host(sa, dtype), host(sb, dtype)
                result = gpu(a) @ gpu(b)
                assert result.dtype == np.dtype(dtype) and result.device == jiasu.Device(0)
                expect(result, reference(a, b), dtype)
    """)


def test_views_outputs_and_dot(fakes, tmp_path):
    run(fakes, tmp_path, """
        for dtype in ["float32", "complex128"]:
            x, y = host((7, 5), dtype), host((6, 7), dtype)
            expect(transposed(gpu(x)) @ transposed(gpu(y)), reference(x.T, y.T), dtype)   # TRANSA and TRANSB
            expect(transposed(gpu(x)) @ gpu(x), reference(x.T, x), dtype)
            stack = host((3, 7, 5), dtype)
            expect(transposed(gpu(stack)) @ gpu(x), reference(np.swapaxes(stack, 1, 2), x), dtype)
            # (Strided operands and outputs, and a @= b, which reads a before writing it, are copied by generated
            # kernels, which the stand-in driver does not run: tests/python/gpu/test_matmul_gpu.py checks them.)
            a, b = host((3, 7, 5), dtype), host((5, 5), dtype)
            out = jiasu.empty((3, 7, 5), dtype, device=0)
            assert jiasu.matmul(gpu(a), gpu(b), out=out) is out
            expect(out, reference(a, b), dtype)
            # dot: N-D operands, and where it agrees with matmul.
            for sa, sb in [((5,), (5,)), ((4, 5), (5, 3)), ((2, 4, 5), (3, 5, 6)), ((4, 5), (2, 5, 3)),
                           ((2, 4, 5), (5,)), ((5,), (2, 5, 3))]:
                a, b = host(sa, dtype), host(sb, dtype)
                expect(jiasu.dot(gpu(a), gpu(b)), reference(a, b, np.dot), dtype)
    """)


def test_algorithm_cache_and_compute_types(fakes, tmp_path):
    run(fakes, tmp_path, """
        a, b = gpu(host((8, 6), "float32")), gpu(host((6, 4), "float32"))
        a @ b
        calls = fake.fake_cublaslt_heuristic_calls()
        for _ in range(3):
            a @ b
        assert fake.fake_cublaslt_heuristic_calls() == calls  # the same problem: no new heuristic query
        gpu(host((8, 6), "float32")) @ gpu(host((6, 5), "float32"))
        assert fake.fake_cublaslt_heuristic_calls() == calls + 1
        assert fake.fake_cublaslt_last_compute() == 68  # CUBLAS_COMPUTE_32F
        jiasu.set_matmul_precision("tf32")
        a @ b
        assert fake.fake_cublaslt_last_compute() == 77  # CUBLAS_COMPUTE_32F_FAST_TF32
        gpu(host((4, 4), "float16")) @ gpu(host((4, 4), "float16"))
        assert fake.fake_cublaslt_last_compute() == 68  # float16 accumulates in float32, TF32 or not
        jiasu.set_matmul_precision("highest")
        a @ b
        assert fake.fake_cublaslt_last_compute() == 68
        gpu(host((4, 4), "complex128")) @ gpu(host((4, 4), "complex128"))
        assert fake.fake_cublaslt_last_compute() == 70  # CUBLAS_COMPUTE_64F
    """)


def test_gpu_errors(fakes, tmp_path):
    out = run(fakes, tmp_path, """
        f = gpu(host((4, 4), "float32"))
        print(error_of(lambda: gpu(np.ones((4, 4), np.int32)) @ gpu(np.ones((4, 4), np.int32))))
        print(error_of(lambda: f @ gpu(np.ones((4, 4)))))
        print(error_of(lambda: f @ jiasu.asarray(np.ones((4, 4), np.float32), device="cpu")))
        print(error_of(lambda: jiasu.dot(gpu(np.float32(2)), f)))
    """)
    lines = out.splitlines()
    assert lines[0].startswith("TypeError: matmul of int32 arrays is not supported on the GPU")
    assert lines[1].startswith("TypeError: matmul of float32 and float64 arrays on the GPU")
    assert lines[2].startswith("InvalidArrayError: matmul: the operands are on different devices (cuda:0 and cpu)")
    assert lines[3].startswith("TypeError: dot with a 0-d operand is not supported on the GPU")
