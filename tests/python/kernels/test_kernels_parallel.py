"""Python-written kernels doing real parallel work: a 2-D stencil, a shared-memory tiled matmul, block
reductions (shared-memory tree; threadfence and a last-block pass), grid-stride loops, per-thread local
arrays, dynamic shared memory sized at launch, and the thread/block index intrinsics in 1-, 2- and 3-D."""
import numpy as np
import pytest

import jiasu

from .kernels_support import assert_rel, assert_same, assert_untouched, blocks_for, poisoned, rand_float


TILE = 16
BLOCK = 256
K = 8


# ---------------------------------------------------------------- 2-D stencil


@jiasu.kernel
def laplacian(u, out):
    i, j = jiasu.grid(2)
    if 1 <= i < u.shape[0] - 1 and 1 <= j < u.shape[1] - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@pytest.mark.parametrize("shape", [(512, 512), (301, 179), (3, 1000)])
def test_laplacian_stencil(rng, shape):
    u = rand_float(rng, shape, np.float32, -1, 1)
    out = poisoned(shape, np.float32)
    threads = (16, 16)
    blocks = (blocks_for(shape[0], 16), blocks_for(shape[1], 16))
    laplacian[blocks, threads](jiasu.asarray(u), out)
    got = out.get()
    u64 = u.astype(np.float64)
    ref = u64[:-2, 1:-1] + u64[2:, 1:-1] + u64[1:-1, :-2] + u64[1:-1, 2:] - 4 * u64[1:-1, 1:-1]
    assert_rel(got[1:-1, 1:-1], ref, 1e-6, "interior")
    border = np.ones(shape, dtype=bool)
    border[1:-1, 1:-1] = False
    assert_untouched(got[border], np.float32, "the border (outside the bounds check)")


# ---------------------------------------------------------------- shared-memory tiled matmul


@jiasu.kernel
def matmul_tiled(A, B, C):
    sA = jiasu.shared.array((TILE, TILE), np.float32)
    sB = jiasu.shared.array((TILE, TILE), np.float32)
    tx = jiasu.threadIdx.x
    ty = jiasu.threadIdx.y
    row = jiasu.blockIdx.y * TILE + ty
    col = jiasu.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        k = t * TILE + tx
        if row < A.shape[0] and k < A.shape[1]:
            sA[ty, tx] = A[row, k]
        else:
            sA[ty, tx] = 0.0
        k = t * TILE + ty
        if k < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[k, col]
        else:
            sB[ty, tx] = 0.0
        jiasu.syncthreads()
        for kk in range(TILE):
            acc += sA[ty, kk] * sB[kk, tx]
        jiasu.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@pytest.mark.parametrize("m, k, n", [(256, 256, 256), (200, 123, 77), (1, 300, 5), (33, 16, 1)])
def test_tiled_matmul(rng, m, k, n):
    A = rand_float(rng, (m, k), np.float32, -1, 1)
    B = rand_float(rng, (k, n), np.float32, -1, 1)
    C = poisoned((m, n), np.float32)
    matmul_tiled[(blocks_for(n, TILE), blocks_for(m, TILE)), (TILE, TILE)](jiasu.asarray(A), jiasu.asarray(B), C)
    assert_rel(C, A.astype(np.float64) @ B.astype(np.float64), 1e-5, "A @ B")


# ---------------------------------------------------------------- reductions


@jiasu.kernel
def block_sum(x, out):
    s = jiasu.shared.array(BLOCK, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    if i < x.size:
        s[t] = x[i]
    else:
        s[t] = 0.0
    jiasu.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        jiasu.syncthreads()
        step //= 2
    if t == 0:
        jiasu.atomic.add(out, 0, float(s[0]))


@pytest.mark.parametrize("n", [1, 255, 1_000_003, 1 << 22])
def test_block_reduction_tree_and_atomic(rng, n):
    x = rand_float(rng, n, np.float32, 0, 1)
    out = jiasu.zeros(1, np.float64)
    block_sum[blocks_for(n, BLOCK), BLOCK](jiasu.asarray(x), out)
    expected = x.astype(np.float64).sum()
    got = out.get()[0]
    assert abs(got - expected) <= 1e-5 * expected, (got, expected)


@jiasu.kernel
def block_sum_exact(x, out):
    s = jiasu.shared.array(BLOCK, np.int64)
    t = jiasu.threadIdx.x
    s[t] = 0
    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):
        s[t] += x[i]
    jiasu.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        jiasu.syncthreads()
        step //= 2
    if t == 0:
        jiasu.atomic.add(out, 0, s[0])


def test_block_reduction_exact_int64(rng):
    n = 3_000_017
    x = rng.integers(-10**9, 10**9, size=n, dtype=np.int64)
    out = jiasu.zeros(1, np.int64)
    block_sum_exact[120, BLOCK](jiasu.asarray(x), out)
    assert out.get()[0] == x.sum()


