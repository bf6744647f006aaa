"""Kernel resources and the occupancy calculator against the CUDA driver's own answers: its attributes of the loaded
kernel, cuOccupancyMaxActiveBlocksPerMultiprocessor for each block size and cuOccupancyMaxPotentialBlockSize
(called through ctypes, independently of jiasu) for the best one."""
import ctypes

import numpy as np
import pytest

import jiasu

# Kernels of different register and shared memory needs, so that each limit binds somewhere.
SOURCE = r"""
extern "C" __global__ void light(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * i;
}

extern "C" __global__ void with_shared(const float* x, float* out, int n) {
    __shared__ float tile[3072];  // 12 KiB
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[(threadIdx.x + 1) % blockDim.x];
}

// Many values live at once: the compiler keeps them in registers.
extern "C" __global__ void __launch_bounds__(256, 1) heavy(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) v[k] = x[(i + 97 * k) % n];
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < 48; ++k) acc += v[k] * v[(k * 7 + r) % 48];
    if (i < n) out[i] = acc;
}

__constant__ float table[64];
extern "C" __global__ void with_constant(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[i % 64];
}
"""

CU_FUNC_ATTRIBUTE = {"max_threads_per_block": 0, "shared_bytes": 1, "const_bytes": 2, "local_bytes": 3,
                     "registers": 4}


@pytest.fixture(scope="module")
def driver():
    libcuda = ctypes.CDLL("libcuda.so.1")
    libcuda.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
    libcuda.cuOccupancyMaxPotentialBlockSize.argtypes = [
        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_int]
    return libcuda


def driver_attribute(driver, handle, name):
    value = ctypes.c_int()
    assert driver.cuFuncGetAttribute(ctypes.byref(value), CU_FUNC_ATTRIBUTE[name], ctypes.c_void_p(handle)) == 0
    return value.value


def driver_best_block_size(driver, handle, shared_bytes):
    min_grid, block = ctypes.c_int(), ctypes.c_int()
    result = driver.cuOccupancyMaxPotentialBlockSize(ctypes.byref(min_grid), ctypes.byref(block),
                                                     ctypes.c_void_p(handle), None, shared_bytes, 0)
    assert result == 0, result
    return block.value


@pytest.fixture(scope="module")
def module():
    return jiasu.SourceModule(SOURCE)


KERNELS = ["light", "with_shared", "heavy", "with_constant"]
BLOCK_SIZES = [1, 32, 33, 64, 96, 100, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1000, 1024]
SHARED_SIZES = [0, 1, 1024, 8 * 1024, 20 * 1024, 32 * 1024]


@pytest.mark.parametrize("name", KERNELS)
def test_resources_are_the_drivers_attributes(module, driver, name):
    k = module.get_function(name)
    r = k.resources
    assert isinstance(r, jiasu.KernelResources)
    for attribute in CU_FUNC_ATTRIBUTE:
        assert getattr(r, attribute) == driver_attribute(driver, k.handle, attribute), attribute
    assert r.device == jiasu.get_device()
    assert r.registers > 0


def test_known_sizes(module):
    assert module.get_function("with_shared").resources.shared_bytes == 3072 * 4
    assert module.get_function("light").resources.shared_bytes == 0
    assert module.get_function("heavy").resources.registers > module.get_function("light").resources.registers
    assert module.get_function("heavy").resources.max_threads_per_block == 256  # its __launch_bounds__


