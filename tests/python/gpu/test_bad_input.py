"""Misuse gives a clear Python exception, never a crash, and leaves the CUDA context usable."""
import re

import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu

SCALE_SOURCE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a;
}
extern "C" __global__ void shift(float* x, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + b;
}
"""

# The error is on line 3 (the source starts right after the opening quotes).
BROKEN_SOURCE = ('extern "C" __global__ void broken(float* x) {\n'
                 "    x[0] = 1.0f;\n"
                 "    undefined_thing(x);\n"
                 "}\n")

OVERLOADED_SOURCE = r"""
__global__ void twice(int* x) { x[0] = 1; }
__global__ void twice(float* x) { x[0] = 1.0f; }
"""


@pytest.fixture
def x16():
    return jiasu.zeros(16, dtype=np.float32)


# ---------------------------------------------------------------- arguments


def test_too_few_arguments(add_kernel, x16, healthy):
    with pytest.raises(TypeError, match="takes 4 arguments but 3 were given"):
        add_kernel(1, 16, (x16, x16, x16))
    with pytest.raises(TypeError, match="takes 4 arguments but 0 were given"):
        add_kernel(1, 16, ())
    healthy()


def test_too_many_arguments(add_kernel, x16, healthy):
    with pytest.raises(TypeError, match="takes 4 arguments"):
        add_kernel(1, 16, (x16, x16, x16, 16, 5))
    healthy()


@pytest.mark.parametrize("kind", ["str", "list", "numpy array"])
def test_host_or_foreign_object_as_array_argument(add_kernel, x16, healthy, kind):
    value = {"str": "hello", "list": [1.0] * 16, "numpy array": np.zeros(16, np.float32)}[kind]
    with pytest.raises(TypeError, match=r"jiasu\.asarray"):
        add_kernel(1, 16, (value, x16, x16, 16))
    healthy()


def test_other_wrong_argument_kinds(add_kernel, x16, healthy):
    with pytest.raises(TypeError):
        add_kernel(1, 16, (None, x16, x16, 16))
    with pytest.raises(TypeError):
        add_kernel(1, 16, (object(), x16, x16, 16))
    with pytest.raises(TypeError, match="tuple"):
        add_kernel(1, 16, x16)  # args must be a tuple
    healthy()


def test_numpy_scalar_of_the_wrong_size(healthy):
    scale = jiasu.RawKernel(SCALE_SOURCE, "scale")
    x = jiasu.zeros(16, dtype=np.float32)
    with pytest.raises(TypeError, match="bytes"):
        scale(1, 16, (x, np.float64(2.0), 16))  # float parameter, 8-byte value
    with pytest.raises(TypeError, match="bytes"):
        scale(1, 16, (x, np.float32(2.0), np.int64(16)))  # int parameter, 8-byte value
    with pytest.raises(TypeError, match="bytes"):
        scale(1, 16, (x, np.float32(2.0), np.int16(16)))  # int parameter, 2-byte value
    healthy()


def test_python_int_that_does_not_fit(add_kernel, x16, healthy):
    with pytest.raises(ValueError):
        add_kernel(1, 16, (x16, x16, x16, 2**40))  # int parameter
    with pytest.raises(ValueError):
        add_kernel(1, 16, (x16, x16, x16, 2**70))
    healthy()


def test_freed_array_as_argument(add_kernel, healthy):
    x = jiasu.zeros(16, dtype=np.float32)
    y = jiasu.zeros(16, dtype=np.float32)
    view = x[4:]
    x.free()
    with pytest.raises(jiasu.InvalidArrayError) as info:
        add_kernel(1, 16, (x, y, y, 16))
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE"
    with pytest.raises(jiasu.InvalidArrayError):
        add_kernel(1, 16, (y, view, y, 12))
    with pytest.raises(jiasu.InvalidArrayError):
        add_kernel(1, 16, (y, y, x[:0], 0))  # an empty view of freed memory
    healthy()


def test_freed_empty_array_as_argument(add_kernel, healthy):
    # bindings/launch.cpp means to reject a freed array even when it is empty.
    e = jiasu.empty(0, dtype=np.float32)
    e.free()
    y = jiasu.zeros(16, dtype=np.float32)
    with pytest.raises(jiasu.InvalidArrayError):
        add_kernel(1, 16, (e, y, y, 0))
    healthy()


def test_torch_cpu_tensor_as_argument(torch, add_kernel, x16, healthy):
    t = torch.zeros(16, dtype=torch.float32)
    with pytest.raises(TypeError, match="CPU"):
        add_kernel(1, 16, (t, x16, x16, 16))
    healthy()


# ---------------------------------------------------------------- names and compilation


def test_unknown_kernel_name(add_kernel, healthy):
    k = jiasu.RawKernel(add_kernel.code, "no_such_kernel")
    x = jiasu.zeros(4, dtype=np.float32)
    with pytest.raises(jiasu.CudaError) as info:
        k(1, 4, (x, x, x, 4))
    error = info.value
    assert error.name == "CUDA_ERROR_NOT_FOUND"
    assert error.code == 500
    assert not isinstance(error, jiasu.LaunchError)
    assert "no_such_kernel" in str(error) and "add" in str(error)
    mod = jiasu.SourceModule(SCALE_SOURCE)
    with pytest.raises(jiasu.CudaError) as info:
        mod.get_function("no_such_kernel")
    assert info.value.name == "CUDA_ERROR_NOT_FOUND"
    assert "scale" in str(info.value) and "shift" in str(info.value)
    # The module still works.
    mod.get_function("scale")(1, 4, (x, 2.0, 4))
    healthy()


def test_ambiguous_plain_name(healthy):
    mod = jiasu.SourceModule(OVERLOADED_SOURCE)
    with pytest.raises(jiasu.CudaError) as info:
        mod.get_function("twice")
    assert info.value.name == "CUDA_ERROR_NOT_FOUND"
    assert "_Z5twice" in str(info.value)
    healthy()


def test_nvrtc_error_in_raw_kernel_at_first_call(healthy):
    k = jiasu.RawKernel(BROKEN_SOURCE, "broken")  # nothing is compiled yet
    x = jiasu.zeros(4, dtype=np.float32)
    for _ in range(2):  # and it fails the same way when called again
        with pytest.raises(jiasu.NvrtcError) as info:
            k(1, 1, (x,))
        error = info.value
        assert isinstance(error, jiasu.JiasuError) and not isinstance(error, jiasu.CudaError)
        assert re.search(r"\(3\): error", error.log), error.log
        assert "undefined_thing" in error.log
        assert "undefined_thing" in str(error)
    with pytest.raises(jiasu.NvrtcError):
        k.compile()
    healthy()


def test_nvrtc_error_in_source_module_at_construction(healthy):
    with pytest.raises(jiasu.NvrtcError) as info:
        jiasu.SourceModule(BROKEN_SOURCE)
    assert re.search(r"\(3\): error", info.value.log), info.value.log
    with pytest.raises(jiasu.NvrtcError) as info:
        jiasu.SourceModule("\n\n\n\n" + BROKEN_SOURCE, name="shifted.cu")
    assert re.search(r"shifted\.cu\(7\): error", info.value.log), info.value.log
    healthy()


def test_bad_compile_options(healthy):
    with pytest.raises(jiasu.NvrtcError):
        jiasu.SourceModule(SCALE_SOURCE, options=["--no-such-option"])
    with pytest.raises(ValueError):
        jiasu.SourceModule(SCALE_SOURCE, options=["-arch=sm_80"])
    healthy()


# ---------------------------------------------------------------- launch configuration


def test_too_many_threads_per_block(add_kernel, x16, healthy):
    with pytest.raises(jiasu.LaunchError) as info:
        add_kernel(1, 2048, (x16, x16, x16, 16))
    assert "1024" in str(info.value)
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE"
    assert isinstance(info.value, jiasu.CudaError)
    with pytest.raises(jiasu.LaunchError) as info:
        add_kernel(1, (1024, 2, 1), (x16, x16, x16, 16))
    assert "2048" in str(info.value)
    with pytest.raises(jiasu.LaunchError):
        add_kernel(1, (1, 1, 128), (x16, x16, x16, 16))  # z is limited to 64
    healthy()


@pytest.mark.parametrize("grid, block", [(0, 16), ((1, 0), 16), ((1, 1, 0), 16), (1, 0), (1, (16, 0)),
                                         (-5, 16), (2**40, 16), ((1, 65536), 16), ((2**31,), 16)])
def test_bad_grid_or_block_values(add_kernel, x16, healthy, grid, block):
    with pytest.raises(jiasu.LaunchError):
        add_kernel(grid, block, (x16, x16, x16, 16))
    healthy()


@pytest.mark.parametrize("grid, block", [(1.5, 16), (1, "16"), ((1, 1, 1, 1), 16), (1, ()), (None, 16)])
def test_bad_grid_or_block_kinds(add_kernel, x16, healthy, grid, block):
    with pytest.raises(TypeError):
        add_kernel(grid, block, (x16, x16, x16, 16))
    healthy()


def test_too_much_shared_memory(add_kernel, x16, healthy):
    limit = jiasu.Device().max_shared_memory_per_block_optin
    with pytest.raises(jiasu.LaunchError) as info:
        add_kernel(1, 16, (x16, x16, x16, 16), shared_mem=1 << 20)
    assert str(limit - add_kernel.attributes["static_shared_bytes"]) in str(info.value)
    with pytest.raises(jiasu.LaunchError):
        add_kernel(1, 16, (x16, x16, x16, 16), shared_mem=limit + 1)
    # Exactly the limit is fine.
    add_kernel(1, 16, (x16, x16, x16, 16), shared_mem=limit)
    jiasu.synchronize()
    healthy()


def test_out_of_range_launch_values_are_reported_as_given(add_kernel, x16, healthy):
    with pytest.raises(jiasu.LaunchError, match="grid dimensions .* not 18446744073709551616$"):
        add_kernel(2**64, 16, (x16, x16, x16, 16))
    with pytest.raises(jiasu.LaunchError, match=f"block dimensions .* not -{2**70}$"):
        add_kernel(1, -2**70, (x16, x16, x16, 16))
    with pytest.raises(ValueError, match=f"shared_mem={2**70} bytes is more shared memory than any GPU has"):
        add_kernel(1, 16, (x16, x16, x16, 16), shared_mem=2**70)
    with pytest.raises(ValueError, match="shared_bytes must be >= 0, not -1$"):
        _copy[1, 16, None, -1]
    with pytest.raises(jiasu.LaunchError, match="more dynamic shared memory"):  # fits 64 bits, not the GPU
        _copy[1, 16, None, 1 << 40](x16, jiasu.zeros(16, dtype=np.float32))
    with pytest.raises(ValueError, match="shared_mem must be >= 0"):
        jiasu.SourceModule(SCALE_SOURCE).get_function("scale").max_active_blocks_per_multiprocessor(128, -1)
    healthy()


def test_bad_stream_argument(add_kernel, x16, healthy):
    with pytest.raises(TypeError):
        add_kernel(1, 16, (x16, x16, x16, 16), stream="default")
    with pytest.raises(TypeError):
        x16.get(stream=1.5)
    with pytest.raises(ValueError, match="stream -1 is not a CUstream address"):
        add_kernel(1, 16, (x16, x16, x16, 16), stream=-1)
    healthy()


# ---------------------------------------------------------------- memory, dtypes, shapes


def test_out_of_device_memory(healthy):
    with pytest.raises(jiasu.CudaOutOfMemoryError) as info:
        jiasu.empty(1 << 50, dtype=np.uint8)
    error = info.value
    assert isinstance(error, MemoryError) and isinstance(error, jiasu.CudaError)
    assert error.name == "CUDA_ERROR_OUT_OF_MEMORY"
    assert error.code == 2
    with pytest.raises(MemoryError):
        jiasu.zeros((1 << 25, 1 << 25), dtype=np.float64)
    healthy()


def test_bad_shapes_and_dtypes(healthy):
    with pytest.raises(ValueError):
        jiasu.empty((3, -1))
    with pytest.raises(ValueError):
        jiasu.empty((1 << 40, 1 << 40))  # element count overflows int64
    with pytest.raises(TypeError):
        jiasu.empty(3, dtype=object)
    with pytest.raises(TypeError):
        jiasu.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        jiasu.empty((2, "3"))
    healthy()


# ---------------------------------------------------------------- devices


def test_device_that_does_not_exist(healthy):
    for ordinal in (99, -1):
        with pytest.raises(jiasu.CudaError) as info:
            jiasu.Device(ordinal)
        assert info.value.name == "CUDA_ERROR_INVALID_DEVICE"
        assert info.value.code == 101
    with pytest.raises(jiasu.CudaError) as info:
        jiasu.empty(4, device=99)
    assert info.value.name == "CUDA_ERROR_INVALID_DEVICE"
    healthy()


def test_set_device_that_does_not_exist(healthy):
    count = len(jiasu.devices())
    with pytest.raises(jiasu.CudaError) as info:
        jiasu.set_device(count)  # device 1 on a one-GPU machine
    assert info.value.name == "CUDA_ERROR_INVALID_DEVICE"
    assert jiasu.get_device() == jiasu.Device(0)
    healthy()


def test_array_on_another_device(add_kernel, healthy):
    if len(jiasu.devices()) < 2:
        pytest.skip("needs two GPUs")
    other = jiasu.zeros(16, dtype=np.float32, device=1)
    here = jiasu.zeros(16, dtype=np.float32)
    assert other.device == jiasu.Device(1)
    with pytest.raises(jiasu.InvalidArrayError) as info:
        add_kernel(1, 16, (other, here, here, 16))
    assert info.value.name == "CUDA_ERROR_INVALID_DEVICE"
    healthy()


@jiasu.kernel
def _copy(src, dst):
    i = jiasu.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def test_python_kernel_array_on_another_device(healthy):
    if len(jiasu.devices()) < 2:
        pytest.skip("needs two GPUs")
    other = jiasu.asarray(np.arange(16, dtype=np.float32), device=1)
    here = jiasu.zeros(16, dtype=np.float32)
    with pytest.raises(jiasu.InvalidArrayError) as info:
        _copy[1, 16](other, here)
    assert info.value.name == "CUDA_ERROR_INVALID_DEVICE"
    assert "device 1" in str(info.value)
    # On its own device the same kernel runs (the current device follows set_device).
    jiasu.set_device(1)
    try:
        out = jiasu.zeros(16, dtype=np.float32, device=1)
        _copy[1, 16](other, out)
        np.testing.assert_array_equal(out.get(), np.arange(16, dtype=np.float32))
    finally:
        jiasu.set_device(0)
    healthy()
