"""RawKernel and SourceModule: compiling, launching, argument passing, shared memory, streams, caching."""
import math
import os
import subprocess
import sys
import uuid

import ml_dtypes
import numpy as np
import pytest

import jiasu

from .conftest import cache_entries

pytestmark = pytest.mark.gpu

TRANSPOSE_SOURCE = r"""
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
"""

SCALARS_SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void scalars(double d, float f, long long i64, unsigned char u8, bool b, __half h,
                                   int i32, double* out) {
    out[0] = d;
    out[1] = (double)f;
    out[2] = (double)i64;
    out[3] = (double)u8;
    out[4] = b ? 1.0 : 0.0;
    out[5] = (double)__half2float(h);
    out[6] = (double)i32;
}
"""

BF16_SCALAR_SOURCE = r"""
#include <cuda_bf16.h>
extern "C" __global__ void bf16_scalar(__nv_bfloat16 v, float* out) { out[0] = __bfloat162float(v); }
"""

BLOCK_SUM_SOURCE = r"""
extern "C" __global__ void block_sum(const float* x, float* partial, int n) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}
"""

BIG_SHARED_SOURCE = r"""
extern "C" __global__ void big_shared(int* out, int size) {
    extern __shared__ unsigned char buf[];
    for (int j = threadIdx.x; j < size; j += blockDim.x) buf[j] = (unsigned char)((j * 7 + 3) & 0xff);
    __syncthreads();
    for (int j = threadIdx.x; j < size; j += blockDim.x) out[j] = (int)buf[size - 1 - j] + 1000;
}
"""

TWO_KERNELS_SOURCE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a;
}
extern "C" __global__ void shift(float* x, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + b;
}
"""

PLAIN_NAME_SOURCE = r"""
__global__ void plain_kernel(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * i + 1;
}
"""

STRIDED_SOURCE = r"""
extern "C" __global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void double_every(float* x, int stride, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[(long long)i * stride] *= 2.0f;
}
extern "C" __global__ void set_first(float* x, float value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = value;
}
"""

STATIC_SHARED_SOURCE = r"""
extern "C" __global__ void reverse_block(const float* in, float* out) {
    __shared__ float tile[256];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    out[blockIdx.x * 256 + t] = tile[255 - t];
}
"""


def blocks(n, threads):
    return (n + threads - 1) // threads


# ---------------------------------------------------------------- the seed article's vector add


@pytest.mark.parametrize("n_kind", ["int", "np.int32"])
def test_vector_add_million(rng, add_kernel, n_kind):
    n = 1_000_000
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    dx, dy = jiasu.asarray(x), jiasu.asarray(y)
    out = jiasu.full(n, np.nan, dtype=np.float32)
    count = n if n_kind == "int" else np.int32(n)
    add_kernel((blocks(n, 256),), (256,), (dx, dy, out, count))
    np.testing.assert_array_equal(out.get(), x + y)


@pytest.mark.parametrize("grid_block", [
    ("ints", lambda n: (blocks(n, 128), 128)),
    ("1-tuples", lambda n: ((blocks(n, 128),), (128,))),
    ("3-tuples", lambda n: ((blocks(n, 64), 1, 1), (64, 1, 1))),
    ("2-tuples", lambda n: ((blocks(n, 32), 1), (32, 1))),
    ("lists", lambda n: ([blocks(n, 256)], [256])),
    ("numpy ints", lambda n: (np.int64(blocks(n, 512)), np.int32(512))),
], ids=lambda gb: gb[0])
def test_grid_and_block_forms(rng, add_kernel, grid_block):
    n = 10_007
    grid, block = grid_block[1](n)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = jiasu.full(n, np.nan, dtype=np.float32)
    add_kernel(grid, block, (jiasu.asarray(x), jiasu.asarray(y), out, n))
    np.testing.assert_array_equal(out.get(), x + y)


def test_args_as_list_and_kernel_properties(rng, add_kernel):
    n = 333
    x = rng.random(n, dtype=np.float32)
    out = jiasu.full(n, np.nan, dtype=np.float32)
    dx = jiasu.asarray(x)
    add_kernel(blocks(n, 128), 128, [dx, dx, out, n])
    np.testing.assert_array_equal(out.get(), x + x)
    assert add_kernel.name == "add"
    assert "__global__ void add" in add_kernel.code