@pytest.mark.parametrize("name", KERNELS)
def test_occupancy_agrees_with_the_driver(module, name):
    k = module.get_function(name)
    r = k.resources
    props = jiasu.get_device()
    max_warps = props.max_threads_per_multiprocessor // props.warp_size
    for block_size in BLOCK_SIZES:
        if block_size > r.max_threads_per_block:
            continue
        for shared in SHARED_SIZES:
            if r.shared_bytes + shared > 48 * 1024:  # the driver counts more only after the kernel opts in
                continue
            o = r.occupancy(block_size, shared_bytes=shared)
            expected = k.max_active_blocks_per_multiprocessor(block_size, shared)
            assert o.active_blocks == expected, (name, block_size, shared, o, o.limits)
            warps = -(-block_size // props.warp_size)
            assert o.active_warps == expected * warps
            assert o.occupancy == pytest.approx(expected * warps / max_warps)
            assert o.max_warps == max_warps
            assert o.block_size == block_size and o.shared_bytes == shared
            limit = o.limits[o.limiter]
            assert limit is not None and limit == o.active_blocks, (o, o.limits)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("shared", [0, 4096, 24 * 1024])
def test_best_block_size_agrees_with_the_driver(module, driver, name, shared):
    k = module.get_function(name)
    r = k.resources
    if r.shared_bytes + shared > 48 * 1024:
        pytest.skip("beyond the shared memory the driver counts before the kernel opts in")
    assert r.occupancy(64, shared_bytes=shared).best_block_size == driver_best_block_size(driver, k.handle, shared)


def test_device_limits_of_the_calculator():
    d = jiasu.get_device()
    assert d.max_registers_per_multiprocessor >= d.max_registers_per_block > 0
    assert d.max_blocks_per_multiprocessor >= 16
    assert d.reserved_shared_memory_per_block == (1024 if d.compute_capability >= (8, 0) else 0)


def test_limiters(module):
    props = jiasu.get_device()
    light = module.get_function("light").resources
    full = light.occupancy(256)
    if light.registers <= props.max_registers_per_multiprocessor // props.max_threads_per_multiprocessor:
        assert full.occupancy == 1.0 and full.limiter == "warps", full
    small = light.occupancy(32)  # one warp a block: the multiprocessor's block slots run out first
    assert small.limiter == "blocks", small
    assert small.active_blocks == small.limits["blocks"]
    shared = light.occupancy(64, shared_bytes=40 * 1024)
    assert shared.limiter == "shared_memory", shared
    too_big = light.occupancy(props.max_threads_per_block + 1)
    assert (too_big.active_blocks, too_big.limiter) == (0, "block_size")
    assert too_big.occupancy == 0.0
    heavy = module.get_function("heavy").resources
    at_256 = heavy.occupancy(256)
    if heavy.registers > props.max_registers_per_multiprocessor // props.max_threads_per_multiprocessor:
        assert at_256.limiter == "registers", (at_256, at_256.limits)
        assert at_256.occupancy < 1.0
    assert "limited by" in repr(at_256)


def test_occupancy_arguments(module):
    r = module.get_function("light").resources
    assert r.occupancy((16, 16)).block_size == 256  # a block given as dimensions
    with pytest.raises(TypeError):
        r.occupancy(1.5)
    with pytest.raises(TypeError):
        r.occupancy(128, shared_bytes="1")
    with pytest.raises(ValueError):
        r.occupancy(128, shared_bytes=-1)
    with pytest.raises(jiasu.LaunchError):
        r.occupancy(0)


def test_raw_kernel_resources(driver):
    k = jiasu.RawKernel(SOURCE, "with_shared")
    r = k.resources
    assert r.shared_bytes == 3072 * 4
    assert r.registers == driver_attribute(driver, k.handle, "registers")
    assert k.attributes["const_bytes"] == r.const_bytes


@jiasu.kernel
def local_array_kernel(x, out):
    buf = jiasu.local.array(256, jiasu.float32)
    i = jiasu.grid(1)
    n = x.size
    for k in range(256):
        buf[k] = x[(i + k) % n]
    acc = 0.0
    for k in range(256):
        acc += buf[(k * 37 + i) % 256]  # indices known only at run time keep the array in local memory
    if i < out.size:
        out[i] = acc


@jiasu.kernel
def shared_array_kernel(x, out):
    tile = jiasu.shared.array(1024, jiasu.float32)
    i = jiasu.grid(1)
    t = jiasu.threadIdx.x
    tile[t] = 0.0
    if i < x.size:
        tile[t] = x[i]
    jiasu.syncthreads()
    if i < out.size:
        out[i] = tile[(t + 1) % jiasu.blockDim.x]


def test_python_kernel_resources():
    x = jiasu.asarray(np.arange(1000, dtype=np.float32))
    out = jiasu.zeros(1000, dtype=np.float32)
    r = local_array_kernel.resources(x, out)
    assert r.local_bytes >= 256 * 4, r  # the local array, and perhaps spills
    assert r.registers > 0 and r.const_bytes is not None
    signature = local_array_kernel.specialize(x, out)
    assert repr(local_array_kernel.resources()[signature]) == repr(r)
    s = shared_array_kernel.resources(x, out)
    assert s.shared_bytes >= 1024 * 4, s
    with jiasu.backend("cpu"):  # the same signature, as the CPU backend sees it
        cpu = shared_array_kernel.resources(np.zeros(4, dtype=np.float32), np.zeros(4, dtype=np.float32))
        assert cpu.registers is None and cpu.shared_bytes == 1024 * 4


def test_python_kernel_occupancy_agrees_with_the_driver():
    x = jiasu.asarray(np.arange(4096, dtype=np.float32))
    out = jiasu.zeros(4096, dtype=np.float32)
    local_array_kernel[4, 256](x, out)  # compiled and launched: the kernel max_cooperative_grid_blocks asks about
    r = local_array_kernel.resources(x, out)
    multiprocessors = jiasu.get_device().multiprocessor_count
    for block_size in (32, 64, 128, 192, 256, 512, 1024):
        if block_size > r.max_threads_per_block:
            continue
        driver_blocks = local_array_kernel.max_cooperative_grid_blocks(block_size)  # driver's count x multiprocessors
        assert r.occupancy(block_size).active_blocks * multiprocessors == driver_blocks, block_size
