"""Kernels and device functions for test_kernel_frontend.py and test_kernel_errors.py.

jiasu compiles a kernel from its source text (read with ``inspect``), so every sample lives in a real file.
Kernels here are plain functions: the tests wrap them with ``jiasu.kernel(fn)`` themselves, so each test
gets a fresh kernel object and still has the Python function for ``fn.__code__.co_firstlineno``. Device
functions are ``@jiasu.func`` objects (their Python function is ``f.__wrapped__``).

Nothing here runs: the kernels are only specialised (front end + CUDA emission) and compiled to PTX.
Keep each statement on one line unless a test says otherwise; the tests find the lines with Python's ast.
"""
import math

import numpy as np

import jiasu

N = 4
SCALE = 0.5
SIZES = (2, 3)
REAL = np.float32


# ------------------------------------------------------------------ statements and operators


def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def statements(x, out, n):
    """A docstring is skipped."""
    i = jiasu.grid(1)
    if i >= out.size:
        return
    acc = 0.0
    for j in range(n):
        if j == 2:
            continue
        elif j > 5:
            break
        else:
            pass
        acc += x[j]  # a trailing comment stays in the line comment
    k = 0
    while k < 3:
        k += 1
    for m in range(10, 0, -2):
        k -= m
    for m in range(2, n):
        k += m
    a, b = 1, 2
    a, b = b, a
    t = (1, 2.5)
    v = x[i] if i > 0 else -x[i]
    out[i] = acc + v + a * b + t[1] + k; out[0] = 1.0


def int_operators(a, b, out):
    i = jiasu.grid(1)
    x = a[i]
    y = b[i]
    r = x + y - x * y
    r += x // y + x % y + x ** 2
    r ^= (x & y) | (x ^ y) | (x << 2) | (y >> 1) | ~x
    r -= -x + +y
    r *= 3
    r //= 2
    r %= 1000
    r **= 1
    r <<= 1
    r >>= 1
    r &= 0xFFFF
    r |= 1
    q = x / y
    c = 0 <= x < y != 7
    d = (x > 0 and y > 0) or not (x == y)
    out[i] = r + int(q) + int(c) + int(d)


def float_operators(a, b, out):
    i = jiasu.grid(1)
    x = a[i]
    y = b[i]
    r = x + y - x * y / (y + 1.0)
    r += x // y + x % y + x ** 2.0
    r -= -x
    r *= 1.5
    r /= 2.0
    r //= 1.0
    r %= 7.0
    r **= 1.0
    c = x <= y or x >= y and x != y
    out[i] = r if c else y


def builtins(a, out, n):
    i = jiasu.grid(1)
    x = a[i]
    lo = min(x, 1.0)
    hi = max(x, 0.0, lo)
    s = abs(x) + abs(-3)
    r = round(x) + round(x, 2)
    m = len(a) + len(a.shape) + a.ndim + a.shape[0] + a.size
    c = int(x) + int(float(n)) + int(bool(x))
    for j in range(n):
        c += j
    out[i] = lo + hi + s + r + m + c + float(c)


def math_functions(a, out):
    i = jiasu.grid(1)
    x = a[i]
    r = math.sqrt(x) + math.exp(x) + math.log(x) + math.log2(x) + math.log10(x) + math.log1p(x) + math.expm1(x)
    r += math.sin(x) + math.cos(x) + math.tan(x) + math.asin(x) + math.acos(x) + math.atan(x) + math.atan2(x, 1.0)
    r += math.sinh(x) + math.cosh(x) + math.tanh(x) + math.pow(x, 2.0) + math.fabs(x)
    r += math.floor(x) + math.ceil(x) + math.trunc(x) + math.fmod(x, 2.0) + math.copysign(x, -1.0)
    r += math.hypot(x, 3.0) + math.erf(x) + math.erfc(x)
    r += math.pi + math.e + np.sqrt(x) + np.arctan2(x, 1.0) + np.abs(x)
    b = math.isnan(x) or math.isinf(x) or not math.isfinite(x)
    if b:
        r = math.nan
    if r > 1e30:
        r = math.inf
    out[i] = r


