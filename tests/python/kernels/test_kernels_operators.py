"""Python-written kernels: operators with Python/NumPy semantics (// and % floor toward -inf with the sign
of the divisor, true division, **, bitwise operators and shifts), chained comparisons, short-circuit
and/or/not, conditional expressions, and the builtins min, max, abs and round."""
import numpy as np
import pytest

import jiasu

from .kernels_support import (TOL, assert_rel, assert_same, blocks_for, opposite, param_id, poisoned, rand_bits,
                              rand_float, rand_int)


N = 100_003


# ---------------------------------------------------------------- // and %


@jiasu.kernel
def floordiv_mod(a, b, q, r):
    i = jiasu.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def _divmod_inputs(rng, dtype):
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer):
        a = rand_int(rng, N, dtype, -1000, 1000)
        b = rand_int(rng, N, dtype, -50, 50, nonzero=True)
        pairs = [(-7, 2), (7, -2), (-7, -2), (7, 2), (-6, 3), (6, -3), (0, 5), (-1, 1000), (1, -1000)]
    else:
        a = rand_float(rng, N, dtype, -100, 100)
        b = rand_float(rng, N, dtype, -10, 10, avoid=0.25)
        # 1.0 // 0.1 is 9.0 in Python (0.1 is a little above 1/10), where floor(1.0 / 0.1) is 10.
        pairs = [(1.0, 0.1), (-1.0, 3.0), (5.0, -3.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (6.0, -3.0),
                 (-6.0, 3.0), (0.5, -0.25), (100.0, 0.7)]
    for k, (x, y) in enumerate(pairs):
        a[k], b[k] = x, y
    return a, b


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64], ids=param_id)
def test_floordiv_and_mod_follow_python(rng, dtype):
    a, b = _divmod_inputs(rng, dtype)
    assert (b != 0).all()
    assert (a < 0).any() and (a > 0).any() and (b < 0).any() and (b > 0).any()
    q, r = poisoned(N, dtype), poisoned(N, dtype)
    floordiv_mod[blocks_for(N, 256), 256](jiasu.asarray(a), jiasu.asarray(b), q, r)
    expected_q, expected_r = np.floor_divide(a, b), np.remainder(a, b)
    if np.dtype(dtype) == np.float64:
        assert expected_q[0] == 9.0  # the 1.0 // 0.1 case
    assert_same(q, expected_q, f"{np.dtype(dtype)} //")
    assert_same(r, expected_r, f"{np.dtype(dtype)} %")
    got_r = r.get()
    nonzero = got_r != 0
    assert (np.sign(got_r[nonzero]) == np.sign(b[nonzero])).all(), "% must take the sign of the divisor"


@jiasu.kernel
def floordiv_mod_literals(a, q, r, q2, r2):
    i = jiasu.grid(1)
    if i < a.size:
        q[i] = a[i] // 4
        r[i] = a[i] % -3
        q2[i] = -17 // a[i]
        r2[i] = 17 % a[i]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64], ids=param_id)
def test_floordiv_and_mod_with_literals(rng, dtype):
    if np.issubdtype(dtype, np.integer):
        a = rand_int(rng, N, dtype, -500, 500, nonzero=True)
    else:
        a = rand_float(rng, N, dtype, -50, 50, avoid=0.25)
    outs = [poisoned(N, dtype) for _ in range(4)]
    floordiv_mod_literals[blocks_for(N, 256), 256](jiasu.asarray(a), *outs)
    for got, expected, what in zip(outs, [a // 4, a % -3, -17 // a, 17 % a], ["a // 4", "a % -3", "-17 // a",
                                                                              "17 % a"]):
        assert expected.dtype == np.dtype(dtype)
        assert_same(got, expected, what)


@jiasu.kernel
def true_divide(a, b, out):
    i = jiasu.grid(1)
    if i < a.size:
        out[i] = a[i] / b[i]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64], ids=param_id)
def test_true_division(rng, dtype):
    if np.issubdtype(dtype, np.integer):
        a = rand_int(rng, N, dtype, -10**6, 10**6)
        b = rand_int(rng, N, dtype, -1000, 1000, nonzero=True)
    else:
        a = rand_float(rng, N, dtype, -100, 100)
        b = rand_float(rng, N, dtype, -10, 10, avoid=0.1)
    expected = a / b  # int / int is float64, as in Python
    out = poisoned(N, expected.dtype)
    true_divide[blocks_for(N, 256), 256](jiasu.asarray(a), jiasu.asarray(b), out)
    assert_rel(out, a.astype(np.float64) / b.astype(np.float64), TOL[expected.dtype] * 10, "a / b")
    got = out.get()
    assert got.dtype == expected.dtype


