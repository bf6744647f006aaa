"""Python-written kernels: every atomic operation (add, sub, max, min, and_, or_, xor, exch, inc, dec, cas) on
the types it supports, under contention, checking both the final memory and the old values returned."""
import numpy as np
import pytest

import jiasu

from .kernels_support import assert_same, blocks_for, param_id, poisoned, rand_bits, rand_float, rand_int


ARITH_TYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
INT_TYPES = [np.int32, np.uint32, np.int64, np.uint64]


# ---------------------------------------------------------------- add: histograms and tickets


@jiasu.kernel
def histogram(x, bins):
    start = jiasu.grid(1)
    stride = jiasu.gridsize(1)
    for i in range(start, x.size, stride):
        jiasu.atomic.add(bins, x[i], 1)


@pytest.mark.parametrize("nbins", [4, 64, 1000])
def test_atomic_histogram_vs_bincount(rng, nbins):
    n = 1 << 22
    x = rng.integers(0, nbins, size=n).astype(np.int32)
    bins = jiasu.zeros(nbins, np.int32)
    histogram[1024, 256](jiasu.asarray(x), bins)
    assert_same(bins, np.bincount(x, minlength=nbins).astype(np.int32))


@jiasu.kernel
def histogram_2d(rows, cols, bins):
    i = jiasu.grid(1)
    if i < rows.size:
        jiasu.atomic.add(bins, (rows[i], cols[i]), 1)


def test_atomic_add_with_tuple_index(rng):
    n = 1_000_003
    rows = rng.integers(0, 5, size=n).astype(np.int32)
    cols = rng.integers(0, 7, size=n).astype(np.int64)
    bins = jiasu.zeros((5, 7), np.uint32)
    histogram_2d[blocks_for(n, 256), 256](jiasu.asarray(rows), jiasu.asarray(cols), bins)
    expected = np.zeros((5, 7), dtype=np.uint32)
    np.add.at(expected, (rows, cols), 1)
    assert_same(bins, expected)


@jiasu.kernel
def take_tickets(counter, tickets):
    i = jiasu.grid(1)
    if i < tickets.size:
        tickets[i] = jiasu.atomic.add(counter, 0, 1)


@pytest.mark.parametrize("dtype", INT_TYPES, ids=param_id)
def test_atomic_add_returns_the_old_value(dtype):
    n = 500_000
    counter = jiasu.zeros(1, dtype)
    tickets = poisoned(n, dtype)
    take_tickets[blocks_for(n, 256), 256](counter, tickets)
    assert counter.get()[0] == n
    assert_same(np.sort(tickets.get()), np.arange(n, dtype=dtype), "every ticket handed out once")


@jiasu.kernel
def add_into_bins(x, bins):
    i = jiasu.grid(1)
    if i < x.size:
        jiasu.atomic.add(bins, i % bins.size, x[i])


def _wide(dtype):
    """The dtype in which the NumPy reference of an atomic accumulation is computed without rounding."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.dtype(np.float64)
    return np.dtype(np.int64) if np.issubdtype(dtype, np.signedinteger) else np.dtype(np.uint64)


def _accumulation_data(rng, dtype, n):
    """Nonzero values whose every partial sum is exact in `dtype` (integers, for the float types)."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return rng.choice(np.array([0.5, 1.0], dtype=np.float16), size=n)
    if np.issubdtype(dtype, np.floating):
        return rand_int(rng, n, np.int64, -100, 100, nonzero=True).astype(dtype)
    if np.issubdtype(dtype, np.signedinteger):
        return rand_int(rng, n, dtype, -10**4, 10**4, nonzero=True)
    return rand_int(rng, n, dtype, 1, 10**4)


@pytest.mark.parametrize("dtype", ARITH_TYPES + [np.float16], ids=param_id)
def test_atomic_add_types(rng, dtype):
    nbins = 8
    n = 2048 if dtype == np.float16 else 400_000  # float16: at most 256 per bin, sums stay exact
    x = _accumulation_data(rng, dtype, n)
    init = (np.arange(nbins) * 3 + 1).astype(dtype)
    bins = jiasu.asarray(init)
    add_into_bins[blocks_for(n, 256), 256](jiasu.asarray(x), bins)
    wide = _wide(dtype)
    expected = init.astype(wide) + x.reshape(-1, nbins).astype(wide).sum(axis=0)
    assert_same(bins, expected.astype(dtype))


# ---------------------------------------------------------------- sub


@jiasu.kernel
def sub_from_bins(x, bins, olds):
    i = jiasu.grid(1)
    if i < x.size:
        olds[i] = jiasu.atomic.sub(bins, i % bins.size, x[i])


