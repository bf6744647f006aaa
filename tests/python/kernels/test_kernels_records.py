"""Python-written kernels: NumPy structured (record) arrays and record scalars as arguments. Fields are read and
written in place (r.x, r['x'], r[k]), subarray fields are arrays, records are copied whole; a record scalar is
passed by reference, so the kernel's writes reach it. References are NumPy's own field access on the same data."""
import numpy as np
import pytest

import jiasu

from .kernels_support import rand_float, rand_int

POINT = np.dtype([("x", np.float64), ("n", np.int32), ("z", np.complex64), ("tag", (np.uint8, 5))], align=True)
GRID = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])  # packed, yet every field aligned


def points(rng, n):
    p = np.zeros(n, POINT)
    p["x"] = rand_float(rng, n, np.float64)
    p["n"] = rand_int(rng, n, np.int32, -1000, 1000)
    p["z"] = rand_float(rng, n, np.float32) + 1j * rand_float(rng, n, np.float32)
    p["tag"] = rand_int(rng, (n, 5), np.uint8, 0, 255)
    return p


@jiasu.kernel
def scale_fields(p, factor):
    i = jiasu.grid(1)
    if i < p.shape[0]:
        p[i].x = p[i].x * factor
        p[i]["n"] += 1
        r = p[i]
        r.z = r.z * 1j
        r[3][0] = r.tag[4]


@pytest.mark.parametrize("view", ["structured", "recarray", "strided"])
def test_fields_are_read_and_written_in_place(rng, view):
    base = points(rng, 2 * 37)
    p = base[::2] if view == "strided" else base[:37].copy()
    if view == "recarray":
        p = p.view(np.recarray)
    expected = p.copy()
    expected["x"] *= 2.5
    expected["n"] += 1
    expected["z"] *= 1j
    expected["tag"][:, 0] = expected["tag"][:, 4]
    untouched = base[1::2].copy()
    scale_fields[2, 32](p, 2.5)
    assert (p == expected).all()
    if view == "strided":
        assert (base[1::2] == untouched).all(), "a record between the strided ones was written"


@jiasu.kernel
def copy_records(p, order):
    i = jiasu.grid(1)
    if i < order.size:
        p[i] = p[order[i]]


def test_a_record_is_copied_whole(rng):
    p = points(rng, 8)
    order = np.array([7, 6, 5, 4, 4, 5, 6, 7], np.int64)  # the first half takes the second's, which stays
    expected = p.copy()
    expected[:4] = p[order[:4]]
    copy_records[1, 4](p, order)
    assert (p == expected).all()


@jiasu.kernel
def set_scalar_record(r, x, n):
    r.x = x
    r.n = n
    r.j = 0  # not a field: never compiled (see test below)


@jiasu.kernel
def fill_record(r, x, n, out):
    r.x = x
    r["n"] = n
    out[0] = r.tag[1] + r[1]


def test_a_record_scalar_is_passed_by_reference(rng):
    p = points(rng, 3)
    r = p[1]  # a view of p's second record
    out = np.zeros(1, np.int64)
    fill_record[1, 1](r, 0.75, -17, out)
    assert r["x"] == 0.75 and r["n"] == -17
    assert p[1]["x"] == 0.75 and p[1]["n"] == -17, "the write did not reach the array the record belongs to"
    assert out[0] == int(p[1]["tag"][1]) - 17
    before = p[2].copy()
    p.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fill_record[1, 1](p[2], 0.75, -17, out)
    assert p[2] == before


@jiasu.kernel
def subarray_fields(g, out):
    g.i = 3
    for a in range(3):
        for b in range(2):
            out[a, b] = g.j[a, b]
            g.j[a, b] = a * 10 + b


def test_subarray_fields_are_arrays(rng):
    g = np.zeros(1, GRID)
    g["j"] = rand_float(rng, (1, 3, 2), np.float32)
    before = g["j"][0].copy()
    out = np.zeros((3, 2), np.float32)
    subarray_fields[1, 1](g[0], out)
    np.testing.assert_array_equal(out, before)
    assert g["i"][0] == 3
    np.testing.assert_array_equal(g["j"][0], np.array([[0, 1], [10, 11], [20, 21]], np.float32))


SOURCE = np.dtype([("user", np.float64), ("values", np.int16, (3,))], align=True)
TARGET = np.dtype([("weight", np.float64), ("counts", np.int16, (3,))], align=True)


@jiasu.kernel
def assign_subarray(index, src, dest):
    dest["weight"] = src[index]["user"]
    dest["counts"] = src[index]["values"]


def test_a_subarray_field_is_assigned_an_array(rng):
    src = np.zeros(4, SOURCE)
    src["user"] = rand_float(rng, 4, np.float64)
    src["values"] = rand_int(rng, (4, 3), np.int16, -300, 300)
    dest = np.zeros(2, TARGET)
    assign_subarray[1, 1](2, src, dest[1])
    assert dest[1]["weight"] == src[2]["user"]
    np.testing.assert_array_equal(dest[1]["counts"], src[2]["values"])
    assert (dest[0] == np.zeros(1, TARGET)[0]), "the other record was written"


@jiasu.func
def heavier(p, q):
    if p.x > q.x:
        return p
    return q


@jiasu.func
def total(r):
    return r.x + r.n


@jiasu.kernel
def records_through_device_functions(p, out, sums):
    i = jiasu.grid(1)
    if i + 1 < p.shape[0]:
        out[i] = heavier(p[i], p[i + 1])
        sums[i] = total(p[i])


def test_device_functions_take_and_return_records(rng):
    p = points(rng, 20)
    out = np.zeros(19, POINT)
    sums = np.zeros(19, np.float64)
    records_through_device_functions[1, 32](p, out, sums)
    expected = np.where(p["x"][:-1] > p["x"][1:], p[:-1], p[1:])
    assert (out == expected).all()
    np.testing.assert_allclose(sums, p["x"][:-1] + p["n"][:-1], rtol=1e-15)


def test_records_on_jiasu_arrays_are_refused():
    # A structured dtype is no jiasu array's dtype: converting one says which dtypes are.
    with pytest.raises(TypeError, match="unsupported dtype"):
        jiasu.asarray(np.zeros(3, POINT))


@pytest.mark.parametrize("dtype, message", [
    (np.dtype([("a", np.int8), ("b", np.float64)]), r"record field 'b' \(float64\) is at offset 1"),
    (np.dtype([("b", np.float64), ("a", np.int8)]), "records of 9 bytes would hold fields misaligned"),
    (np.dtype([("inner", POINT)]), "record field 'inner' is itself a record"),
    (np.dtype([("name", "S4")], align=True), "record field 'name'"),
])
def test_records_kernels_cannot_take_are_a_type_error(dtype, message):
    with pytest.raises(TypeError, match=message):
        copy_records[1, 1](np.zeros(2, dtype), np.zeros(2, np.int64))


def test_an_unknown_field_is_a_compile_error():
    with pytest.raises(jiasu.CompileError, match=r"'j' is not a field of record\(x: float64, n: int32"):
        set_scalar_record[1, 1](np.zeros(1, POINT)[0], 1.0, 2)
