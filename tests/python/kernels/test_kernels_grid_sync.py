"""Numba's cooperative groups: ``g = cuda.cg.this_grid(); g.sync()`` (and jiasu's ``jiasu.cg.this_grid().sync()``)
waits until every thread of every block has reached it. Such kernels are launched cooperatively, every block at
once (on the CPU backend each block on an OS thread of its own), at most ``k.max_cooperative_grid_blocks(block)``
blocks. Each test reads, after a grid sync, what other blocks wrote before it: wrong without the barrier."""
import numpy as np
import pytest

import jiasu
from jiasu import cuda

from kernels.grid_sync_kernels import reverse_rounds, reversed_rounds
from kernels.kernels_support import assert_same, poisoned, rand_float


@jiasu.kernel
def reverse_once(a, out):
    """jiasu's spelling, the group used in one expression."""
    i = jiasu.grid(1)
    a[i] = i
    jiasu.cg.this_grid().sync()
    out[i] = a[a.size - 1 - i]


def sequential_rows(M):
    """numba-cuda's own test: the grid writes one row at a time, each thread reading the previous row's element of
    its opposite thread."""
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


@cuda.jit(device=True)
def block_partial(x, partials):
    """The sum of this block's elements of x, in partials[block] (a tree in shared memory)."""
    buf = cuda.shared.array(128, np.float64)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partials[cuda.blockIdx.x] = buf[0]


@cuda.jit(device=True)
def wait_for_grid(g):
    g.sync()


@cuda.jit
def normalise(x, partials, out):
    """x / sum(x) in one launch: each block's partial sum, the grid barrier (in a device function), then every
    thread adds up the partials of every block."""
    block_partial(x, partials)
    wait_for_grid(cuda.cg.this_grid())
    total = 0.0
    for b in range(partials.size):
        total += partials[b]
    i = cuda.grid(1)
    out[i] = x[i] / total


@cuda.jit
def no_grid(a):
    a[cuda.grid(1)] = 1


@cuda.jit
def one_block_leaves(a):
    if cuda.blockIdx.x == 1:
        return
    cuda.cg.this_grid().sync()
    a[cuda.grid(1)] = 1


def test_grid_sync_orders_every_block(backend):
    threads, rounds = 64, 7
    reverse_rounds.specialize(np.zeros(1, np.int64), np.zeros(1, np.int64), rounds)
    blocks = min(reverse_rounds.max_cooperative_grid_blocks(threads), 64)
    assert blocks >= 2
    n = blocks * threads
    out = poisoned(n, np.int64)
    reverse_rounds[blocks, threads](jiasu.zeros(n, np.int64), out, rounds)
    assert_same(out, reversed_rounds(n, rounds))

    out = poisoned(n, np.int64)
    reverse_once[blocks, threads](jiasu.zeros(n, np.int64), out)
    assert_same(out, np.arange(n)[::-1])


def test_numba_sequential_rows(backend):
    kernel = cuda.jit("void(int32[:, ::1])")(sequential_rows)
    blockdim, griddim = 32, 8
    M = np.zeros((128, griddim * blockdim), np.int32)
    kernel.specialize(M)
    assert kernel.max_cooperative_grid_blocks(blockdim) >= griddim
    kernel[griddim, blockdim](M)
    np.testing.assert_array_equal(M, np.tile(np.arange(M.shape[0]), (M.shape[1], 1)).T)


def test_grid_sync_in_a_device_function_after_block_barriers(backend, rng):
    blocks = 6
    x = rand_float(rng, blocks * 128, np.float64, 0.5, 2.0)
    out = poisoned(x.size, np.float64)
    normalise[blocks, 128](jiasu.asarray(x), poisoned(blocks, np.float64), out)
    np.testing.assert_allclose(out.get(), x / x.sum(), rtol=1e-13)


def test_max_cooperative_grid_blocks_and_too_large_grids(backend):
    with pytest.raises(ValueError, match="not compiled yet: launch it, or call no_grid.specialize"):
        no_grid.max_cooperative_grid_blocks(128)
    reverse_once.specialize(jiasu.zeros(1, np.int64), jiasu.zeros(1, np.int64))
    most = reverse_once.max_cooperative_grid_blocks(256)
    assert most > 0
    assert reverse_once.max_cooperative_grid_blocks((16, 16)) == most  # only the block's threads count
    assert reverse_once.max_cooperative_grid_blocks((16, 4, 4)) == most
    assert reverse_once.max_cooperative_grid_blocks(32) >= most
    assert reverse_once.max_cooperative_grid_blocks(2048) == 0  # no such block runs
    n = (most + 1) * 256
    with pytest.raises(jiasu.LaunchError, match=f"a grid of {most + 1} blocks is more than the {most} blocks of 256 "
                                                "threads that"):
        reverse_once[most + 1, 256](jiasu.zeros(n, np.int64), jiasu.zeros(n, np.int64))
    out = poisoned(256, np.int64)  # the kernel still runs within the limit
    reverse_once[1, 256](jiasu.zeros(256, np.int64), out)
    assert_same(out, np.arange(256)[::-1])


def test_a_block_that_never_syncs_is_a_deadlock(cpu_only, healthy):
    with pytest.raises(jiasu.LaunchError, match=r"deadlock: block \(\d, 0, 0\) waits at a grid barrier \(g.sync\(\)\) "
                                                "that 1 block of the grid ended without reaching"):
        one_block_leaves[4, 32](jiasu.zeros(128))
    healthy()


def test_cg_names_on_the_host(backend):
    with pytest.raises(TypeError, match="jiasu.cg.this_grid works inside kernels only"):
        cuda.cg.this_grid()
    assert cuda.cg is jiasu.cg
    assert dir(jiasu.cg) == ["this_grid"]