# ---------------------------------------------------------------- **


@jiasu.kernel
def power(a, b, out):
    i = jiasu.grid(1)
    if i < a.size:
        out[i] = a[i] ** b[i]


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=param_id)
def test_integer_power(rng, dtype):
    a = rand_int(rng, N, dtype, -6, 6, nonzero=True)
    b = rand_int(rng, N, dtype, 0, 9)
    a[:4], b[:4] = [2, -3, 5, -1], [0, 3, 9, 7]
    out = poisoned(N, dtype)
    power[blocks_for(N, 256), 256](jiasu.asarray(a), jiasu.asarray(b), out)
    assert_same(out, a ** b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=param_id)
def test_float_power(rng, dtype):
    a = rand_float(rng, N, dtype, 0.2, 4)
    b = rand_float(rng, N, dtype, -3, 3)
    out = poisoned(N, dtype)
    power[blocks_for(N, 256), 256](jiasu.asarray(a), jiasu.asarray(b), out)
    tol = 2e-6 if np.dtype(dtype) == np.float32 else 1e-14
    assert_rel(out, a.astype(np.float64) ** b.astype(np.float64), tol, "a ** b")


@jiasu.kernel
def power_literals(x, sq, root, inv, cube):
    i = jiasu.grid(1)
    if i < x.size:
        sq[i] = x[i] ** 2
        root[i] = x[i] ** 0.5
        inv[i] = x[i] ** -1
        cube[i] = 2 ** x[i]


def test_power_with_literals_keeps_float32(rng):
    x = rand_float(rng, N, np.float32, 0.1, 8)
    outs = [poisoned(N, np.float32) for _ in range(4)]
    power_literals[blocks_for(N, 256), 256](jiasu.asarray(x), *outs)
    x64 = x.astype(np.float64)
    for got, ref, what in zip(outs, [x64 ** 2, x64 ** 0.5, 1 / x64, 2 ** x64], ["x**2", "x**0.5", "x**-1", "2**x"]):
        assert got.dtype == np.float32
        assert_rel(got, ref, 2e-6, what)


# ---------------------------------------------------------------- bitwise operators


@jiasu.kernel
def bit_ops(a, b, s, o_and, o_or, o_xor, o_inv, o_shl, o_shr):
    i = jiasu.grid(1)
    if i < a.size:
        o_and[i] = a[i] & b[i]
        o_or[i] = a[i] | b[i]
        o_xor[i] = a[i] ^ b[i]
        o_inv[i] = ~a[i]
        o_shl[i] = a[i] << s[i]
        o_shr[i] = a[i] >> s[i]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint32, np.uint64], ids=param_id)
def test_bitwise_and_shifts(rng, dtype):
    dtype = np.dtype(dtype)
    a, b = rand_bits(rng, N, dtype), rand_bits(rng, N, dtype)
    s = rand_int(rng, N, dtype, 0, dtype.itemsize * 8 - 1)
    if np.issubdtype(dtype, np.signedinteger):
        assert (a < 0).any(), "signed inputs need negative values: >> must shift in the sign"
    outs = [poisoned(N, dtype) for _ in range(6)]
    bit_ops[blocks_for(N, 256), 256](jiasu.asarray(a), jiasu.asarray(b), jiasu.asarray(s), *outs)
    expected = [a & b, a | b, a ^ b, ~a, a << s, a >> s]
    for got, ref, what in zip(outs, expected, ["&", "|", "^", "~", "<<", ">>"]):
        assert_same(got, ref, f"{dtype} {what}")


@jiasu.kernel
def bit_literals(a, lo_byte, shifted, flipped):
    i = jiasu.grid(1)
    if i < a.size:
        lo_byte[i] = (a[i] >> 3) & 0xFF
        shifted[i] = (a[i] << 2) | 1
        flipped[i] = a[i] ^ 0x5A5A


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64], ids=param_id)
def test_bitwise_with_literals(rng, dtype):
    a = rand_bits(rng, N, dtype)
    outs = [poisoned(N, dtype) for _ in range(3)]
    bit_literals[blocks_for(N, 256), 256](jiasu.asarray(a), *outs)
    for got, ref in zip(outs, [(a >> 3) & 0xFF, (a << 2) | 1, a ^ 0x5A5A]):
        assert ref.dtype == np.dtype(dtype)
        assert_same(got, ref)


