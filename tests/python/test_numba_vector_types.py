"""Numba's CUDA vector types in kernels (``cuda.float32x4``, ``cuda.int2``, ...): made from numbers and other
vectors, read through ``.x``/``.y``/``.z``/``.w``, spelled through the module or captured, on both backends."""
import numpy as np
import pytest

from jiasu import cuda

pytestmark = pytest.mark.usefixtures("each_backend")

v2 = cuda.double2  # a global alias: float64x2


@cuda.jit
def combine(out, xs):
    i = cuda.grid(1)
    if i < xs.size:
        a = cuda.float32x2(xs[i], 2 * xs[i])
        b = cuda.float32x4(a, 1, cuda.float32x1(xs[i] - 1))
        c = v2(b.w, b.x + b.y)
        out[i, 0] = b.x
        out[i, 1] = b.y
        out[i, 2] = b.z
        out[i, 3] = b.w
        out[i, 4] = c.x * c.y


def test_vectors_from_numbers_and_vectors(rng):
    xs = rng.standard_normal(100).astype(np.float32)
    out = np.zeros((100, 5))
    combine.forall(100)(out, xs)
    x = xs.astype(np.float64)
    two_x = (2 * xs).astype(np.float64)
    w = (xs - np.float32(1)).astype(np.float64)
    expected = np.stack([x, two_x, np.ones(100), w, w * (xs + 2 * xs).astype(np.float64)], 1)
    np.testing.assert_array_equal(out, expected)


def test_on_the_host_they_say_where_they_work():
    with pytest.raises(TypeError, match="works inside kernels only"):
        cuda.float32x4(1, 2, 3, 4)
    with pytest.raises(TypeError, match="works inside kernels only"):
        v2(1.0, 2.0)