@jiasu.kernel
def last_block_sum(x, partial, ticket, total):
    s = jiasu.shared.array(BLOCK, np.float64)
    is_last = jiasu.shared.array(1, np.int32)
    t = jiasu.threadIdx.x
    b = jiasu.blockIdx.x
    acc = 0.0
    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):
        acc += x[i]
    s[t] = acc
    jiasu.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        jiasu.syncthreads()
        step //= 2
    if t == 0:
        partial[b] = s[0]
        jiasu.threadfence()
        mine = jiasu.atomic.inc(ticket, 0, np.uint32(jiasu.gridDim.x))
        is_last[0] = 1 if mine == jiasu.gridDim.x - 1 else 0
    jiasu.syncthreads()
    if is_last[0] == 1 and t == 0:
        sum_all = 0.0
        for k in range(jiasu.gridDim.x):
            sum_all += partial[k]
        total[0] = sum_all
        ticket[0] = 0


def test_threadfence_last_block_reduction(rng):
    n = 2_000_003
    blocks = 96
    x = rand_float(rng, n, np.float64, -1, 1)
    partial = poisoned(blocks, np.float64)
    ticket = jiasu.zeros(1, np.uint32)
    total = poisoned(1, np.float64)
    dx = jiasu.asarray(x)
    for _ in range(3):  # the last block resets the ticket, so launches can repeat
        total[...] = np.nan
        last_block_sum[blocks, BLOCK](dx, partial, ticket, total)
        assert abs(total.get()[0] - x.sum()) <= 1e-10 * np.abs(x).sum()
        assert ticket.get()[0] == 0
    assert abs(partial.get().sum() - x.sum()) <= 1e-10 * np.abs(x).sum()