def casts(a, out):
    i = jiasu.grid(1)
    x = a[i]
    h = jiasu.float16(x)
    g = jiasu.bfloat16(x)
    f = np.float32(x) + jiasu.float32(h) + np.float32(g)
    k = np.int32(x) + jiasu.uint8(x) + np.int64(f)
    out[i] = np.float64(f) + k + REAL(1)


def globals_and_constants(a, out):
    i = jiasu.grid(1)
    s = jiasu.shared.array(SIZES[0] * N, REAL)
    s[0] = a[i] * SCALE
    out[i] = s[0] + N + SIZES[1] + len(SIZES)


# ------------------------------------------------------------------ GPU intrinsics


def intrinsics(out):
    i = jiasu.grid(1)
    r, c = jiasu.grid(2)
    x, y, z = jiasu.grid(3)
    n = jiasu.gridsize(1)
    nr, nc = jiasu.gridsize(2)
    t = jiasu.threadIdx.x + jiasu.threadIdx.y + jiasu.threadIdx.z
    t += jiasu.blockIdx.x + jiasu.blockIdx.y + jiasu.blockIdx.z
    t += jiasu.blockDim.x + jiasu.blockDim.y + jiasu.blockDim.z
    t += jiasu.gridDim.x + jiasu.gridDim.y + jiasu.gridDim.z
    t += jiasu.laneid + jiasu.warpsize
    jiasu.syncthreads()
    count = jiasu.syncthreads_count(t > 0)
    every = jiasu.syncthreads_and(t > 0)
    some = jiasu.syncthreads_or(t > 0)
    jiasu.threadfence()
    jiasu.threadfence_block()
    jiasu.threadfence_system()
    out[i] = i + r + c + x + y + z + n + nr + nc + t + count + int(every) + int(some)


def atomics(f, d, ints, uints, grid2, out):
    i = jiasu.grid(1)
    old = jiasu.atomic.add(f, 0, 1.0)
    old += jiasu.atomic.sub(f, 1, 2.0)
    old += jiasu.atomic.max(d, 0, 3.0)
    old += jiasu.atomic.min(d, 1, -3.0)
    k = jiasu.atomic.and_(ints, 0, 6)
    k += jiasu.atomic.or_(ints, 1, 1)
    k += jiasu.atomic.xor(ints, 2, 3)
    k += jiasu.atomic.exch(ints, 3, 4)
    k += jiasu.atomic.cas(ints, 4, 0, 1)
    u = jiasu.atomic.inc(uints, 0, 10)
    u += jiasu.atomic.dec(uints, 1, 10)
    k += jiasu.atomic.add(grid2, (i, 0), 1)
    out[i] = old + k + u


def warp_ops(x, out):
    i = jiasu.grid(1)
    v = x[i]
    jiasu.syncwarp()
    jiasu.syncwarp(0xFFFFFFFF)
    v += jiasu.shfl_sync(0xFFFFFFFF, v, 0)
    v += jiasu.shfl_up_sync(0xFFFFFFFF, v, 1)
    v += jiasu.shfl_down_sync(0xFFFFFFFF, v, 1)
    v += jiasu.shfl_xor_sync(0xFFFFFFFF, v, 16)
    mask = jiasu.ballot_sync(0xFFFFFFFF, v > 0)
    some = jiasu.any_sync(0xFFFFFFFF, v > 0)
    every = jiasu.all_sync(0xFFFFFFFF, v > 0)
    active = jiasu.activemask()
    out[i] = v + mask + int(some) + int(every) + active


def bit_ops(a, f, out):
    i = jiasu.grid(1)
    x = a[i]
    n = jiasu.popc(x) + jiasu.clz(x) + jiasu.ffs(x)
    r = jiasu.brev(x)
    g = jiasu.fma(f[i], f[i], 1.0)
    out[i] = n + r + np.uint32(g)


def shared_and_local(a, out):
    tile = jiasu.shared.array((16, 16), np.float32)
    row = jiasu.local.array(4, np.int32)
    cube = jiasu.local.array(shape=(2, 2, 2), dtype=np.float64)
    tx = jiasu.threadIdx.x
    ty = jiasu.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    for k in range(4):
        row[k] = k
    cube[1, 1, 1] = 2.0
    jiasu.syncthreads()
    out[ty, tx] = tile[tx, ty] + row[3] + cube[1, 1, 1] + tile.shape[0] + len(row)


