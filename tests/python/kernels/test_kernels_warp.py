"""Python-written kernels: warp-level operations (shuffles, votes, activemask, syncwarp, laneid, warpsize) and
the block-wide votes syncthreads_count / syncthreads_and / syncthreads_or."""
import numpy as np
import pytest

import jiasu

from .kernels_support import assert_same, blocks_for, opposite, param_id, poisoned, rand_bits, rand_float, rand_int


WARP = 32
FULL = 0xFFFFFFFF


def _warp_groups(values):
    return np.asarray(values).reshape(-1, WARP)


# ---------------------------------------------------------------- shuffles


@jiasu.kernel
def warp_reduce_sum(x, out):
    i = jiasu.grid(1)
    v = np.float32(0.0)
    if i < x.size:
        v = x[i]
    offset = 16
    while offset > 0:
        v += jiasu.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if jiasu.laneid == 0:
        jiasu.atomic.add(out, 0, v)


@pytest.mark.parametrize("n", [32, 1000, 1_000_003])
def test_warp_shuffle_reduction(rng, n):
    # Integer-valued float32 data: every partial sum is exact, so the total must match exactly.
    x = rand_int(rng, n, np.int64, 1, 15).astype(np.float32)
    out = jiasu.zeros(1, np.float32)
    warp_reduce_sum[blocks_for(n, 256), 256](jiasu.asarray(x), out)
    assert x.astype(np.float64).sum() < 2 ** 24
    assert out.get()[0] == x.astype(np.float64).sum()


@jiasu.kernel
def warp_lane_sums(x, out):
    i = jiasu.grid(1)
    v = x[i]
    mask = 16
    while mask > 0:
        v += jiasu.shfl_xor_sync(0xFFFFFFFF, v, mask)
        mask //= 2
    out[i] = v


def test_shfl_xor_butterfly_gives_every_lane_the_total(rng):
    n = 256 * 40
    x = rand_int(rng, n, np.int32, -1000, 1000, nonzero=True)
    out = poisoned(n, np.int32)
    warp_lane_sums[n // 256, 256](jiasu.asarray(x), out)
    totals = _warp_groups(x).sum(axis=1, dtype=np.int32)
    assert_same(out, np.repeat(totals, WARP))


@jiasu.kernel
def warp_inclusive_scan(x, out):
    i = jiasu.grid(1)
    v = x[i]
    d = 1
    while d < jiasu.warpsize:
        up = jiasu.shfl_up_sync(0xFFFFFFFF, v, d)
        if jiasu.laneid >= d:
            v += up
        d *= 2
    out[i] = v


def test_shfl_up_inclusive_scan(rng):
    n = 128 * 25
    x = rand_int(rng, n, np.int32, -500, 500, nonzero=True)
    out = poisoned(n, np.int32)
    warp_inclusive_scan[n // 128, 128](jiasu.asarray(x), out)
    assert_same(out, np.cumsum(_warp_groups(x), axis=1, dtype=np.int32).reshape(-1))


@jiasu.kernel
def warp_broadcast_and_reverse(x, from_lane0, reversed_, from_src, src_lane):
    i = jiasu.grid(1)
    lane = jiasu.laneid
    from_lane0[i] = jiasu.shfl_sync(0xFFFFFFFF, x[i], 0)
    reversed_[i] = jiasu.shfl_sync(FULL, x[i], 31 - lane)
    from_src[i] = jiasu.shfl_sync(FULL, x[i], src_lane[i])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.float32, np.float64], ids=param_id)