def test_2d_grid_transpose(rng):
    rows, cols = 300, 500
    host = rng.standard_normal((rows, cols)).astype(np.float32)
    a = jiasu.asarray(host)
    out = jiasu.full((cols, rows), np.nan, dtype=np.float32)
    k = jiasu.RawKernel(TRANSPOSE_SOURCE, "transpose")
    k((blocks(cols, 16), blocks(rows, 16)), (16, 16), (a, out, rows, cols))
    np.testing.assert_array_equal(out.get(), host.T)
    # Again with a 3-D grid/block spelling.
    out2 = jiasu.full((cols, rows), np.nan, dtype=np.float32)
    k((blocks(cols, 32), blocks(rows, 8), 1), (32, 8, 1), (a, out2, rows, cols))
    np.testing.assert_array_equal(out2.get(), host.T)


# ---------------------------------------------------------------- scalar parameters

I64 = -(3 << 40) + 5
EXPECTED_SCALARS = [1.25, float(np.float32(0.1)), float(I64), 200.0, 1.0, 0.375, -123456.0]


def run_scalars(args):
    out = jiasu.full(7, np.nan, dtype=np.float64)
    jiasu.RawKernel(SCALARS_SOURCE, "scalars")(1, 1, (*args, out))
    return out.get()


def test_scalar_params_as_numpy_scalars():
    got = run_scalars((np.float64(1.25), np.float32(0.1), np.int64(I64), np.uint8(200), np.bool_(True),
                       np.float16(0.375), np.int32(-123456)))
    np.testing.assert_array_equal(got, EXPECTED_SCALARS)


def test_scalar_params_as_python_numbers():
    # Python float into double: double; into float: float32 (0.1 is not exact, so the rounding shows);
    # Python int into long long: 64 bits; into unsigned char: 1 byte; into int: int32; bool into bool.
    got = run_scalars((1.25, 0.1, I64, 200, True, np.float16(0.375), -123456))
    np.testing.assert_array_equal(got, EXPECTED_SCALARS)
    got = run_scalars((-0.5, 3.0, 7, 0, False, np.float16(-2.0), 2**31 - 1))
    np.testing.assert_array_equal(got, [-0.5, 3.0, 7.0, 0.0, 0.0, -2.0, 2**31 - 1])


def test_python_float_into_half_param_is_refused():
    # A 2-byte parameter may be __half, __nv_bfloat16 or short: a Python float cannot be sized to it.
    with pytest.raises(TypeError, match="bytes"):
        run_scalars((1.25, 0.1, I64, 200, True, 0.375, -123456))


def test_bfloat16_scalar_param():
    k = jiasu.RawKernel(BF16_SCALAR_SOURCE, "bf16_scalar")
    for value in (1.5, -0.25, 3.140625):
        out = jiasu.full(1, np.nan, dtype=np.float32)
        k(1, 1, (ml_dtypes.bfloat16(value), out))
        assert out.get()[0] == np.float32(value)


# ---------------------------------------------------------------- shared memory


def test_dynamic_shared_memory_block_reduction(rng):
    n = (1 << 20) + 123
    threads = 256
    nblocks = blocks(n, threads)
    x = rng.random(n, dtype=np.float32)
    partial = jiasu.full(nblocks, np.nan, dtype=np.float32)
    k = jiasu.RawKernel(BLOCK_SUM_SOURCE, "block_sum")
    k(nblocks, threads, (jiasu.asarray(x), partial, n), shared_mem=threads * 4)
    got = partial.get().astype(np.float64)
    padded = np.zeros(nblocks * threads, np.float64)
    padded[:n] = x
    expected = padded.reshape(nblocks, threads).sum(axis=1)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert math.isclose(got.sum(), x.astype(np.float64).sum(), rel_tol=1e-5)


def test_shared_memory_over_48k_default():
    size = 100 * 1024
    optin = jiasu.Device().max_shared_memory_per_block_optin
    if optin < size:
        pytest.skip(f"this GPU allows only {optin} bytes of shared memory per block")
    k = jiasu.RawKernel(BIG_SHARED_SOURCE, "big_shared")
    out = jiasu.full(size, -1, dtype=np.int32)
    k(1, 256, (out, size), shared_mem=size)
    j = np.arange(size)
    expected = (((size - 1 - j) * 7 + 3) & 0xFF) + 1000
    np.testing.assert_array_equal(out.get(), expected)
    # A smaller request on the same kernel afterwards still works.
    small = 1000
    out2 = jiasu.full(small, -1, dtype=np.int32)
    k(1, 128, (out2, small), shared_mem=small)
    j = np.arange(small)
    np.testing.assert_array_equal(out2.get(), (((small - 1 - j) * 7 + 3) & 0xFF) + 1000)


