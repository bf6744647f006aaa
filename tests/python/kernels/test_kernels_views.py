"""Python-written kernels: views of arrays inside kernels (NumPy's basic indexing: a[start:stop:step], a[i] of a
2-D array, a[:, j]), read and written through, passed to device functions and cut from dynamic shared memory.
References are NumPy's own slicing of the same data."""
import numpy as np
import pytest

import jiasu

from .kernels_support import assert_same, poisoned, poisoned_host, rand_float

# Slice bounds that NumPy clamps or wraps: negative, past either end, and every sign of step.
SLICES = [(1, 7, 1), (0, 12, 3), (-3, 100, 1), (-100, 4, 2), (9, 1, -2), (-1, -100, -1), (5, 5, 1), (8, 2, 1),
          (100, -100, -3), (2, -2, 4)]


@jiasu.kernel
def slice_sums(a, bounds, sums, counts):
    t = jiasu.grid(1)
    if t < bounds.shape[0]:
        v = a[bounds[t, 0]:bounds[t, 1]:bounds[t, 2]]
        total = 0.0
        for x in v:
            total += x
        sums[t] = total
        counts[t] = len(v)


def test_slices_follow_numpys_bounds(rng):
    a = rand_float(rng, 10, np.float64, 1, 2)
    bounds = np.array(SLICES, dtype=np.int64)
    sums, counts = poisoned(len(SLICES), np.float64), poisoned(len(SLICES), np.int64)
    slice_sums[1, 32](jiasu.asarray(a), jiasu.asarray(bounds), sums, counts)
    views = [a[s:e:k] for s, e, k in SLICES]
    assert_same(counts, np.array([v.size for v in views], dtype=np.int64), "len of each view")
    np.testing.assert_allclose(sums.get(), [v.sum() for v in views], rtol=1e-14)


@jiasu.kernel
def missing_parts(a, out):
    out[0] = a[3:][0]
    out[1] = a[:3][-1]
    out[2] = a[::-1][0]
    out[3] = a[::3][2]
    out[4] = a[:][5]
    out[5] = a[-2:][0]
    out[6] = len(a[:-4])
    out[7] = len(a[4::-2])


def test_slice_parts_may_be_left_out(rng):
    a = rand_float(rng, 11, np.float32)
    out = poisoned(8, np.float32)
    missing_parts[1, 1](jiasu.asarray(a), out)
    expected = [a[3:][0], a[:3][-1], a[::-1][0], a[::3][2], a[:][5], a[-2:][0], len(a[:-4]), len(a[4::-2])]
    assert_same(out, np.array(expected, dtype=np.float32))


@jiasu.kernel
def rows_and_columns(m, row_sums, column_sums):
    i = jiasu.grid(1)
    if i < m.shape[0]:
        row = m[i]
        total = 0.0
        for j in range(row.shape[0]):
            total += row[j]
        row_sums[i] = total
    if i < m.shape[1]:
        column = m[:, i]
        total = 0.0
        for j in range(column.size):
            total += column[j]
        column_sums[i] = total


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_rows_and_columns_of_a_2d_array(rng, layout):
    m = rand_float(rng, (37, 45), np.float64)
    if layout == "strided":
        m = rand_float(rng, (74, 90), np.float64)[::2, ::-2]
    rows, columns = poisoned(m.shape[0], np.float64), poisoned(m.shape[1], np.float64)
    rows_and_columns[1, 64](jiasu.asarray(m), rows, columns)
    # Sums of values in [-1, 1) may come near zero: their rounding is compared absolutely there.
    np.testing.assert_allclose(rows.get(), m.sum(axis=1), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(columns.get(), m.sum(axis=0), rtol=1e-13, atol=1e-13)


@jiasu.kernel
def write_through(a, cube):
    i = jiasu.grid(1)
    tail = a[2:]
    if i < tail.size:
        tail[i] = i * 10
    plane = cube[1]
    if i < plane.shape[0]:
        plane[i, -1] += 1
    odd = a[1::2]
    if i == 0:
        odd[0] = -5


def test_writes_through_a_view_reach_the_array():
    a = np.full(9, -1, dtype=np.int32)
    cube = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    expected_a, expected_cube = a.copy(), cube.copy()
    expected_a[2:] = np.arange(7) * 10
    expected_a[1] = -5
    expected_cube[1, :, -1] += 1
    da, dcube = jiasu.asarray(a), jiasu.asarray(cube)
    write_through[1, 16](da, dcube)
    assert_same(da, expected_a)
    assert_same(dcube, expected_cube)


@jiasu.func
def dot(u, v):
    total = 0.0
    for k in range(u.size):
        total += u[k] * v[k]
    return total


@jiasu.kernel
def halves_in_shared_memory(x, n, out):
    buffer = jiasu.shared.array(0, np.float32)
    first = buffer[0:n]
    second = buffer[n:2 * n]
    i = jiasu.threadIdx.x
    if i < n:
        first[i] = x[i]
        second[i] = x[n + i]
    jiasu.syncthreads()
    if i == 0:
        out[0] = dot(first, second)
        out[1] = dot(x[:n], x[n:])
        out[2] = dot(x[::2], x[1::2])


def test_views_of_dynamic_shared_memory_and_device_function_arguments(rng):
    n = 24
    x = rand_float(rng, 2 * n, np.float32)
    out = poisoned(3, np.float32)
    halves_in_shared_memory[1, 32, 0, 2 * n * 4](jiasu.asarray(x), n, out)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out.get(), [x64[:n] @ x64[n:], x64[:n] @ x64[n:], x64[::2] @ x64[1::2]], rtol=1e-5,
                               atol=1e-5)  # float32 products: near zero, an absolute bound