# ---------------------------------------------------------------- comparisons and boolean logic


@jiasu.kernel
def chained(x, lo, hi, inside, order_ok, counter, neg_count, neg_hit):
    i = jiasu.grid(1)
    if i < x.size:
        inside[i] = lo < x[i] <= hi
        # The middle operand is evaluated once: counter ends at exactly x.size.
        order_ok[i] = 0 <= jiasu.atomic.add(counter, 0, 1) < x.size
        # a < b < c stops at the first false comparison: neg_count only counts negative x.
        neg_hit[i] = x[i] < 0.0 < jiasu.atomic.add(neg_count, 0, 1) + 1


def test_chained_comparisons(rng):
    x = rand_float(rng, N, np.float32, -2, 2)
    lo, hi = -0.5, 0.75
    x[:2] = [hi, lo]  # the boundaries: hi is inside, lo is not
    expected_inside = (lo < x) & (x <= hi)
    expected_neg = x < 0
    inside, order_ok, neg_hit = opposite(expected_inside), opposite(np.ones(N, bool)), opposite(expected_neg)
    counter, neg_count = jiasu.zeros(1, np.int32), jiasu.zeros(1, np.int32)
    chained[blocks_for(N, 256), 256](jiasu.asarray(x), lo, hi, inside, order_ok, counter, neg_count, neg_hit)
    assert_same(inside, expected_inside, "lo < x <= hi")
    assert counter.get()[0] == N, "the middle operand of a chained comparison was evaluated more than once"
    assert_same(order_ok, np.ones(N, bool), "0 <= ticket < n")
    assert neg_count.get()[0] == int(expected_neg.sum()), "a < b < c evaluated c after a < b was false"
    assert_same(neg_hit, expected_neg, "x < 0.0 < ticket + 1")


@jiasu.kernel
def short_circuit(flag, and_count, or_count, not_count, both):
    i = jiasu.grid(1)
    if i < flag.size:
        if flag[i] > 0 and jiasu.atomic.add(and_count, 0, 1) >= 0:
            both[i] = 1
        else:
            both[i] = 0
        if flag[i] > 0 or jiasu.atomic.add(or_count, 0, 1) < 0:
            both[i] += 2
        if not (flag[i] > 0) and not jiasu.atomic.add(not_count, 0, 1) < 0:
            both[i] += 4


def test_and_or_not_short_circuit(rng):
    flag = rand_int(rng, N, np.int32, -5, 5)
    positive = flag > 0
    counts = [jiasu.zeros(1, np.int32) for _ in range(3)]
    both = poisoned(N, np.int32)
    short_circuit[blocks_for(N, 256), 256](jiasu.asarray(flag), *counts, both)
    and_count, or_count, not_count = (int(c.get()[0]) for c in counts)
    assert and_count == int(positive.sum()), "`and` evaluated its right side after a false left side"
    assert or_count == int((~positive).sum()), "`or` evaluated its right side after a true left side"
    assert not_count == int((~positive).sum())
    assert_same(both, np.where(positive, 1 + 2, 4).astype(np.int32))


@jiasu.kernel
def guarded_read(x, n, out):
    i = jiasu.grid(1)
    if i < n and x[i] > 0:
        out[i] = 1
    elif i < n:
        out[i] = 0


def test_and_guards_an_out_of_range_read(rng, healthy):
    n = 10
    x = rand_float(rng, n, np.float32, -1, 1)
    out = poisoned(n, np.int32)
    # Four million threads for ten elements: x[i] is only read where i < n.
    guarded_read[1 << 14, 256](jiasu.asarray(x), n, out)
    jiasu.synchronize()
    assert_same(out, (x > 0).astype(np.int32))
    healthy()


@jiasu.kernel
def conditional_expr(x, y, picked, bucket, taken, counter):
    i = jiasu.grid(1)
    if i < x.size:
        picked[i] = x[i] if x[i] > y[i] else y[i] * 2.0
        v = x[i]
        if v < -1.0:
            bucket[i] = 0
        elif v < 0.0:
            bucket[i] = 1
        elif v < 1.0:
            bucket[i] = 2
        else:
            bucket[i] = 3
        # Only the chosen branch of a conditional expression is evaluated.
        taken[i] = jiasu.atomic.add(counter, 0, 1) if x[i] > 0 else -1


