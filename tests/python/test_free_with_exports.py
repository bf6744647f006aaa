"""free() while NumPy views, DLPack consumers or interface consumers hold a CPU array's memory.

free() ends jiasu's own use of the memory at once (the array and its jiasu views raise), and the memory
itself goes back when the last export is gone, so an export never reads or writes freed memory.
"""
import gc
import weakref

import numpy as np
import pytest

import jiasu

N = 512  # 4 KiB of float64: small enough that a freed block is handed straight out again


def churn():
    """Allocate and fill blocks of N float64 (jiasu's and NumPy's), which would reuse freed memory."""
    return [jiasu.full(N, -7.0, device="cpu") for _ in range(8)] + [np.full(N, -7.0) for _ in range(8)]


def values():
    return np.arange(N, dtype=np.float64) * 0.5 + 1


EXPORTS = {
    "np.asarray": np.asarray,
    "np.from_dlpack": np.from_dlpack,
    "memoryview": lambda a: np.asarray(memoryview(a)),
}


@pytest.mark.parametrize("export", EXPORTS)
def test_an_export_outlives_free(export):
    a = jiasu.asarray(values(), device="cpu")
    view = EXPORTS[export](a)
    a.free()
    junk = churn()
    np.testing.assert_array_equal(view, values())
    view[:] = -1.0  # the memory is still there to be written
    np.testing.assert_array_equal(view, np.full(N, -1.0))
    for j in junk[:8]:
        np.testing.assert_array_equal(j.get(), np.full(N, -7.0))  # and no one else got it
    with pytest.raises(jiasu.InvalidArrayError):
        a.get()


@pytest.mark.parametrize("export", EXPORTS)
def test_an_export_of_a_view_outlives_free_of_the_base(export):
    a = jiasu.asarray(values(), device="cpu")
    view = EXPORTS[export](a[N // 2:])
    a.free()
    churn()
    np.testing.assert_array_equal(view, values()[N // 2:])


@pytest.mark.parametrize("export", EXPORTS)
def test_an_export_outlives_free_through_a_view(export):
    a = jiasu.asarray(values(), device="cpu")
    view = EXPORTS[export](a)
    a[1:].free()  # frees the memory every view shares
    churn()
    np.testing.assert_array_equal(view, values())
    with pytest.raises(jiasu.InvalidArrayError):
        a.get()


def test_freed_arrays_refuse_new_exports():
    a = jiasu.asarray(values(), device="cpu")
    a.free()
    for export in EXPORTS.values():
        with pytest.raises(jiasu.InvalidArrayError):
            export(a)
    with pytest.raises(jiasu.InvalidArrayError):
        a.__array_interface__
    with pytest.raises(jiasu.InvalidArrayError):
        a.__dlpack__()
    empty = jiasu.zeros(0, device="cpu")
    empty.free()
    with pytest.raises(jiasu.InvalidArrayError):
        np.asarray(empty)


# The memory goes back when the last export ends, not later: a NumPy array adopted in place stands for it,
# its weak reference telling when jiasu lets it go.


def adopted():
    source = values()
    a = jiasu.from_dlpack(source)  # CPU memory owned by `source`, which the array keeps alive
    gone = weakref.ref(source)
    del source
    gc.collect()
    assert gone() is not None
    return a, gone


def test_free_without_exports_lets_go_at_once():
    a, gone = adopted()
    a.free()
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("export", EXPORTS)
def test_free_lets_go_when_the_last_export_ends(export):
    a, gone = adopted()
    first, second = EXPORTS[export](a), EXPORTS[export](a[3:])
    a.free()
    gc.collect()
    assert gone() is not None
    np.testing.assert_array_equal(second, values()[3:])
    del first
    gc.collect()
    assert gone() is not None
    del second
    gc.collect()
    assert gone() is None  # while `a` itself lives on


def test_array_interface_consumers_keep_the_memory_while_the_array_lives():
    # __array_interface__'s consumers keep the array object instead of saying when they are done.
    a, gone = adopted()
    interface = a.__array_interface__
    a.free()
    gc.collect()
    assert gone() is not None
    reread = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_double * N).from_address(interface["data"][0]))
    np.testing.assert_array_equal(reread, values())
    del a, reread
    gc.collect()
    assert gone() is None


# ---------------------------------------------------------------- the buffer protocol itself


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                   "float16", "float32", "float64", "complex64", "complex128"])
def test_buffer_views_match_numpy(dtype):
    host = (np.arange(24) % 5).astype(dtype).reshape(4, 6)
    a = jiasu.asarray(host, device="cpu")
    for key in (np.s_[:, :], np.s_[1:, ::2], np.s_[::-1, 3], np.s_[2, ::-2]):
        expected = host[key]
        view = np.asarray(a[key])
        assert view.dtype is np.dtype(dtype)
        assert view.shape == expected.shape and view.strides == expected.strides
        np.testing.assert_array_equal(view, expected)
        m = memoryview(a[key])
        assert (m.format, m.itemsize, m.shape, m.strides) == (memoryview(expected).format, expected.itemsize,
                                                              expected.shape, expected.strides)
        assert not m.readonly


