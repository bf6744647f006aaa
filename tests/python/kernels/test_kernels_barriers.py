"""Barriers in the places CUDA allows them: at the top of the kernel, inside loops and branches that every
thread of the block takes (uniform conditions and bounds), after threads have returned, with variables that
live from one barrier interval to the next (scalars, tuples, local arrays) and others that do not. On the
CPU backend such kernels run as loops over the block's threads between barriers; results against NumPy."""
import numpy as np
import pytest

import jiasu

from kernels.kernels_support import assert_same, blocks_for, poisoned, rand_float, rand_int


@jiasu.kernel
def rotate_in_block(x, out, rounds):
    """Each round every thread passes its value to the next thread of the block, through shared memory."""
    buf = jiasu.shared.array(128, np.int64)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    v = x[i]
    for r in range(rounds):
        buf[t] = v
        jiasu.syncthreads()
        v = buf[(t + 127) % 128]
        jiasu.syncthreads()
    out[i] = v


def test_barriers_in_a_uniform_for_loop(rng):
    blocks, rounds = 5, 7
    x = rand_int(rng, blocks * 128, np.int64, -1000, 1000)
    out = poisoned(blocks * 128, np.int64)
    rotate_in_block[blocks, 128](jiasu.asarray(x), out, rounds)
    assert_same(out, np.roll(x.reshape(blocks, 128), rounds, axis=1).reshape(-1))


@jiasu.kernel
def prefix_sums(x, out):
    """Hillis-Steele inclusive scan of each block: a while loop around barriers, a uniform stride."""
    buf = jiasu.shared.array(256, np.float64)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    buf[t] = x[i]
    jiasu.syncthreads()
    stride = 1
    while stride < jiasu.blockDim.x:
        add = 0.0
        if t >= stride:
            add = buf[t - stride]
        jiasu.syncthreads()
        buf[t] += add
        jiasu.syncthreads()
        stride *= 2
    out[i] = buf[t]


def test_barriers_in_a_while_loop_with_live_variables(rng):
    blocks = 6
    x = rand_float(rng, blocks * 256, np.float64, -1, 1)
    out = poisoned(blocks * 256, np.float64)
    prefix_sums[blocks, 256](jiasu.asarray(x), out)
    np.testing.assert_allclose(out.get(), np.cumsum(x.reshape(blocks, 256), axis=1).reshape(-1), rtol=1e-12,
                               atol=1e-12)


@jiasu.kernel
def early_exit_then_barrier(x, out, n):
    """Threads past n return before the barrier; the others still meet there (exited threads count as
    arrived on sm_70+), and a branch that every thread takes holds a barrier too."""
    buf = jiasu.shared.array(64, np.float32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    if i >= n:
        return
    buf[t] = x[i] * 2
    jiasu.syncthreads()
    if n > 0:
        jiasu.syncthreads()
        partner = t ^ 1
        if jiasu.blockIdx.x * 64 + partner < n:
            out[i] = buf[partner]
        else:
            out[i] = -1.0


def test_threads_that_return_before_a_barrier(rng):
    n = 300  # the last block has 44 live threads
    x = rand_float(rng, n, np.float32, -10, 10)
    out = poisoned(5 * 64, np.float32)
    early_exit_then_barrier[5, 64](jiasu.asarray(x), out, n)
    got = out.get()
    partner = np.arange(n) ^ 1
    expected = np.where(partner < n, 2 * x[np.minimum(partner, n - 1)], -1).astype(np.float32)
    assert_same(got[:n], expected)
    assert np.isnan(got[n:]).all()  # threads that returned wrote nothing


@jiasu.kernel
def local_and_tuple_state(x, out):
    """A local array and a tuple variable kept by each thread across barriers."""
    mine = jiasu.local.array(4, np.int32)
    buf = jiasu.shared.array(32, np.int32)
    t = jiasu.threadIdx.x
    pair = (t, 2 * t)
    for k in range(4):
        buf[t] = x[jiasu.blockIdx.x * 32 + (t + k) % 32]
        jiasu.syncthreads()
        mine[k] = buf[(t + 1) % 32]
        jiasu.syncthreads()
    a, b = pair
    out[jiasu.blockIdx.x * 32 + t] = mine[0] + mine[1] + mine[2] + mine[3] + a - b // 2


def test_local_arrays_and_tuples_across_barriers(rng):
    blocks = 3
    x = rand_int(rng, blocks * 32, np.int32, -1000, 1000)
    out = poisoned(blocks * 32, np.int32)
    local_and_tuple_state[blocks, 32](jiasu.asarray(x), out)
    xb = x.reshape(blocks, 32)
    t = np.arange(32)
    expected = sum(xb[:, (t + 1 + k) % 32] for k in range(4))
    assert_same(out, expected.reshape(-1).astype(np.int32))


@jiasu.kernel
def reduce_2d_block(x, out):
    """A 2-D block (16 x 8) reducing in shared memory: threads numbered x fastest."""
    buf = jiasu.shared.array(128, np.float64)
    tid = jiasu.threadIdx.y * jiasu.blockDim.x + jiasu.threadIdx.x
    buf[tid] = x[jiasu.blockIdx.x * 128 + tid]
    jiasu.syncthreads()
    s = 64
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        jiasu.syncthreads()
        s //= 2
    if tid == 0:
        out[jiasu.blockIdx.x] = buf[0]


@pytest.mark.parametrize("blocks", [1, 9])
def test_two_dimensional_block_reduction(rng, blocks):
    x = rand_float(rng, blocks * 128, np.float64, -1, 1)
    out = poisoned(blocks, np.float64)
    reduce_2d_block[blocks, (16, 8)](jiasu.asarray(x), out)
    # Another order of 128 additions of values in [-1, 1]: within 128 ulp of 1 absolutely (a sum near 0 has no
    # relative bound).
    np.testing.assert_allclose(out.get(), x.reshape(blocks, 128).sum(axis=1), rtol=1e-12, atol=128 * 2.0 ** -52)
    assert blocks_for(blocks * 128, 128) == blocks


@jiasu.kernel
def grid_stride_through_shared(x, out):
    """A grid-stride loop around barriers: each thread's own bounds (the same trip count everywhere, as CUDA
    requires around a barrier, but a different index in every thread)."""
    buf = jiasu.shared.array(64, np.float32)
    t = jiasu.threadIdx.x
    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):
        buf[t] = x[i] * 2
        jiasu.syncthreads()
        out[i] = buf[63 - t]
        jiasu.syncthreads()