@pytest.mark.parametrize("dtype", ARITH_TYPES, ids=param_id)
def test_atomic_sub(rng, dtype):
    nbins, n = 16, 200_000
    x = _accumulation_data(rng, dtype, n)
    wide = _wide(dtype)
    sums = x.reshape(-1, nbins).astype(wide).sum(axis=0)
    init = (sums + 12345).astype(dtype)  # every bin ends at 12345 (unsigned bins never go below it)
    bins = jiasu.asarray(init)
    olds = poisoned(n, dtype)
    sub_from_bins[blocks_for(n, 256), 256](jiasu.asarray(x), bins, olds)
    final = bins.get()
    assert_same(final, np.full(nbins, 12345, dtype=dtype))
    # Per bin, the subtractions form one chain init -> ... -> final: the old values plus the final value
    # are the same multiset as the new values (old - x) plus the initial value.
    olds = olds.get()
    for b in range(nbins):
        o, v = olds[b::nbins], x[b::nbins]
        assert_same(np.sort(np.append(o, final[b])), np.sort(np.append(o - v, init[b])),
                    f"bin {b}: old values of atomic.sub")


# ---------------------------------------------------------------- max, min


@jiasu.kernel
def max_into_bins(x, bins, olds):
    i = jiasu.grid(1)
    if i < x.size:
        olds[i] = jiasu.atomic.max(bins, i % bins.size, x[i])


@jiasu.kernel
def min_into_bins(x, bins, olds):
    i = jiasu.grid(1)
    if i < x.size:
        olds[i] = jiasu.atomic.min(bins, i % bins.size, x[i])


def _extremes_data(rng, dtype, n):
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rand_float(rng, n, dtype, -1e6, 1e6)
    return rand_bits(rng, n, dtype)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ARITH_TYPES, ids=param_id)
def test_atomic_max_min(rng, dtype, op):
    nbins, n = 16, 300_000
    x = _extremes_data(rng, dtype, n)
    # Start in the middle of the data's range: some values win, some do not.
    init = np.sort(x)[n // 2 - nbins // 2: n // 2 + nbins // 2].copy()
    rng.shuffle(init)
    bins = jiasu.asarray(init)
    olds = poisoned(n, dtype)
    kernel = max_into_bins if op == "max" else min_into_bins
    kernel[blocks_for(n, 256), 256](jiasu.asarray(x), bins, olds)
    per_bin = x.reshape(-1, nbins)
    if op == "max":
        expected = np.maximum(init, per_bin.max(axis=0))
    else:
        expected = np.minimum(init, per_bin.min(axis=0))
    assert_same(bins, expected)
    olds = olds.get().reshape(-1, nbins)
    for b in range(nbins):
        allowed = np.append(per_bin[:, b], init[b])
        assert np.isin(olds[:, b], allowed).all(), f"bin {b}: an old value that was never stored"
        if op == "max":
            assert (olds[:, b] <= expected[b]).all() and (olds[:, b] >= init[b]).all()
        else:
            assert (olds[:, b] >= expected[b]).all() and (olds[:, b] <= init[b]).all()


@jiasu.kernel
def nan_extremes_into_bins(x, maxes, mins):
    i = jiasu.grid(1)
    if i < x.size:
        jiasu.atomic.nanmax(maxes, i % maxes.size, x[i])
        jiasu.atomic.nanmin(mins, i % mins.size, x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint64], ids=param_id)
def test_atomic_nanmax_nanmin_treat_nan_as_missing(rng, dtype):
    # NumPy's fmax/fmin: a nan stored or given loses to the other value; only nans everywhere leave a nan.
    nbins, n = 8, 40_000
    x = _extremes_data(rng, dtype, n)
    start = _extremes_data(rng, dtype, nbins)
    if np.issubdtype(np.dtype(dtype), np.floating):
        x[rng.random(n) < 0.3] = np.nan
        x[np.arange(n) % nbins == 5] = np.nan  # bin 5 sees only nans
        start[[1, 5]] = np.nan  # bins that start with a nan
    maxes, mins = jiasu.asarray(start), jiasu.asarray(start.copy())
    nan_extremes_into_bins[blocks_for(n, 256), 256](jiasu.asarray(x), maxes, mins)
    per_bin = x.reshape(-1, nbins)
    assert_same(maxes, np.fmax(start, np.fmax.reduce(per_bin, axis=0)))
    assert_same(mins, np.fmin(start, np.fmin.reduce(per_bin, axis=0)))


# ---------------------------------------------------------------- and_, or_, xor


@jiasu.kernel
def bitwise_into_bins(xa, xo, xx, and_bins, or_bins, xor_bins):
    i = jiasu.grid(1)
    if i < xa.size:
        b = i % and_bins.size
        jiasu.atomic.and_(and_bins, b, xa[i])
        jiasu.atomic.or_(or_bins, b, xo[i])
        jiasu.atomic.xor(xor_bins, b, xx[i])