def test_buffer_views_write_through():
    a = jiasu.zeros((3, 4), dtype=np.int32, device="cpu")
    view = np.asarray(a)
    assert view.flags.writeable
    view[1, ::2] = [5, 6]
    expected = np.zeros((3, 4), np.int32)
    expected[1, ::2] = [5, 6]
    np.testing.assert_array_equal(a.get(), expected)


def test_buffer_requests_it_cannot_serve_raise_buffer_error():
    a = jiasu.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device="cpu")
    np.testing.assert_array_equal(np.frombuffer(a, np.float32), np.arange(12, dtype=np.float32))  # contiguous
    with pytest.raises(BufferError, match="not C-contiguous"):
        np.frombuffer(a[:, ::2], np.float32)  # a plain buffer needs contiguous memory
    assert bytes(memoryview(jiasu.zeros(0, device="cpu"))) == b""
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    b = jiasu.asarray(np.arange(3, dtype=bf16), device="cpu")
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(b)
    np.testing.assert_array_equal(np.asarray(b), np.arange(3, dtype=bf16))  # NumPy copies it instead


# ---------------------------------------------------------------- GPU arrays (against the stand-in driver)

from test_launch_paths import fake_driver, run_with_fake  # noqa: E402,F401  (a fixture and its runner)


def test_gpu_exports_outlive_free(fake_driver, tmp_path):
    # jiasu itself as the consumer: a DLPack import and a __cuda_array_interface__ import of array `a`.
    out = run_with_fake(fake_driver, tmp_path, """
        n = 512
        values = np.arange(n) * 0.5 + 1

        class ThroughDLPack:
            def __init__(self, a):
                self.producer = a

            def __dlpack__(self, **options):
                capsule = self.producer.__dlpack__(**options)
                del self.producer  # the capsule alone holds the memory from here on
                return capsule

            def __dlpack_device__(self):
                return (2, 0)

        class ThroughInterface:  # holds the producer, as the CUDA Array Interface asks of consumers
            def __init__(self, a):
                self.producer, self.__cuda_array_interface__ = a, a.__cuda_array_interface__

        for wrap in (ThroughDLPack, ThroughInterface):
            a = jiasu.asarray(values)
            b = jiasu.asarray(wrap(a))
            a.free()
            junk = [jiasu.asarray(np.full(n, -7.0)) for _ in range(8)]  # (the stand-in has no 8-byte fill)
            print(wrap.__name__, np.array_equal(b.get(), values), error_of(a.get))
            b.set(np.full(n, -1.0))  # a host write (the stand-in driver runs no kernels)
            print(np.array_equal(b.get(), np.full(n, -1.0)), all(np.array_equal(j.get(), np.full(n, -7.0)) for j in junk))
        freed = jiasu.zeros(4)
        freed.free()
        print(error_of(freed.__dlpack__))
        print(error_of(lambda: freed.__cuda_array_interface__))
        print(error_of(lambda: memoryview(jiasu.zeros(4))))
    """)
    freed = "InvalidArrayError: this array's memory was freed (Array.free()); it can no longer be used"
    assert out == ["ThroughDLPack True " + freed, "True True", "ThroughInterface True " + freed, "True True",
                   freed, freed, "BufferError: a jiasu array on a GPU has no host buffer; copy it to the host with .get()"]