def test_static_shared_memory_and_attributes(rng):
    k = jiasu.RawKernel(STATIC_SHARED_SOURCE, "reverse_block")
    attrs = k.attributes
    assert set(attrs) >= {"registers", "local_bytes", "static_shared_bytes", "max_threads_per_block"}
    assert attrs["static_shared_bytes"] >= 256 * 4
    host = rng.standard_normal(4 * 256).astype(np.float32)
    out = jiasu.full(4 * 256, np.nan, dtype=np.float32)
    k(4, 256, (jiasu.asarray(host), out))
    np.testing.assert_array_equal(out.get(), host.reshape(4, 256)[:, ::-1].reshape(-1))


# ---------------------------------------------------------------- modules, names, attributes


def test_source_module_two_kernels(rng):
    mod = jiasu.SourceModule(TWO_KERNELS_SOURCE)
    scale = mod.get_function("scale")
    shift = mod.get_function("shift")
    assert isinstance(scale, jiasu._core.Kernel) and isinstance(shift, jiasu._core.Kernel)
    assert scale.name == "scale" and shift.name == "shift"
    n = 5000
    host = rng.standard_normal(n).astype(np.float32)
    x = jiasu.asarray(host)
    scale(blocks(n, 256), 256, (x, np.float32(1.7), n))
    shift(blocks(n, 256), 256, (x, -0.3, n))
    expected = host * np.float32(1.7) + np.float32(-0.3)
    np.testing.assert_array_equal(x.get(), expected)
    names = mod.kernel_names
    assert "scale" in names and "shift" in names
    # get_function of the same name twice gives a working kernel both times.
    again = mod.get_function("scale")
    again(blocks(n, 256), 256, (x, 2.0, n))
    np.testing.assert_array_equal(x.get(), expected * np.float32(2.0))


def test_kernel_without_extern_c_by_plain_name():
    n = 1000
    k = jiasu.RawKernel(PLAIN_NAME_SOURCE, "plain_kernel")
    out = jiasu.full(n, -1, dtype=np.int32)
    k(blocks(n, 128), 128, (out, n))
    np.testing.assert_array_equal(out.get(), 3 * np.arange(n) + 1)
    mod = jiasu.SourceModule(PLAIN_NAME_SOURCE)
    f = mod.get_function("plain_kernel")
    out2 = jiasu.full(n, -1, dtype=np.int32)
    f(blocks(n, 128), 128, (out2, n))
    np.testing.assert_array_equal(out2.get(), 3 * np.arange(n) + 1)
    assert any(name.startswith("_Z12plain_kernel") for name in mod.kernel_names)


def test_kernel_attributes(add_kernel):
    add_kernel.compile()
    attrs = add_kernel.attributes
    assert isinstance(attrs, dict)
    assert attrs["registers"] > 0
    assert 0 < attrs["max_threads_per_block"] <= jiasu.Device().max_threads_per_block
    assert attrs["local_bytes"] >= 0 and attrs["static_shared_bytes"] >= 0
    mod = jiasu.SourceModule(TWO_KERNELS_SOURCE)
    f = mod.get_function("scale")
    assert f.attributes["registers"] > 0 and f.attributes["max_threads_per_block"] > 0
    assert f.max_active_blocks_per_multiprocessor(256) >= 1
    assert f.max_active_blocks_per_multiprocessor(256, shared_mem=1024) >= 1


# ---------------------------------------------------------------- what a kernel receives


def test_view_passes_its_own_pointer(rng):
    mod = jiasu.SourceModule(STRIDED_SOURCE)
    host = rng.standard_normal(100).astype(np.float32)
    a = jiasu.asarray(host)
    tail = a[10:]
    assert tail.ptr == a.ptr + 10 * 4
    mod.get_function("add_one")(1, 128, (tail, 90))
    expected = host.copy()
    expected[10:] += np.float32(1)
    np.testing.assert_array_equal(a.get(), expected)

    # A stepped view: the kernel gets the address of its first element and walks the stride itself.
    stepped = a[4::3]
    assert stepped.ptr == a.ptr + 4 * 4
    mod.get_function("double_every")(1, 64, (stepped, 3, len(stepped)))
    expected[4::3] *= np.float32(2)
    np.testing.assert_array_equal(a.get(), expected)

    # A reversed view starts at the last element.
    rev = a[::-1]
    assert rev.ptr == a.ptr + 99 * 4
    mod.get_function("set_first")(1, 1, (rev, 7.0))
    expected[-1] = 7.0
    np.testing.assert_array_equal(a.get(), expected)

    # A row of a 2-D array.
    b = jiasu.asarray(rng.standard_normal((5, 8)).astype(np.float32))
    b_host = b.get()
    mod.get_function("add_one")(1, 32, (b[3], 8))
    b_host[3] += np.float32(1)
    np.testing.assert_array_equal(b.get(), b_host)


