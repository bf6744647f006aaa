"""Numba's cuda.mapped_array, cuda.mapped_array_like and cuda.managed_array: NumPy arrays that kernels write in
place. On the CPU backend they are plain host memory, used in place as any NumPy argument; on a GPU the memory
is mapped or managed (tests/python/gpu/test_host_memory.py checks that no copy is made there)."""
import numpy as np
import pytest

import jiasu
from jiasu import cuda

pytestmark = pytest.mark.usefixtures("each_backend")

MAKERS = [cuda.mapped_array, cuda.managed_array]


@cuda.jit
def fill_2d(out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = 10 * i + j


@cuda.jit
def scale_in_place(a, factor):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= factor


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_shape_dtype_order_and_a_kernel_writing_into_it(make, order, each_backend):
    a = make((5, 7), np.float32, order=order)
    assert isinstance(a, np.ndarray) and a.shape == (5, 7) and a.dtype == np.float32
    assert a.flags.writeable and a.flags[f"{order}_CONTIGUOUS"]
    assert a.strides == np.empty((5, 7), np.float32, order=order).strides
    assert cuda.is_cuda_array(a) == (each_backend == "cuda")
    a[...] = -1
    fill_2d[(1, 2), (8, 4)](a)
    cuda.synchronize()
    np.testing.assert_array_equal(a, np.add.outer(10 * np.arange(5), np.arange(7)).astype(np.float32))
    host = a.copy_to_host()
    assert type(host) is np.ndarray and host.flags.owndata
    np.testing.assert_array_equal(host, a)
    into = np.zeros((5, 7), np.float32)
    assert a.copy_to_host(into) is into
    np.testing.assert_array_equal(into, a)


@pytest.mark.parametrize("make", MAKERS)
def test_kernels_see_what_the_host_wrote_and_views_work(make, rng):
    values = rng.standard_normal(100)
    a = make(100)  # float64 by default, as Numba's
    assert a.dtype == np.float64
    a[:] = values
    scale_in_place[1, 128](a, 2.0)
    cuda.synchronize()
    np.testing.assert_array_equal(a, values * 2)
    scale_in_place[1, 128](a[::3], -1.0)  # a strided view of the same memory
    cuda.synchronize()
    expected = values * 2
    expected[::3] *= -1
    np.testing.assert_array_equal(a, expected)


def test_like_and_the_options_numba_takes():
    f = np.asfortranarray(np.zeros((3, 4), np.int16))
    like = cuda.mapped_array_like(f)
    assert like.shape == (3, 4) and like.dtype == np.int16 and like.flags.f_contiguous
    assert cuda.mapped_array_like(np.zeros(6, np.uint8), portable=True, wc=True).shape == (6,)
    assert cuda.mapped_array(4, np.int32, stream=0, portable=True).dtype == np.int32
    assert cuda.managed_array((2, 2), np.complex64, attach_global=False).dtype == np.complex64
    assert cuda.mapped_array((2, 0, 3)).size == 0 and cuda.managed_array(()).shape == ()
    assert cuda.mapped_array(np.int64(3), strides=(8,)).shape == (3,)  # the order's own strides are fine
    assert cuda.managed_array((2, 3), np.float32, strides=(4, 8), order="F").flags.f_contiguous


@pytest.mark.parametrize("make", MAKERS)
def test_bad_arguments_raise_as_device_array_does(make):
    name = make.__name__
    with pytest.raises(ValueError, match=f"cuda.{name}: negative dimensions are not allowed"):
        make((3, -1))
    with pytest.raises(ValueError, match="negative dimensions"):
        cuda.device_array((3, -1))  # the same type of error
    with pytest.raises(NotImplementedError, match=rf"cuda.{name}\(strides=...\) other than C or F order"):
        make((2, 3), strides=(8, 8))
    with pytest.raises(NotImplementedError, match=r"cuda.device_array\(strides=...\)"):
        cuda.device_array((2, 3), strides=(8, 8))
    with pytest.raises(ValueError, match=f"cuda.{name}: order must be 'C' or 'F', not 'K'"):
        make(3, order="K")
    with pytest.raises(TypeError):
        make("three")
    with pytest.raises(TypeError):
        make((2, 1.5))
    with pytest.raises(TypeError, match="data type 'bogus' not understood"):
        make(3, "bogus")


def test_results_computed_from_them_are_ordinary_arrays():
    a = cuda.mapped_array(4)
    a[:] = 1
    b = a + 1
    assert not cuda.is_cuda_array(b)
    np.testing.assert_array_equal(b.copy_to_host(), [2, 2, 2, 2])
    scale_in_place[1, 32](b, 3.0)  # an ordinary NumPy argument: results come back to it
    np.testing.assert_array_equal(b, [6, 6, 6, 6])
    assert jiasu.asarray(b).shape == (4,)
