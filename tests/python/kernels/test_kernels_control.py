"""Python-written kernels: control flow (early return, while/break/continue, range with any step, pass),
tuple unpacking, array attributes (len, shape, ndim, size), and device functions (@jiasu.func)."""
import math

import numpy as np
import pytest

import jiasu

from .kernels_support import assert_rel, assert_same, blocks_for, param_id, poisoned, rand_float, rand_int



# ---------------------------------------------------------------- return, while, break, continue


@jiasu.kernel
def early_return(x, out):
    i = jiasu.grid(1)
    if i >= x.size:
        return
    if x[i] < 0:
        out[i] = -1.0
        return
    out[i] = math.sqrt(x[i])


def test_early_return(rng):
    n = 100_003
    x = rand_float(rng, n, np.float64, -4, 4)
    out = poisoned(n, np.float64)
    early_return[blocks_for(n, 256) + 3, 256](jiasu.asarray(x), out)  # extra blocks return at once
    assert_rel(out, np.where(x < 0, -1.0, np.sqrt(np.abs(x))), 1e-14)


@jiasu.kernel
def collatz(x, steps, odd_steps):
    i = jiasu.grid(1)
    if i < x.size:
        v = x[i]
        s = 0
        odd = 0
        while True:
            if v == 1:
                break
            s += 1
            if v % 2 == 0:
                v //= 2
                continue
            odd += 1
            v = 3 * v + 1
        steps[i] = s
        odd_steps[i] = odd


def _collatz(v):
    s = odd = 0
    while v != 1:
        s += 1
        if v % 2 == 0:
            v //= 2
        else:
            odd += 1
            v = 3 * v + 1
    return s, odd


def test_while_break_continue(rng):
    n = 4096
    x = rand_int(rng, n, np.int64, 1, 100_000)
    x[:3] = [1, 2, 27]
    steps, odd = poisoned(n, np.int64), poisoned(n, np.int64)
    collatz[blocks_for(n, 128), 128](jiasu.asarray(x), steps, odd)
    expected = np.array([_collatz(int(v)) for v in x], dtype=np.int64)
    assert expected[2, 0] == 111
    assert_same(steps, expected[:, 0], "steps")
    assert_same(odd, expected[:, 1], "odd steps")


@jiasu.kernel
def range_sums(start, stop, step, total, count):
    i = jiasu.grid(1)
    if i < start.size:
        t = 0
        c = 0
        for v in range(start[i], stop[i], step[i]):
            t += v
            c += 1
        total[i] = t
        count[i] = c


def test_range_with_any_step(rng):
    n = 20_000
    start = rand_int(rng, n, np.int64, -60, 60)
    stop = rand_int(rng, n, np.int64, -60, 60)
    step = rand_int(rng, n, np.int64, -7, 7, nonzero=True)
    step[step == 1] = rng.choice([-1, 2, 3], size=int((step == 1).sum()))
    start[:4], stop[:4], step[:4] = [10, 0, 5, -3], [0, 10, 5, 3], [-1, 3, -2, 1]
    assert (step < 0).any() and (step > 1).any()
    total, count = poisoned(n, np.int64), poisoned(n, np.int64)
    range_sums[blocks_for(n, 128), 128](jiasu.asarray(start), jiasu.asarray(stop), jiasu.asarray(step), total, count)
    ranges = [range(int(a), int(b), int(c)) for a, b, c in zip(start, stop, step)]
    assert_same(total, np.array([sum(r) for r in ranges], dtype=np.int64), "sum over range(start, stop, step)")
    assert_same(count, np.array([len(r) for r in ranges], dtype=np.int64), "iterations")
    assert (count.get() == 0).any() and (count.get() > 0).any()


@jiasu.kernel
def reverse_rows(a, out, first_visited):
    i = jiasu.grid(1)
    if i < a.shape[0]:
        m = a.shape[1]
        j = 0
        for k in range(m - 1, -1, -1):
            if j == 0:
                first_visited[i] = k
            out[i, j] = a[i, k]
            j += 1
        for k in range(m):
            pass