def test_torch_tensors_as_kernel_args(torch, add_kernel):
    n = 100_003
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    y = torch.rand(n, device="cuda", dtype=torch.float32)
    out = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    add_kernel(blocks(n, 256), 256, (x, y, out, n))
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    # Mixed with jiasu arrays.
    j = jiasu.full(n, np.nan, dtype=np.float32)
    add_kernel(blocks(n, 256), 256, (x, out, j, n))
    np.testing.assert_array_equal(j.get(), (x + out).cpu().numpy())


def test_cupy_arrays_as_kernel_args(cupy, add_kernel):
    n = 100_003
    x = cupy.random.random(n, dtype=cupy.float32)
    y = cupy.random.random(n, dtype=cupy.float32)
    out = cupy.full(n, cupy.nan, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    add_kernel(blocks(n, 256), 256, (x, y, out, n))
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out), cupy.asnumpy(x) + cupy.asnumpy(y))


# ---------------------------------------------------------------- streams, events


def test_launch_on_stream(rng, add_kernel):
    n = 200_000
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    dx, dy = jiasu.asarray(x), jiasu.asarray(y)
    for s in (jiasu.Stream(), jiasu.Stream(non_blocking=True)):
        out = jiasu.full(n, np.nan, dtype=np.float32)
        jiasu.synchronize()  # a non-blocking stream does not wait for the legacy stream's copies
        add_kernel(blocks(n, 256), 256, (dx, dy, out, n), stream=s)
        s.synchronize()
        assert s.done
        np.testing.assert_array_equal(out.get(), x + y)
    # A raw CUstream handle (an int) works as well.
    s = jiasu.Stream()
    out = jiasu.full(n, np.nan, dtype=np.float32)
    add_kernel(blocks(n, 256), 256, (dx, dy, out, n), stream=s.ptr)
    s.synchronize()
    np.testing.assert_array_equal(out.get(), x + y)


def test_timing_with_events(rng, add_kernel):
    n = 1_000_000
    dx = jiasu.asarray(rng.random(n, dtype=np.float32))
    out = jiasu.empty(n, dtype=np.float32)
    start, end = jiasu.Event(), jiasu.Event()
    start.record()
    for _ in range(20):
        add_kernel(blocks(n, 256), 256, (dx, dx, out, n))
    end.record()
    end.synchronize()
    assert end.done and start.done
    ms = start.elapsed_time(end)
    assert isinstance(ms, float)
    assert 0 < ms < 10_000


# ---------------------------------------------------------------- compile cache across processes

CACHE_SCRIPT = r"""
import sys
import numpy as np
import jiasu
source = sys.argv[1]
token = int(sys.argv[2])
print("cache_dir=" + jiasu._core.cache_dir())
k = jiasu.RawKernel(source, "cached_fill")
out = jiasu.full(64, -1, dtype=np.int32)
k(1, 64, (out, 64))
assert (out.get() == np.arange(64) * 5 + token).all(), out.get()
print("ok")
"""


def test_compile_cache_shared_across_processes(tmp_path):
    token = uuid.uuid4().int % 1_000_000
    source = (f"// unique {uuid.uuid4().hex}\n"
              'extern "C" __global__ void cached_fill(int* out, int n) {\n'
              f"    int i = threadIdx.x; if (i < n) out[i] = i * 5 + {token};\n"
              "}\n")
    cache = tmp_path / "jiasu-cache"
    env = dict(os.environ, JIASU_CACHE_DIR=str(cache))

    def run():
        result = subprocess.run([sys.executable, "-c", CACHE_SCRIPT, source, str(token)], env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "ok" in result.stdout
        assert f"cache_dir={cache}" in result.stdout
        return result

    run()
    first = cache_entries(cache)
    assert first, "the first process wrote no compile-cache entry"
    for path in first:
        name = os.path.basename(path)
        assert len(name) == 64 and all(c in "0123456789abcdef" for c in name), path
        assert os.path.basename(os.path.dirname(path)) == name[:2]
    run()
    # A recompile would have stored (written and renamed) a new file: same inode and mtime mean the
    # second process loaded the entry from disk.
    assert cache_entries(cache) == first
