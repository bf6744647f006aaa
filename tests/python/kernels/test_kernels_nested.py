"""Python-written kernels: functions defined inside kernels and device functions (nested defs), which capture
the constants of their function, are called directly and passed to device functions; `*args` parameters and
`*t` arguments."""
import math

import numpy as np

import jiasu

from .kernels_support import assert_rel, assert_same, blocks_for, poisoned, rand_float, rand_int

OFFSET = 3


@jiasu.func
def apply(func, *args):
    return func(*args)


@jiasu.func
def apply_twice(func, x):
    return func(func(x))


@jiasu.func
def count(*values):
    return len(values)


@jiasu.kernel
def nested_affine(x, out):
    scale = 2.5
    shift = -1

    def affine(v):
        return scale * v + shift + OFFSET

    i = jiasu.grid(1)
    if i < x.size:
        out[i] = affine(x[i])


def test_nested_function_captures_constants(rng):
    n = 10_007
    x = rand_float(rng, n, np.float32, -4, 4)
    out = poisoned(n, np.float32)
    nested_affine[blocks_for(n, 128), 128](jiasu.asarray(x), out)
    assert_rel(out, 2.5 * x.astype(np.float64) - 1 + OFFSET, 1e-6)


@jiasu.kernel
def nested_passed_along(x, out):
    def square(v):
        return v * v

    def hypot(a, b):
        def root(v):
            return math.sqrt(v)

        return root(square(a) + square(b))

    i = jiasu.grid(1)
    if i < x.shape[0]:
        out[i, 0] = apply(square, x[i])
        out[i, 1] = apply(hypot, x[i], 2.0)
        out[i, 2] = apply_twice(square, x[i])
        out[i, 3] = apply(hypot, *(x[i], x[i]))


def test_nested_functions_are_called_and_passed_to_device_functions(rng):
    n = 4_099
    x = rand_float(rng, n, np.float64, -3, 3)
    out = poisoned((n, 4), np.float64)
    nested_passed_along[blocks_for(n, 64), 64](jiasu.asarray(x), out)
    ref = np.stack([x * x, np.hypot(x, 2.0), x ** 4, np.hypot(x, x)], axis=1)
    assert_rel(out, ref, 1e-14)


@jiasu.kernel
def variadic_sums(a, b, out):
    i = jiasu.grid(1)
    if i < a.size:
        pair = (a[i], b[i])

        def add3(p, q, r):
            return p + q + r

        out[i, 0] = count()
        out[i, 1] = count(a[i], 1.5)
        out[i, 2] = apply(add3, *pair, 5)


def test_variadic_device_function(rng):
    n = 5_003
    a = rand_int(rng, n, np.int64, -1000, 1000)
    b = rand_int(rng, n, np.int64, -1000, 1000)
    out = poisoned((n, 3), np.int64)
    variadic_sums[blocks_for(n, 128), 128](jiasu.asarray(a), jiasu.asarray(b), out)
    assert_same(out, np.stack([np.zeros(n, np.int64), np.full(n, 2), a + b + 5], axis=1))