def test_conditional_expression_and_elif(rng):
    x = rand_float(rng, N, np.float32, -3, 3)
    y = rand_float(rng, N, np.float32, -3, 3)
    picked, bucket, taken = poisoned(N, np.float32), poisoned(N, np.int32), poisoned(N, np.int32)
    counter = jiasu.zeros(1, np.int32)
    conditional_expr[blocks_for(N, 256), 256](jiasu.asarray(x), jiasu.asarray(y), picked, bucket, taken, counter)
    assert_same(picked, np.where(x > y, x, y * np.float32(2)))
    assert_same(bucket, np.digitize(x, [-1.0, 0.0, 1.0]).astype(np.int32))
    positive = x > 0
    assert counter.get()[0] == int(positive.sum())
    got = taken.get()
    assert (got[~positive] == -1).all()
    assert np.array_equal(np.sort(got[positive]), np.arange(int(positive.sum()), dtype=np.int32))


# ---------------------------------------------------------------- min, max, abs, round


@jiasu.kernel
def min_max_abs(x, y, p, q, fmin, fmax, fabs_, imin, imax, iabs, relu, clamp):
    i = jiasu.grid(1)
    if i < x.size:
        fmin[i] = min(x[i], y[i])
        fmax[i] = max(x[i], y[i])
        fabs_[i] = abs(x[i])
        imin[i] = min(p[i], q[i])
        imax[i] = max(p[i], q[i])
        iabs[i] = abs(p[i])
        relu[i] = max(p[i], 0)
        clamp[i] = min(max(x[i], -0.5), 0.5)


def test_min_max_abs(rng):
    x, y = rand_float(rng, N, np.float32, -2, 2), rand_float(rng, N, np.float32, -2, 2)
    p, q = rand_int(rng, N, np.int32, -10**6, 10**6), rand_int(rng, N, np.int32, -10**6, 10**6)
    dtypes = [np.float32] * 3 + [np.int32] * 4 + [np.float32]
    outs = [poisoned(N, d) for d in dtypes]
    min_max_abs[blocks_for(N, 256), 256](*(jiasu.asarray(a) for a in (x, y, p, q)), *outs)
    expected = [np.minimum(x, y), np.maximum(x, y), np.abs(x), np.minimum(p, q), np.maximum(p, q), np.abs(p),
                np.maximum(p, 0), np.clip(x, np.float32(-0.5), np.float32(0.5))]
    for got, ref, what in zip(outs, expected, ["min f", "max f", "abs f", "min i", "max i", "abs i", "relu",
                                               "clamp"]):
        assert_same(got, ref, what)


@jiasu.kernel
def min_max_three(x, y, z, lo, hi):
    i = jiasu.grid(1)
    if i < x.size:
        lo[i] = min(x[i], y[i], z[i])
        hi[i] = max(x[i], y[i], z[i])


def test_min_max_of_three_arguments(rng):
    x, y, z = (rand_float(rng, N, np.float64, -5, 5) for _ in range(3))
    lo, hi = poisoned(N, np.float64), poisoned(N, np.float64)
    min_max_three[blocks_for(N, 256), 256](jiasu.asarray(x), jiasu.asarray(y), jiasu.asarray(z), lo, hi)
    assert_same(lo, np.minimum(np.minimum(x, y), z))
    assert_same(hi, np.maximum(np.maximum(x, y), z))


@jiasu.kernel
def round_kernel(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = int(round(x[i]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=param_id)
def test_round_halves_to_even(rng, dtype):
    x = rand_float(rng, N, dtype, -1000, 1000)
    halves = rand_int(rng, 2000, np.int64, -400, 400) + 0.5  # exact .5 cases: Python rounds to even
    x[:2000] = halves
    x[2000:2006] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]
    out = poisoned(N, np.int64)
    round_kernel[blocks_for(N, 256), 256](jiasu.asarray(x), out)
    expected = np.round(x).astype(np.int64)
    assert list(expected[2000:2006]) == [0, 2, 2, 0, -2, -2]
    assert_same(out, expected, "round(x)")