@jiasu.kernel
def fences(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = x[i] + 1.0
        jiasu.threadfence_block()
        jiasu.threadfence_system()
        jiasu.threadfence()
        out[i] = out[i] * 2.0


def test_fences_compile_and_run(rng):
    n = 10_000
    x = rand_float(rng, n, np.float64, -5, 5)
    out = poisoned(n, np.float64)
    fences[blocks_for(n, 128), 128](jiasu.asarray(x), out)
    assert_same(out, (x + 1.0) * 2.0)


# ---------------------------------------------------------------- grid-stride loops


@jiasu.kernel
def grid_stride_1d(x, out, visits):
    start = jiasu.grid(1)
    stride = jiasu.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * 2.0 + 1.0
        visits[i] += 1


@pytest.mark.parametrize("blocks, threads", [(1, 32), (7, 128), (32, 256), (4096, 256)])
def test_grid_stride_loop_1d(rng, blocks, threads):
    n = 1_000_003
    x = rand_float(rng, n, np.float32, -3, 3)
    out = poisoned(n, np.float32)
    visits = jiasu.zeros(n, np.int32)
    grid_stride_1d[blocks, threads](jiasu.asarray(x), out, visits)
    assert_same(out, 2 * x + 1)
    assert_same(visits, np.ones(n, dtype=np.int32), "each element visited exactly once")


@jiasu.kernel
def grid_stride_2d(a, out):
    x0, y0 = jiasu.grid(2)
    sx, sy = jiasu.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            out[i, j] = a[i, j] - 0.5 * a[i, 0]


def test_grid_stride_loop_2d(rng):
    shape = (1000, 777)
    a = rand_float(rng, shape, np.float64, -3, 3)
    out = poisoned(shape, np.float64)
    grid_stride_2d[(3, 5), (16, 8)](jiasu.asarray(a), out)
    assert_rel(out, a - 0.5 * a[:, :1], 1e-15)


# ---------------------------------------------------------------- local arrays


@jiasu.kernel
def sort_rows(a, out):
    r = jiasu.grid(1)
    if r < a.shape[0]:
        tmp = jiasu.local.array(K, np.float32)
        for k in range(K):
            tmp[k] = a[r, k]
        for k in range(1, K):
            v = tmp[k]
            j = k - 1
            while j >= 0 and tmp[j] > v:
                tmp[j + 1] = tmp[j]
                j -= 1
            tmp[j + 1] = v
        for k in range(K):
            out[r, k] = tmp[k]


def test_local_array_per_thread_scratch(rng):
    rows = 50_000
    a = rand_float(rng, (rows, K), np.float32, -100, 100)
    a[:10] = a[:10, ::-1].copy()
    out = poisoned((rows, K), np.float32)
    sort_rows[blocks_for(rows, 128), 128](jiasu.asarray(a), out)
    assert_same(out, np.sort(a, axis=1))


@jiasu.kernel
def local_histogram(x, out):
    r = jiasu.grid(1)
    if r < x.shape[0]:
        counts = jiasu.local.array((2, 4), np.int32)
        for p in range(2):
            for q in range(4):
                counts[p, q] = 0
        for k in range(x.shape[1]):
            v = x[r, k]
            counts[v // 4, v % 4] += 1
        for p in range(2):
            for q in range(4):
                out[r, p * 4 + q] = counts[p, q]


def test_local_2d_array(rng):
    rows = 10_000
    x = rng.integers(0, 8, size=(rows, 20)).astype(np.int32)
    out = poisoned((rows, 8), np.int32)
    local_histogram[blocks_for(rows, 128), 128](jiasu.asarray(x), out)
    expected = np.stack([np.bincount(row, minlength=8) for row in x]).astype(np.int32)
    assert_same(out, expected)


# ---------------------------------------------------------------- dynamic shared memory


@jiasu.kernel
def block_reverse_dynamic(x, out):
    buf = jiasu.shared.array(0, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    buf[t] = x[i]
    jiasu.syncthreads()
    out[i] = buf[jiasu.blockDim.x - 1 - t]


@pytest.mark.parametrize("threads", [32, 128, 1024])
@pytest.mark.parametrize("use_stream", [False, True])
def test_dynamic_shared_memory(rng, backend, threads, use_stream):
    if use_stream and backend == "cpu":
        pytest.skip("streams are CUDA objects; CPU launches are synchronous")
    blocks = 37
    n = blocks * threads
    x = rand_float(rng, n, np.float32, -10, 10)
    out = poisoned(n, np.float32)
    stream = jiasu.Stream() if use_stream else None
    block_reverse_dynamic[blocks, threads, stream, threads * 4](jiasu.asarray(x), out)
    if stream is not None:
        stream.synchronize()
    assert_same(out, x.reshape(blocks, threads)[:, ::-1].reshape(-1))


# ---------------------------------------------------------------- thread and block indices


@jiasu.kernel
def record_indices(out):
    gx, gy, gz = jiasu.grid(3)
    nx, ny, nz = jiasu.gridsize(3)
    g = (gz * ny + gy) * nx + gx
    out[g, 0] = jiasu.threadIdx.x
    out[g, 1] = jiasu.threadIdx.y
    out[g, 2] = jiasu.threadIdx.z
    out[g, 3] = jiasu.blockIdx.x
    out[g, 4] = jiasu.blockIdx.y
    out[g, 5] = jiasu.blockIdx.z
    out[g, 6] = jiasu.blockDim.x
    out[g, 7] = jiasu.blockDim.y
    out[g, 8] = jiasu.blockDim.z
    out[g, 9] = jiasu.gridDim.x
    out[g, 10] = jiasu.gridDim.y
    out[g, 11] = jiasu.gridDim.z
    out[g, 12] = nx
    out[g, 13] = ny
    out[g, 14] = nz


@pytest.mark.parametrize("blocks, threads", [
    (5, 64),
    ((5, 3), (16, 8)),
    ((3, 2, 2), (8, 4, 2)),
    ((1, 1, 7), (2, 3, 5)),
], ids=["1d", "2d", "3d", "3d-odd"])
def test_thread_and_block_indices(blocks, threads):
    blocks = blocks if isinstance(blocks, tuple) else (blocks,)
    threads = threads if isinstance(threads, tuple) else (threads,)
    bdim = np.array(threads + (1,) * (3 - len(threads)))
    gdim = np.array(blocks + (1,) * (3 - len(blocks)))
    total = int(np.prod(bdim) * np.prod(gdim))
    out = poisoned((total, 15), np.int64)
    record_indices[blocks if len(blocks) > 1 else blocks[0], threads if len(threads) > 1 else threads[0]](out)
    # Every thread's global coordinates, then the block and thread indices they decompose into.
    size = gdim * bdim
    gz, gy, gx = np.meshgrid(np.arange(size[2]), np.arange(size[1]), np.arange(size[0]), indexing="ij")
    coords = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)  # row g = (gz * ny + gy) * nx + gx
    expected = np.empty((total, 15), dtype=np.int64)
    expected[:, 0:3] = coords % bdim
    expected[:, 3:6] = coords // bdim
    expected[:, 6:9] = bdim
    expected[:, 9:12] = gdim
    expected[:, 12:15] = size
    assert_same(out, expected)


@jiasu.kernel
def grid_2d_matches_indices(out):
    i, j = jiasu.grid(2)
    gx = jiasu.blockIdx.x * jiasu.blockDim.x + jiasu.threadIdx.x
    gy = jiasu.blockIdx.y * jiasu.blockDim.y + jiasu.threadIdx.y
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = gx * 100000 + gy
        if gx != i or gy != j:
            out[i, j] = -1


def test_grid_2d_is_x_then_y():
    shape = (70, 45)
    out = poisoned(shape, np.int64)
    grid_2d_matches_indices[(blocks_for(shape[0], 16), blocks_for(shape[1], 16)), (16, 16)](out)
    i, j = np.indices(shape)
    assert_same(out, i * 100000 + j)