def test_for_with_negative_step(rng):
    rows, cols = 1000, 37
    a = rand_float(rng, (rows, cols), np.float32, -5, 5)
    out = poisoned((rows, cols), np.float32)
    first = poisoned(rows, np.int64)
    reverse_rows[blocks_for(rows, 64), 64](jiasu.asarray(a), out, first)
    assert_same(out, a[:, ::-1])
    assert_same(first, np.full(rows, cols - 1, dtype=np.int64))


@jiasu.kernel
def horner(x, coeffs, out):
    i = jiasu.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(coeffs.size - 1, -1, -1):
            acc = acc * x[i] + coeffs[k]
        out[i] = acc


def test_polynomial_by_reverse_loop(rng):
    n = 50_000
    x = rand_float(rng, n, np.float64, -1.5, 1.5)
    coeffs = rand_float(rng, 9, np.float64, -2, 2)
    out = poisoned(n, np.float64)
    horner[blocks_for(n, 256), 256](jiasu.asarray(x), jiasu.asarray(coeffs), out)
    assert_rel(out, np.polynomial.polynomial.polyval(x, coeffs), 1e-13)


# ---------------------------------------------------------------- tuple unpacking and array attributes


@jiasu.kernel
def unpack(m, x, y, swapped_x, swapped_y, corner):
    i, j = jiasu.grid(2)
    rows, cols = m.shape
    if i < rows and j < cols:
        a, b = x[i, j], y[i, j]
        a, b = b, a
        swapped_x[i, j] = a
        swapped_y[i, j] = b
        corner[i, j] = m[rows - 1 - i, cols - 1 - j]


def test_tuple_unpacking(rng):
    shape = (45, 70)
    m, x, y = (rand_float(rng, shape, np.float64, -3, 3) for _ in range(3))
    outs = [poisoned(shape, np.float64) for _ in range(3)]
    unpack[(blocks_for(shape[0], 8), blocks_for(shape[1], 32)), (8, 32)](jiasu.asarray(m), jiasu.asarray(x),
                                                                         jiasu.asarray(y), *outs)
    assert_same(outs[0], y, "a after the swap")
    assert_same(outs[1], x, "b after the swap")
    assert_same(outs[2], m[::-1, ::-1], "m[rows-1-i, cols-1-j]")


@jiasu.kernel
def array_attributes(a, v, out):
    if jiasu.grid(1) == 0:
        out[0] = len(a)
        out[1] = a.shape[0]
        out[2] = a.shape[1]
        out[3] = a.shape[2]
        out[4] = a.ndim
        out[5] = a.size
        out[6] = len(v)
        out[7] = v.ndim
        out[8] = v.shape[0]


@pytest.mark.parametrize("shape", [(3, 5, 7), (1, 64, 2), (10, 1, 1)])
def test_len_shape_ndim_size(rng, shape):
    a = jiasu.asarray(rand_float(rng, shape, np.float32))
    v = jiasu.asarray(rand_float(rng, 2 * shape[1] + 1, np.float32))[::2]
    out = poisoned(9, np.int64)
    array_attributes[1, 32](a, v, out)
    expected = [shape[0], *shape, 3, int(np.prod(shape)), shape[1] + 1, 1, shape[1] + 1]
    assert_same(out, np.array(expected, dtype=np.int64))


# ---------------------------------------------------------------- device functions


@jiasu.func
def helper(a, b):
    return a * b + 1


@jiasu.func
def helper_squared_plus(a):
    return helper(a, a) + 0.5


@jiasu.func
def sign(v):
    if v > 0:
        return 1
    elif v < 0:
        return -1
    return 0


@jiasu.func
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@jiasu.kernel
def use_helpers(x, y, out, nested):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = helper(x[i], y[i])
        nested[i] = helper_squared_plus(x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=param_id)
def test_device_functions(rng, dtype):
    n = 70_001
    x, y = rand_float(rng, n, dtype, -3, 3), rand_float(rng, n, dtype, -3, 3)
    out, nested = poisoned(n, dtype), poisoned(n, dtype)
    use_helpers[blocks_for(n, 256), 256](jiasu.asarray(x), jiasu.asarray(y), out, nested)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    tol = 1e-6 if np.dtype(dtype) == np.float32 else 1e-14
    assert out.get().dtype == np.dtype(dtype)
    assert_rel(out, x64 * y64 + 1, tol, "helper(x, y)")
    assert_rel(nested, x64 * x64 + 1.5, tol, "helper_squared_plus(x)")