def dynamic_shared(a, out):
    buffer = jiasu.shared.array(0, np.float32)
    i = jiasu.threadIdx.x
    buffer[i] = a[i]
    jiasu.syncthreads()
    out[i] = buffer[jiasu.blockDim.x - 1 - i]


def indexing(cube, out):
    i, j, k = jiasu.grid(3)
    if i < cube.shape[0] and j < cube.shape[1] and k < cube.shape[2]:
        out[i, j, k] = cube[i, j, k] + cube[-1, -1, -1]


def strided(a, out):
    i, j = jiasu.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * 2.0


def views(a, grid2, out):
    buffer = jiasu.shared.array(0, np.float32)
    i = jiasu.threadIdx.x
    first = buffer[0:4]
    second = buffer[4:8]
    first[i % 4] = a[i]
    second[i % 4] = 2.0 * a[i]
    jiasu.syncthreads()
    tail = a[1::2]
    row = grid2[i % 2]
    column = grid2[:, -1]
    out[i] = first[i % 4] + second[3 - i % 4] + tail[0] + row[1] + column[0] + len(tail)


def records(points, one, out):
    i = jiasu.grid(1)
    p = points[i]
    p.x = p["x"] * 2.0 + one.w[1, 0]
    points[i - 1] = p
    one.count += 1
    out[i] = p[1] + len(points[::2])


@jiasu.func
def fibonacci(n):
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


def recursion(ns, out):
    i = jiasu.grid(1)
    out[i] = fibonacci(ns[i])


# ------------------------------------------------------------------ device functions


@jiasu.func
def square(x):
    return x * x


@jiasu.func
def sum_of_squares(x, y):
    return square(x) + square(y)


@jiasu.func
def clamp(x, lo, hi):
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x


@jiasu.func
def store(arr, i, v):
    arr[i] = v


class SampleError(Exception):
    pass


@jiasu.func
def checked_root(x):
    if x < 0:
        raise ValueError("negative")
    return math.sqrt(x)


def raises_and_tuples(a, out, k):
    i = jiasu.grid(1)
    if i >= out.size:
        raise SampleError
    total = a.shape[-k] + checked_root(a[i])
    for j, size in enumerate(SIZES):
        total += j * size
    out[i] = total


def device_calls(a, b, out32, out64):
    i = jiasu.grid(1)
    out32[i] = sum_of_squares(a[i], a[i])
    out64[i] = sum_of_squares(b[i], b[i])
    store(out32, 0, clamp(a[i], np.float32(0), np.float32(1)))
    out64[0] = square(b[i]) + clamp(x=b[i], lo=0.0, hi=1.0)


@jiasu.func
def apply(func, *args):
    return func(*args)


def nested_functions(a, out):
    lo = 0.25

    def clip(v):
        return max(v, lo)

    def scaled(v, k):
        return clip(v) * k

    i = jiasu.grid(1)
    out[i] = apply(scaled, a[i], 3) + clip(a[i]) + apply(clip, *(a[i],))


# ------------------------------------------------------------------ dtypes and NumPy promotion


def half_math(h, b, out_h, out_b):
    i = jiasu.grid(1)
    out_h[i] = h[i] * 2.0 + math.sqrt(h[i]) - h[i] / 3
    out_b[i] = b[i] * 2.0 + math.exp(b[i]) + 1


def scale_by(x, out, s):
    i = jiasu.grid(1)
    out[i] = x[i] * s


def times_two(x, out):
    i = jiasu.grid(1)
    out[i] = x[i] * 2.0


def int8_plus_one(x, out):
    i = jiasu.grid(1)
    out[i] = x[i] + 1


def store_scalar(out, s):
    out[0] = s


def copy(x, out):
    i = jiasu.grid(1)
    out[i] = x[i]


@jiasu.kernel
def decorated(x, out):
    i = jiasu.grid(1)
    out[i] = x[i] + 1