def test_grid_stride_loop_around_barriers(rng):
    blocks, threads, rounds = 3, 64, 5
    n = blocks * threads * rounds
    x = rand_float(rng, n, np.float32, -1, 1)
    out = poisoned(n, np.float32)
    grid_stride_through_shared[blocks, threads](jiasu.asarray(x), out)
    expected = (2 * x).reshape(rounds, blocks, threads)[:, :, ::-1].reshape(-1)
    assert_same(out, expected)


@jiasu.kernel
def chained_assignment(out, n):
    u = n
    u = w = u + 1
    out[jiasu.threadIdx.x] = u * 100 + w


def test_chained_assignment_of_a_block_uniform_value():
    out = poisoned(4, np.int64)
    chained_assignment[1, 4](out, 5)
    assert_same(out, np.full(4, 606, np.int64))


@jiasu.kernel
def return_inside_a_barrier_loop(out):
    for i in range(3):
        out[jiasu.threadIdx.x] += 1
        if jiasu.threadIdx.x == 0 and i == 0:
            return
        jiasu.syncthreads()


@jiasu.kernel
def return_ends_a_while_true(out, n):
    while True:
        out[jiasu.threadIdx.x] += 1
        if out[jiasu.threadIdx.x] >= n:
            return
        jiasu.syncthreads()


def test_threads_that_return_inside_a_loop_with_barriers():
    out = jiasu.zeros(4, dtype=np.int64)
    return_inside_a_barrier_loop[1, 4](out)
    assert_same(out, np.array([1, 3, 3, 3], np.int64))
    out = jiasu.zeros(4, dtype=np.int64)
    return_ends_a_while_true[1, 4](out, 3)  # every thread returns at the same pass: no barrier is left waiting
    assert_same(out, np.full(4, 3, np.int64))


@jiasu.kernel
def barrier_in_a_target(out):
    tid = jiasu.threadIdx.x
    out[tid, jiasu.syncthreads_count(tid < 3)] = 1


def test_barrier_inside_an_assignment_target():
    out = jiasu.zeros((8, 8), dtype=np.int32)
    barrier_in_a_target[1, 8](out)
    expected = np.zeros((8, 8), np.int32)
    expected[:, 3] = 1
    assert_same(out, expected)


@jiasu.kernel
def triangle_of_barriers(out, n):
    """A block-level loop whose variable bounds an inner block-level loop: both uniform."""
    buf = jiasu.shared.array(32, np.int64)
    t = jiasu.threadIdx.x
    total = 0
    a = -1  # what a holds after the loop when n is 0
    for a in range(n):
        for b in range(a):
            buf[t] = a * 10 + b
            jiasu.syncthreads()
            total += buf[(t + 1) % 32]
            jiasu.syncthreads()
    out[t] = total * 1000 + a


def test_nested_block_level_loops_bounded_by_the_outer_variable():
    out = poisoned(32, np.int64)
    triangle_of_barriers[1, 32](out, 5)
    total = sum(a * 10 + b for a in range(5) for b in range(a))
    assert_same(out, np.full(32, total * 1000 + 4, np.int64))


@jiasu.kernel
def reverse_with_named_size(x, out):
    n = 64  # assigned once, to a constant: a shape may use it, as Numba allows
    tile = jiasu.shared.array(n, np.float32)
    rows = jiasu.local.array((2, n), np.int32)
    t = jiasu.threadIdx.x
    tile[t] = x[t]
    rows[1, 1] = t
    jiasu.syncthreads()
    out[t] = tile[n - 1 - t] + rows[1, 1] - t


def test_a_shape_may_be_a_variable_assigned_once_to_a_constant(rng):
    x = rand_float(rng, 64, np.float32)
    out = poisoned(64, np.float32)
    reverse_with_named_size[1, 64](jiasu.asarray(x), out)
    assert_same(out, x[::-1].copy())