@jiasu.kernel
def specialised_twice(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = helper(x[i], x[i])


def test_device_function_specialised_per_argument_type(rng):
    n = 5000
    # The signatures are shared by both backends: the other backend's run may have compiled them already.
    assert set(specialised_twice.inspect_cuda()) <= {"(array(float32, 1d, C), array(float32, 1d, C))",
                                                     "(array(float64, 1d, C), array(float64, 1d, C))"}
    for dtype in (np.float32, np.float64):
        x = rand_float(rng, n, dtype, -2, 2)
        out = poisoned(n, dtype)
        specialised_twice[blocks_for(n, 128), 128](jiasu.asarray(x), out)
        tol = 1e-6 if dtype == np.float32 else 1e-14
        assert_rel(out, x.astype(np.float64) ** 2 + 1, tol, f"helper on {np.dtype(dtype)}")
    sources = specialised_twice.inspect_cuda()
    assert len(sources) == 2, list(sources)
    f32_source, f64_source = (sources[k] for k in sorted(sources, key=lambda k: "float64" in k))
    assert "double" in f64_source


@jiasu.kernel
def int_helpers(a, b, signs, gcds, mixed):
    i = jiasu.grid(1)
    if i < a.size:
        signs[i] = sign(a[i])
        gcds[i] = gcd(a[i], b[i])
        # The same function on int32 and on float64 arguments within one kernel.
        mixed[i] = helper(a[i], b[i]) + helper(0.5 * a[i], 2.0)


def test_device_functions_with_branches_loops_and_int_arguments(rng):
    n = 30_000
    a = rand_int(rng, n, np.int32, -5000, 5000)
    a[:3] = [0, 7, -7]
    b = rand_int(rng, n, np.int32, 1, 5000)
    signs, gcds, mixed = poisoned(n, np.int64), poisoned(n, np.int32), poisoned(n, np.float64)
    int_helpers[blocks_for(n, 256), 256](jiasu.asarray(a), jiasu.asarray(b), signs, gcds, mixed)
    assert_same(signs, np.sign(a).astype(np.int64), "sign(a)")
    # Python's % takes the divisor's sign, so gcd(a, b) with b > 0 and a < 0 still ends positive.
    expected_gcd = np.array([math.gcd(int(p), int(q)) for p, q in zip(a, b)], dtype=np.int32)
    assert_same(gcds, expected_gcd, "gcd(a, b)")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_rel(mixed, (a64 * b64 + 1) + (0.5 * a64 * 2.0 + 1), 1e-14, "helper on ints and floats")


@jiasu.func
def fibonacci(n):
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


@jiasu.func
def power_sum(x, k):
    # The base case's return types the recursion (float64), as Numba infers it.
    if k == 0:
        return 1.0
    return x * power_sum(x, k - 1) + 1.0


@jiasu.kernel
def recursive_calls(ns, xs, fib, series):
    i = jiasu.grid(1)
    if i < ns.size:
        fib[i] = fibonacci(ns[i])
        series[i] = power_sum(xs[i], ns[i])


def test_a_device_function_may_call_itself(rng):
    ns = rng.integers(0, 16, size=40)
    xs = rng.uniform(-1.5, 1.5, size=40)
    fib, series = jiasu.asarray(np.full(40, -1)), jiasu.asarray(np.full(40, np.nan))
    recursive_calls[1, 64](jiasu.asarray(ns), jiasu.asarray(xs), fib, series)
    a, b, table = 0, 1, []
    for _ in range(16):
        table.append(a)
        a, b = b, a + b
    np.testing.assert_array_equal(fib.get(), np.array(table)[ns])
    np.testing.assert_allclose(series.get(), [sum(x ** j for j in range(n + 1)) for x, n in zip(xs, ns)], rtol=1e-12)