@jiasu.kernel
def view_of_a_view(a, out):
    v = a[1:]
    v = v[1:]
    w = v[::2]
    out[0] = v[0]
    out[1] = w[1]
    out[2] = len(w)


def test_a_view_of_a_view(rng):
    a = rand_float(rng, 10, np.float64)
    out = poisoned(3, np.float64)
    view_of_a_view[1, 1](jiasu.asarray(a), out)
    w = a[1:][1:][::2]
    assert_same(out, np.array([a[2], w[1], len(w)]))


@jiasu.kernel
def zero_step(a, step, out):
    out[0] = len(a[::step])


def test_a_zero_step_held_in_a_variable_gives_an_empty_view():
    # A literal zero step is a compile error (below); one only known at run time must not fault the device.
    out = poisoned(1, np.int64)
    zero_step[1, 1](jiasu.arange(5, dtype=np.float32), 0, out)
    assert_same(out, np.array([0]))


@jiasu.kernel
def assign_to_a_slice(a):
    a[1:3] = 0.0


@jiasu.kernel
def literal_zero_step(a, out):
    out[0] = a[::0][0]


@pytest.mark.parametrize("kernel, outputs, message", [
    (assign_to_a_slice, 0, "cannot assign to a view of array(float32, 1d, C) 'a'"),
    (literal_zero_step, 1, "slice step cannot be zero"),
])
def test_slice_errors_point_at_the_source(kernel, outputs, message):
    args = [jiasu.asarray(poisoned_host(4, np.float32))] + [poisoned(1, np.float32)] * outputs
    with pytest.raises(jiasu.CompileError) as caught:
        kernel[1, 1](*args)
    assert message in str(caught.value)
    assert __file__ in str(caught.value)


@jiasu.kernel
def reshaped(a, shape, out2, out3):
    m = a.reshape(shape)  # a tuple argument: two axes
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            out2[i, j] = m[i, j]
    c = a.reshape(2, -1, 3)  # integers, one of them -1
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            for k in range(c.shape[2]):
                out3[i, j, k] = c[i, j, k]
    m[0, 1] = -1.0  # written through the view, into a


def test_reshape_views_a_contiguous_array(rng):
    host = rand_float(rng, 24, np.float64)
    a = jiasu.asarray(host)
    out2, out3 = poisoned((4, 6), np.float64), poisoned((2, 4, 3), np.float64)
    reshaped[1, 1](a, (4, 6), out2, out3)
    assert_same(out2, host.reshape(4, 6))
    assert_same(out3, host.reshape(2, -1, 3))
    expected = host.copy()
    expected[1] = -1.0
    assert_same(a, expected)


@jiasu.kernel
def reinterpreted(raw, start, words, halves):
    w = raw[start:start + 8].view(np.int32)  # a slice's bytes as two int32
    words[0] = w[0]
    words[1] = w[1]
    words[2] = len(w)
    h = words.view(np.int16)
    for i in range(h.shape[0]):
        halves[i] = h[i]


def test_view_reinterprets_the_bytes():
    raw = np.arange(64, dtype=np.uint8) * np.uint8(7)
    for start in (0, 4, 12):  # int32-aligned, as the GPU needs
        words, halves = poisoned(3, np.int32), poisoned(6, np.int16)
        reinterpreted[1, 1](jiasu.asarray(raw), start, words, halves)
        expected_words = raw[start:start + 8].view(np.int32)
        assert_same(words, np.array([expected_words[0], expected_words[1], 2], np.int32))
        assert_same(halves, np.array([expected_words[0], expected_words[1], 2], np.int32).view(np.int16))


def test_reshape_and_view_errors():
    @jiasu.kernel
    def strided(a, out):
        out[0] = a[::2].reshape(2, 2)[0, 0]

    with pytest.raises(jiasu.CompileError, match="reshape.. needs a C-contiguous array, not array"):
        strided[1, 1](jiasu.asarray(np.zeros(8)), jiasu.asarray(np.zeros(1)))

    @jiasu.kernel
    def not_a_dtype(a, out):
        out[0] = a.view(3)[0]

    with pytest.raises(jiasu.CompileError, match="view.. takes a dtype such as np.int32"):
        not_a_dtype[1, 1](jiasu.asarray(np.zeros(8)), jiasu.asarray(np.zeros(1)))
