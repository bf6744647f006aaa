"""cuda.mapped_array and cuda.managed_array on a GPU: kernels read and write the host array in place, with no
copies, and the host sees their results after cuda.synchronize()."""
import warnings

import numpy as np
import pytest

import jiasu
from jiasu import cuda

pytestmark = pytest.mark.gpu

MAKERS = {
    "mapped": cuda.mapped_array,
    "mapped_portable": lambda *a, **k: cuda.mapped_array(*a, portable=True, **k),
    "mapped_wc": lambda *a, **k: cuda.mapped_array(*a, wc=True, **k),
    "managed": cuda.managed_array,
    "managed_host_attached": lambda *a, **k: cuda.managed_array(*a, attach_global=False, **k),
}


@cuda.jit
def affine(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


@cuda.jit
def count_up(counter, rounds):
    # Each launch adds 1 to every element: a copy made at launch and written back would still pass, so the
    # tests below also check what the kernel reads after the host writes.
    i = cuda.grid(1)
    if i < counter.size:
        for _ in range(rounds):
            counter[i] += 1


@pytest.fixture(autouse=True)
def _backend():
    with jiasu.backend("cuda"):
        yield


@pytest.mark.parametrize("kind", MAKERS)
def test_a_kernel_writes_into_the_host_array_in_place(kind, rng):
    make = MAKERS[kind]
    n = 10_000
    x, out = make(n, np.float32), make(n, np.float32)
    values = rng.standard_normal(n).astype(np.float32)
    x[:] = values  # written by the host after creation: the kernel must see it
    out[:] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", jiasu.PerformanceWarning)  # a staged NumPy argument would warn
        affine[(n + 255) // 256, 256](x, out, np.float32(3), np.float32(1))
    cuda.synchronize()
    # The GPU may fuse a * x + b into one rounding (an FMA), where NumPy rounds twice: compare with the exact
    # result in float64, within float32's rounding.
    np.testing.assert_allclose(out, 3.0 * values.astype(np.float64) + 1.0, rtol=1e-6, atol=1e-6)
    # The host changes the input again; the next launch reads the new values from the same memory.
    x[::2] = 0
    affine[(n + 255) // 256, 256](x, out, np.float32(1), np.float32(0))
    cuda.synchronize()
    expected = values.copy()
    expected[::2] = 0
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("kind", ["mapped", "managed"])
def test_no_copy_is_made(kind):
    make = MAKERS[kind]
    counter = make((64, 32), np.int64)
    counter[...] = 5
    device = jiasu.asarray(counter)  # a view of the same memory, not a copy
    assert device.ptr == counter.__cuda_array_interface__["data"][0]
    assert device.device == jiasu.get_device()
    count_up[64 * 32 // 128, 128](counter.reshape(-1), 2)
    cuda.synchronize()
    np.testing.assert_array_equal(counter, np.full((64, 32), 7))
    np.testing.assert_array_equal(device.get(), np.full((64, 32), 7))  # the jiasu view reads the same memory
    device[3] = -1  # written through the view: the host array has it
    cuda.synchronize()
    assert (counter[3] == -1).all() and (counter[4] == 7).all()
    column = counter[:, 5]  # a strided view: its own device address, inside the same memory
    count_up[1, 64](column, 10)
    cuda.synchronize()
    assert column.__cuda_array_interface__["strides"] == (32 * 8,)
    np.testing.assert_array_equal(counter[:, 5], np.r_[[17, 17, 17, 9], np.full(60, 17)])
    np.testing.assert_array_equal(counter[:, 6], np.r_[[7, 7, 7, -1], np.full(60, 7)])


def test_raw_kernels_take_them_too(add_kernel, rng):
    n = 1000
    x, y, out = (cuda.mapped_array(n, np.float32) for _ in range(3))
    x[:], y[:] = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    add_kernel((n + 127) // 128, 128, (x, y, out, np.int32(n)))
    cuda.synchronize()
    np.testing.assert_array_equal(out, x + y)


def test_the_memory_outlives_the_array_while_a_view_holds_it(healthy):
    a = cuda.managed_array(1 << 20, np.float64)
    a[:] = 2.5
    view = jiasu.asarray(a[10:20])
    del a
    np.testing.assert_array_equal(view.get(), np.full(10, 2.5))
    healthy()