def test_shfl_sync_broadcast_and_permute(rng, dtype):
    n = 64 * 30
    if np.issubdtype(dtype, np.floating):
        x = rand_float(rng, n, dtype, -1e6, 1e6)
    else:
        x = rand_bits(rng, n, dtype)  # every bit random: a 64-bit shuffle must move both halves
    src = rand_int(rng, n, np.int32, 0, 31)
    outs = [poisoned(n, dtype) for _ in range(3)]
    warp_broadcast_and_reverse[n // 64, 64](jiasu.asarray(x), *outs, jiasu.asarray(src))
    groups = _warp_groups(x)
    assert_same(outs[0], np.repeat(groups[:, 0], WARP), "shfl_sync from lane 0")
    assert_same(outs[1], groups[:, ::-1].reshape(-1), "shfl_sync from lane 31 - lane")
    src_groups = _warp_groups(src)
    expected = np.take_along_axis(groups, src_groups.astype(np.int64), axis=1).reshape(-1)
    assert_same(outs[2], expected, "shfl_sync from a per-lane source")


@jiasu.kernel
def shift_down_within_warp(x, out):
    i = jiasu.grid(1)
    v = jiasu.shfl_down_sync(0xFFFFFFFF, x[i], 3)
    if jiasu.laneid < 29:
        out[i] = v
    else:
        out[i] = -x[i]


def test_shfl_down_stays_within_the_warp(rng):
    n = 32 * 64
    x = rand_float(rng, n, np.float64, 1, 2)
    out = poisoned(n, np.float64)
    shift_down_within_warp[n // 128, 128](jiasu.asarray(x), out)
    g = _warp_groups(x)
    expected = np.concatenate([g[:, 3:], -g[:, 29:]], axis=1).reshape(-1)
    assert_same(out, expected)


# ---------------------------------------------------------------- votes and masks


@jiasu.kernel
def warp_votes(x, ballots, anys, alls, masks):
    i = jiasu.grid(1)
    pred = x[i] > 0
    ballots[i] = jiasu.ballot_sync(0xFFFFFFFF, pred)
    anys[i] = jiasu.any_sync(0xFFFFFFFF, pred)
    alls[i] = jiasu.all_sync(0xFFFFFFFF, pred)
    masks[i] = jiasu.activemask()


def _vote_pattern(rng, warps):
    x = rand_float(rng, (warps, WARP), np.float32, -1, 1)
    x[0] = np.abs(x[0])                      # all lanes true
    x[1] = -np.abs(x[1])                     # all lanes false
    x[2] = np.where(np.arange(WARP) % 2 == 0, 1.0, -1.0)  # even lanes
    x[3] = -np.abs(x[3])
    x[3, 31] = 1.0                           # only the last lane
    x[4] = np.abs(x[4])
    x[4, 0] = -1.0                           # all but lane 0
    return x.reshape(-1)


def test_ballot_any_all_activemask(rng):
    warps = 40
    n = warps * WARP
    x = _vote_pattern(rng, warps)
    pred = _warp_groups(x > 0)
    weights = (np.uint64(1) << np.arange(WARP, dtype=np.uint64))
    ballot = (pred.astype(np.uint64) * weights).sum(axis=1).astype(np.uint32)
    assert list(ballot[:5]) == [0xFFFFFFFF, 0, 0x55555555, 0x80000000, 0xFFFFFFFE]
    expected_any = np.repeat(pred.any(axis=1), WARP)
    expected_all = np.repeat(pred.all(axis=1), WARP)
    ballots, masks = poisoned(n, np.uint32), poisoned(n, np.uint32)
    anys, alls = opposite(expected_any), opposite(expected_all)
    warp_votes[n // 160, 160](jiasu.asarray(x), ballots, anys, alls, masks)
    assert_same(ballots, np.repeat(ballot, WARP), "ballot_sync")
    assert_same(anys, expected_any, "any_sync")
    assert_same(alls, expected_all, "all_sync")
    assert_same(masks, np.full(n, 0xFFFFFFFF, dtype=np.uint32), "activemask of full warps")


@jiasu.kernel
def divergent_activemask(branch_masks, entry_masks):
    i = jiasu.grid(1)
    entry_masks[i] = jiasu.activemask()
    lane = jiasu.laneid
    if lane % 2 == 0:
        branch_masks[i] = jiasu.activemask()
    else:
        branch_masks[i] = jiasu.activemask()


def test_activemask_in_branches_and_partial_warps():
    threads = 48  # the second warp of each block has only 16 threads
    blocks = 10
    n = blocks * threads
    branch_masks, entry_masks = poisoned(n, np.uint32), poisoned(n, np.uint32)
    divergent_activemask[blocks, threads](branch_masks, entry_masks)
    lane = np.tile(np.arange(threads) % WARP, blocks)
    # Threads that do not exist are not active: the 16-thread warp sees 0x0000FFFF.
    full_warp = np.tile(np.arange(threads) < WARP, blocks)
    expected_entry = np.where(full_warp, 0xFFFFFFFF, 0x0000FFFF).astype(np.uint32)
    assert_same(entry_masks, expected_entry, "activemask at kernel entry")
    got = branch_masks.get()
    even = lane % 2 == 0
    # In each branch only lanes of that parity can be active, and a lane is always in its own mask.
    assert ((got[even] & np.uint32(0xAAAAAAAA)) == 0).all(), "odd lanes reported active in the even branch"
    assert ((got[~even] & np.uint32(0x55555555)) == 0).all(), "even lanes reported active in the odd branch"
    assert (((got >> lane.astype(np.uint32)) & 1) == 1).all(), "a lane missing from its own activemask"
    assert ((got & ~expected_entry) == 0).all(), "threads that do not exist reported active"


@jiasu.kernel
def warp_neighbour_exchange(x, out):
    buf = jiasu.shared.array(128, np.int32)
    t = jiasu.threadIdx.x
    i = jiasu.grid(1)
    lane = jiasu.laneid
    buf[t] = x[i]
    jiasu.syncwarp()
    out[i] = buf[(t // 32) * 32 + (lane + 1) % 32]


def test_syncwarp_orders_shared_memory_within_a_warp(rng):
    n = 128 * 50
    x = rand_int(rng, n, np.int32, -10**6, 10**6, nonzero=True)
    out = poisoned(n, np.int32)
    warp_neighbour_exchange[n // 128, 128](jiasu.asarray(x), out)
    assert_same(out, np.roll(_warp_groups(x), -1, axis=1).reshape(-1))


# ---------------------------------------------------------------- laneid and warpsize


@jiasu.kernel
def lanes(lane_out, warp_out, size_out):
    linear = jiasu.threadIdx.y * jiasu.blockDim.x + jiasu.threadIdx.x
    block = jiasu.blockIdx.y * jiasu.gridDim.x + jiasu.blockIdx.x
    g = block * (jiasu.blockDim.x * jiasu.blockDim.y) + linear
    lane_out[g] = jiasu.laneid
    warp_out[g] = linear // jiasu.warpsize
    size_out[g] = jiasu.warpsize


@pytest.mark.parametrize("blocks, threads", [(3, 96), ((2, 3), (16, 4)), ((1, 2), (8, 12))],
                         ids=["1d", "2d-16x4", "2d-8x12"])
def test_laneid_and_warpsize(blocks, threads):
    bt = threads if isinstance(threads, tuple) else (threads, 1)
    bb = blocks if isinstance(blocks, tuple) else (blocks, 1)
    per_block = bt[0] * bt[1]
    n = per_block * bb[0] * bb[1]
    outs = [poisoned(n, np.int64) for _ in range(3)]
    lanes[blocks, threads](*outs)
    linear = np.tile(np.arange(per_block), bb[0] * bb[1])
    assert jiasu.get_device().warp_size == WARP
    assert_same(outs[0], linear % WARP, "laneid")
    assert_same(outs[1], linear // WARP, "warp of the thread")
    assert_same(outs[2], np.full(n, WARP, dtype=np.int64), "warpsize")


# ---------------------------------------------------------------- block-wide votes


@jiasu.kernel
def block_votes(x, counts, ands, ors):
    i = jiasu.grid(1)
    pred = x[i] > 0
    c = jiasu.syncthreads_count(pred)
    a = jiasu.syncthreads_and(pred)
    o = jiasu.syncthreads_or(pred)
    if jiasu.threadIdx.x == 0:
        b = jiasu.blockIdx.x
        counts[b] = np.int32(c)
        ands[b] = a
        ors[b] = o


def test_syncthreads_count_and_or(rng):
    blocks, threads = 50, 256
    x = rand_float(rng, (blocks, threads), np.float32, -1, 1)
    x[0] = np.abs(x[0])
    x[1] = -np.abs(x[1])
    x[2] = -np.abs(x[2])
    x[2, 200] = 0.5
    x[3] = np.abs(x[3])
    x[3, 17] = -0.5
    pred = x > 0
    expected_any, expected_all = pred.any(axis=1), pred.all(axis=1)
    counts = poisoned(blocks, np.int32)
    ands, ors = opposite(expected_all), opposite(expected_any)
    block_votes[blocks, threads](jiasu.asarray(x.reshape(-1)), counts, ands, ors)
    assert_same(counts, pred.sum(axis=1).astype(np.int32), "syncthreads_count")
    assert_same(ands, expected_all, "syncthreads_and")
    assert_same(ors, expected_any, "syncthreads_or")
    assert list(expected_all[:4]) == [True, False, False, False]
    assert list(expected_any[:4]) == [True, False, True, True]


@jiasu.kernel
def branch_then_syncwarp(masks):
    i = jiasu.grid(1)
    if jiasu.laneid % 2 == 0:
        masks[i] = jiasu.activemask()
    else:
        masks[i] = jiasu.uint32(1)
    jiasu.syncwarp()  # the odd lanes reach it while the even ones are at activemask


@jiasu.kernel
def branch_then_shuffle(masks, x, out):
    i = jiasu.grid(1)
    if jiasu.laneid < 5:
        masks[i] = jiasu.activemask()
    out[i] = jiasu.shfl_xor_sync(0xFFFFFFFF, x[i], 1)


def test_activemask_gives_the_lanes_of_its_branch(rng):
    n = 256
    masks = poisoned(n, np.uint32)
    branch_then_syncwarp[n // 64, 64](masks)
    lane = np.arange(n) % WARP
    expected = np.where(lane % 2 == 0, 0x55555555, 1).astype(np.uint32)
    assert_same(masks, expected, "activemask of the even lanes, the odd ones at syncwarp")

    masks = poisoned(n, np.uint32)
    x = rand_int(rng, n, np.int32, -1000, 1000)
    out = poisoned(n, np.int32)
    branch_then_shuffle[n // 64, 64](masks, jiasu.asarray(x), out)
    got = masks.get()
    assert (got[lane < 5] == 0x1F).all(), [hex(v) for v in got[:8]]
    assert_same(out, x[np.arange(n) ^ 1], "the shuffle after the branch")