@jiasu.kernel
def xor_olds(x, bins, olds):
    i = jiasu.grid(1)
    if i < x.size:
        olds[i] = jiasu.atomic.xor(bins, 0, x[i])


def _one_bit_each(rng, n, dtype, positions):
    """Values with exactly one bit set, at one of `positions`."""
    dtype = np.dtype(dtype)
    shifts = rng.choice(np.asarray(positions, dtype=np.uint64), size=n)
    return (np.uint64(1) << shifts).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


@pytest.mark.parametrize("dtype", INT_TYPES, ids=param_id)
def test_atomic_and_or_xor(rng, dtype):
    nbins, n = 8, 100_000
    dtype = np.dtype(dtype)
    width = dtype.itemsize * 8
    # AND clears, and OR sets, only bits among a random half of the positions; XOR gets random bits.
    cleared = rng.choice(width, size=width // 2, replace=False)
    set_ = rng.choice(width, size=width // 2, replace=False)
    xa = ~_one_bit_each(rng, n, dtype, cleared)
    xo = _one_bit_each(rng, n, dtype, set_)
    xx = rand_bits(rng, n, dtype)
    and_init, or_init, xor_init = (rand_bits(rng, nbins, dtype) for _ in range(3))
    and_bins, or_bins, xor_bins = jiasu.asarray(and_init), jiasu.asarray(or_init), jiasu.asarray(xor_init)
    bitwise_into_bins[blocks_for(n, 256), 256](jiasu.asarray(xa), jiasu.asarray(xo), jiasu.asarray(xx),
                                               and_bins, or_bins, xor_bins)
    expected_and = and_init & np.bitwise_and.reduce(xa.reshape(-1, nbins), axis=0)
    expected_or = or_init | np.bitwise_or.reduce(xo.reshape(-1, nbins), axis=0)
    assert_same(and_bins, expected_and, "and_")
    assert_same(or_bins, expected_or, "or_")
    assert_same(xor_bins, xor_init ^ np.bitwise_xor.reduce(xx.reshape(-1, nbins), axis=0), "xor")
    # XOR's old values: old ^ x is the value each thread left behind. The XORs form one chain from the
    # initial value to the final one, so the olds plus the final value are the news plus the initial value.
    m = 4096
    bins = jiasu.asarray(xor_init[:1])
    olds = poisoned(m, dtype)
    xor_olds[blocks_for(m, 256), 256](jiasu.asarray(xx[:m]), bins, olds)
    olds = olds.get()
    final = bins.get()[0]
    news = olds ^ xx[:m]
    assert_same(np.sort(np.append(olds, final)), np.sort(np.append(news, xor_init[0])))


# ---------------------------------------------------------------- exch


@jiasu.kernel
def exchange(slot, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.exch(slot, 0, np.int32(i))


@jiasu.kernel
def exchange_float(values, slot, olds):
    i = jiasu.grid(1)
    if i < values.size:
        olds[i] = jiasu.atomic.exch(slot, 0, values[i])


def test_atomic_exch(rng):
    n = 300_000
    slot = jiasu.asarray(np.array([-5], dtype=np.int32))
    olds = poisoned(n, np.int32)
    exchange[blocks_for(n, 256), 256](slot, olds)
    # Each exchange hands over the previous holder's value: the olds plus the final value are the initial
    # value plus every thread's index, each exactly once.
    got = np.append(olds.get(), slot.get())
    assert_same(np.sort(got), np.sort(np.append(np.arange(n, dtype=np.int32), np.int32(-5))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint64], ids=param_id)
def test_atomic_exch_types(rng, dtype):
    n = 50_000
    values = (rand_float(rng, n, dtype, -1e3, 1e3) if np.issubdtype(dtype, np.floating)
              else rand_bits(rng, n, dtype))
    values = np.unique(values)
    rng.shuffle(values)
    first = np.array([values[0]], dtype=dtype)
    values = values[1:]
    slot = jiasu.asarray(first)
    olds = poisoned(values.size, dtype)
    exchange_float[blocks_for(values.size, 256), 256](jiasu.asarray(values), slot, olds)
    got = np.append(olds.get(), slot.get())
    assert_same(np.sort(got), np.sort(np.append(values, first)))


# ---------------------------------------------------------------- inc, dec


@jiasu.kernel
def increment_wrapping(counter, limit, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.inc(counter, 0, limit)


@jiasu.kernel
def decrement_wrapping(counter, limit, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.dec(counter, 0, limit)


UNSIGNED_LIMITS = [(np.uint32, limit) for limit in (0, 1, 99, 1000, 2**32 - 1)] + [
    (np.uint64, limit) for limit in (0, 99, 2**32 + 5, 2**64 - 1)]


@pytest.mark.parametrize("dtype, limit", UNSIGNED_LIMITS, ids=param_id)
def test_atomic_inc(dtype, limit):
    # inc: old >= limit ? 0 : old + 1 -- a counter modulo limit + 1.
    n = 250_000
    start = min(7, limit)
    counter = jiasu.asarray(np.array([start], dtype=dtype))
    olds = poisoned(n, dtype)
    increment_wrapping[blocks_for(n, 256), 256](counter, dtype(limit), olds)
    period = limit + 1
    assert int(counter.get()[0]) == (start + n) % period
    expected = np.array([(start + k) % period for k in range(n)], dtype=dtype)
    assert_same(np.sort(olds.get()), np.sort(expected), "old values")


@pytest.mark.parametrize("dtype, limit", UNSIGNED_LIMITS, ids=param_id)
def test_atomic_dec(dtype, limit):
    # dec: (old == 0 or old > limit) ? limit : old - 1 -- counting down modulo limit + 1.
    n = 250_000
    start = min(7, limit)
    counter = jiasu.asarray(np.array([start], dtype=dtype))
    olds = poisoned(n, dtype)
    decrement_wrapping[blocks_for(n, 256), 256](counter, dtype(limit), olds)
    period = limit + 1
    assert int(counter.get()[0]) == (start - n) % period
    expected = np.array([(start - k) % period for k in range(n)], dtype=dtype)
    assert_same(np.sort(olds.get()), np.sort(expected), "old values")


def test_atomic_dec_above_limit_resets():
    counter = jiasu.asarray(np.array([50], dtype=np.uint32))
    olds = poisoned(1, np.uint32)
    decrement_wrapping[1, 1](counter, np.uint32(10), olds)
    assert olds.get()[0] == 50
    assert counter.get()[0] == 10


# ---------------------------------------------------------------- cas


@jiasu.kernel
def cas_single_winner(flag, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        olds[i] = jiasu.atomic.cas(flag, 0, 0, np.int32(i + 1))


def test_atomic_cas_single_winner():
    n = 100_000
    flag = jiasu.zeros(1, np.int32)
    olds = poisoned(n, np.int32)
    cas_single_winner[blocks_for(n, 256), 256](flag, olds)
    olds = olds.get()
    winner = flag.get()[0]
    assert 1 <= winner <= n
    assert np.count_nonzero(olds == 0) == 1, "exactly one compare-and-swap finds the expected 0"
    assert olds[winner - 1] == 0, "the thread that stored its value saw the expected value"
    assert (np.delete(olds, winner - 1) == winner).all()


# (cas is tested on the integer types only: the checker accepts int32, uint32, int64 and uint64 arrays.)
@jiasu.kernel
def cas_increment(counters, per_thread):
    i = jiasu.grid(1)
    if i < per_thread.size:
        slot = i % counters.size
        old = counters[slot]
        while True:
            seen = jiasu.atomic.cas(counters, slot, old, old + per_thread[i])
            if seen == old:
                break
            old = seen


@pytest.mark.parametrize("dtype", INT_TYPES, ids=param_id)
def test_atomic_cas_loop(rng, dtype):
    nslots, n = 16, 200_000
    per_thread = rand_int(rng, n, dtype, 1, 8)
    counters = jiasu.zeros(nslots, dtype)
    cas_increment[blocks_for(n, 256), 256](counters, jiasu.asarray(per_thread))
    expected = per_thread.reshape(-1, nslots).astype(np.int64).sum(axis=0).astype(dtype)
    assert_same(counters, expected)


@jiasu.kernel
def cas_2d(grid_, olds):
    i = jiasu.grid(1)
    if i < olds.size:
        r = i % grid_.shape[0]
        c = (i // grid_.shape[0]) % grid_.shape[1]
        olds[i] = jiasu.atomic.cas(grid_, (r, c), -1, np.int32(i))


def test_atomic_cas_with_tuple_index():
    shape, n = (4, 6), 24 * 50
    target = jiasu.full(shape, -1, dtype=np.int32)
    olds = poisoned(n, np.int32)
    cas_2d[blocks_for(n, 128), 128](target, olds)
    got, olds = target.get(), olds.get()
    idx = np.arange(n)
    r, c = idx % shape[0], (idx // shape[0]) % shape[1]
    for rr in range(shape[0]):
        for cc in range(shape[1]):
            mine = idx[(r == rr) & (c == cc)]
            assert got[rr, cc] in mine, "the stored value came from a thread of that cell"
            assert olds[got[rr, cc]] == -1
            others = mine[mine != got[rr, cc]]
            assert (olds[others] == got[rr, cc]).all()
