"""Bad values given to jiasu's Python API raise the conventional exception, naming what was wrong and the
value given (however large), and never a generic "wrong type" message. All of it runs without a GPU: a
launch configuration is checked when k[...] is made, indices and shapes before any memory is touched."""
import re

import numpy as np
import pytest

import jiasu

HUGE = 2**70
HUGE_DIGITS = str(HUGE)
GENERIC = "wrong type (or is out of range)"


@jiasu.kernel
def double(x):
    i = jiasu.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


def raises(kind, match, call):
    with pytest.raises(kind, match=match) as info:
        call()
    assert GENERIC not in str(info.value)
    return info.value


# ---------------------------------------------------------------- launch configurations


@pytest.mark.parametrize("shared, kind, match", [
    (-1, ValueError, "shared_bytes must be >= 0, not -1$"),
    (-HUGE, ValueError, f"shared_bytes must be >= 0, not -{HUGE_DIGITS}$"),
    (HUGE, ValueError, f"shared_bytes={HUGE_DIGITS} bytes is more shared memory than any GPU has"),
    (1.5, TypeError, "shared_bytes must be an int \\(bytes\\), not float"),
    (True, TypeError, "shared_bytes must be an int \\(bytes\\), not bool"),
])
def test_bad_shared_bytes(shared, kind, match):
    raises(kind, match, lambda: double[1, 16, None, shared])
    raises(kind, match, lambda: double.forall(16, shared_bytes=shared))


@pytest.mark.parametrize("blocks, threads, which, given", [
    (2**64, 16, "blocks", "18446744073709551616"), (-HUGE, 16, "blocks", f"-{HUGE_DIGITS}"),
    ((1, 2**32), 16, "blocks", "4294967296"), (1, (16, HUGE), "threads", HUGE_DIGITS), (0, 16, "blocks", "0"),
    (np.int64(-3), 16, "blocks", "-3"),
])
def test_launch_dimensions_report_the_value_given(blocks, threads, which, given):
    error = raises(jiasu.LaunchError, f"^{which} dimensions must be between 1 and 4294967295, not {re.escape(given)}$",
                   lambda: double[blocks, threads])
    assert error.name == "CUDA_ERROR_INVALID_VALUE"


@pytest.mark.parametrize("stream", [-1, HUGE])
def test_stream_that_is_no_address(stream):
    raises(ValueError, f"stream {stream} is not a CUstream address", lambda: double[1, 16, stream])
    raises(ValueError, f"stream {stream} is not a CUstream address", lambda: double.forall(4, stream=stream))


@pytest.mark.parametrize("n, kind, match", [
    (HUGE, ValueError, f"forall\\(n\\) needs n < 2\\*\\*63, not {HUGE_DIGITS}$"),
    (-HUGE, ValueError, f"forall\\(n\\) needs n >= 0, not -{HUGE_DIGITS}$"),
    (-1, ValueError, "forall\\(n\\) needs n >= 0, not -1$"),
    (2.0, TypeError, "forall\\(n\\) needs an int \\(the number of threads\\), not float"),
])
def test_bad_forall_counts(n, kind, match):
    raises(kind, match, lambda: double.forall(n))


def test_a_good_configuration_still_launches_after_bad_ones():
    for bad in ((1, 16, None, -1), (2**64, 16), (1, 16, -1)):
        with pytest.raises((ValueError, jiasu.LaunchError)):
            double[bad]
    x = np.arange(40, dtype=np.float32)
    double[1, 64, None, 0](x, device="cpu")
    double.forall(40, shared_bytes=0)(x, device="cpu")
    np.testing.assert_array_equal(x, np.arange(40, dtype=np.float32) * 4)


def test_device_that_no_int_can_name():
    error = raises(jiasu.CudaError, f"device {HUGE_DIGITS} does not exist", lambda: jiasu.Device(HUGE))
    assert error.name == "CUDA_ERROR_INVALID_DEVICE"
    raises(jiasu.CudaError, f"device {HUGE_DIGITS} does not exist",
           lambda: double[1, 16](np.zeros(4, np.float32), device=HUGE))


# ---------------------------------------------------------------- indices and shapes


@pytest.fixture
def cpu_array():
    return jiasu.asarray(np.arange(12.0).reshape(3, 4), device="cpu")


@pytest.mark.parametrize("key, axis, size, given", [
    (HUGE, 0, 3, HUGE_DIGITS), (-HUGE, 0, 3, f"-{HUGE_DIGITS}"), ((0, HUGE), 1, 4, HUGE_DIGITS),
    ((Ellipsis, -HUGE), 1, 4, f"-{HUGE_DIGITS}"), ((None, 1, 2**63), 1, 4, str(2**63)),
    (np.uint64(2**63), 0, 3, str(2**63)), ((1, np.uint64(2**64 - 1)), 1, 4, str(2**64 - 1)),
])
def test_huge_indices_are_index_errors(cpu_array, key, axis, size, given):
    match = f"^index {given} is out of bounds for axis {axis} with size {size}$"
    raises(IndexError, match, lambda: cpu_array[key])

    def assign():
        cpu_array[key] = 1.0

    raises(IndexError, match, assign)
    np.testing.assert_array_equal(cpu_array.get(), np.arange(12.0).reshape(3, 4))  # nothing was written


SLICES = [np.s_[HUGE:], np.s_[-HUGE:], np.s_[:HUGE], np.s_[:-HUGE], np.s_[::HUGE], np.s_[::-HUGE],
          np.s_[HUGE:-HUGE:-1], np.s_[-HUGE:HUGE:2], np.s_[::-1, ::-3], np.s_[-1:-HUGE:-2, 1::-1],
          np.s_[1, HUGE:0:-1], np.s_[..., :-HUGE:-1]]


@pytest.mark.parametrize("key", SLICES, ids=[str(k) for k in SLICES])
def test_slices_with_huge_bounds_and_negative_steps_match_numpy(cpu_array, key):
    host = np.arange(12.0).reshape(3, 4)
    view = cpu_array[key]
    assert view.shape == host[key].shape and view.strides == host[key].strides
    np.testing.assert_array_equal(view.get(), host[key])


def test_zero_step_is_a_value_error(cpu_array):
    raises(ValueError, "slice step cannot be zero", lambda: cpu_array[::0])


@pytest.mark.parametrize("make", [
    lambda: jiasu.empty(HUGE, device="cpu"), lambda: jiasu.zeros((2, HUGE), device="cpu"),
    lambda: jiasu.empty(-HUGE, device="cpu"), lambda: jiasu.zeros(4, device="cpu").reshape(HUGE),
    lambda: jiasu.zeros(4, device="cpu").reshape(2, -HUGE),
])
def test_huge_dimensions_are_value_errors(make):
    raises(ValueError, "out of range for an array dimension \\(an int64\\)", make)


# ---------------------------------------------------------------- interchange protocols


def test_dlpack_stream_of_the_wrong_type(cpu_array):
    raises(TypeError, "__dlpack__\\(stream=...\\) takes None or an int", lambda: cpu_array.__dlpack__(stream="x"))


class BadInterface:
    def __init__(self, **entries):
        self.__cuda_array_interface__ = dict(
            {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}, **entries)


@pytest.mark.parametrize("entries", [{"data": ("nowhere", False)}, {"typestr": 4}, {"stream": "soon"}])
def test_malformed_cuda_array_interface(entries):
    raises(TypeError, "__cuda_array_interface__ of a .*BadInterface is not a valid one",
           lambda: jiasu._core.as_device_array(BadInterface(**entries)))


class BadDevice:
    def __dlpack__(self, **options):
        raise AssertionError("not reached")

    def __dlpack_device__(self):
        return ("cuda", 0)


def test_malformed_dlpack_device():
    raises(TypeError, re.escape("__dlpack_device__() must return (device_type, device_id), not ('cuda', 0)"),
           lambda: jiasu._core.as_device_array(BadDevice()))


def test_compile_cuda_arch_that_no_int_can_name():
    raises(ValueError, f"arch must look like 'sm_90', 'compute_90' or 90, not {HUGE_DIGITS}",
           lambda: jiasu.compile_cuda("", arch=HUGE))
    raises(ValueError, "not -90", lambda: jiasu.compile_cuda("", arch=-90))


# ---------------------------------------------------------------- dtype globals (NumPy 2 dtype instances)

FLOAT32 = np.dtype(np.float32)
INT16 = np.dtype("int16")
BIG = HUGE
TEXT = np.dtype("U3")


@jiasu.kernel
def cast_with_dtype_globals(x, halves, truncated):
    i = jiasu.grid(1)
    if i < x.size:
        scratch = jiasu.local.array(4, FLOAT32)
        scratch[i % 4] = FLOAT32(x[i]) / 2
        halves[i] = scratch[i % 4]
        truncated[i] = INT16(x[i])


def test_dtype_instances_as_globals_on_the_cpu():
    assert type(FLOAT32).__name__ != "dtype"  # NumPy 2: Float32DType, the case that was refused
    x = np.linspace(-300.7, 300.7, 37)
    halves = np.zeros(37, np.float32)
    truncated = np.zeros(37, np.int16)
    cast_with_dtype_globals[1, 64](x, halves, truncated, device="cpu")
    np.testing.assert_array_equal(halves, x.astype(np.float32) / np.float32(2))
    np.testing.assert_array_equal(truncated, x.astype(np.int16))  # toward zero
    assert cast_with_dtype_globals.specialize(x, halves, truncated) == \
        "(array(float64, 1d, C), array(float32, 1d, C), array(int16, 1d, C))"


@jiasu.kernel
def uses_a_huge_global(out):
    out[0] = BIG


@jiasu.kernel
def uses_a_text_dtype(out):
    out[0] = TEXT(1)


def source_line(text):
    """The line number of the line of this file that reads `text` (stripped)."""
    with open(__file__) as f:
        return next(number for number, line in enumerate(f, 1) if line.strip() == text)


@pytest.mark.parametrize("kernel, reason, line", [
    (uses_a_huge_global, f"global 'BIG' is a Python int too large for int64 \\({HUGE_DIGITS}\\)", "out[0] = BIG"),
    (uses_a_text_dtype, "global 'TEXT' is a NumPy dtype 'str96', which jiasu arrays cannot hold", "out[0] = TEXT(1)"),
])
def test_globals_jiasu_cannot_use_are_compile_errors_where_used(kernel, reason, line):
    error = raises(jiasu.CompileError, reason, lambda: kernel.specialize(np.zeros(1)))
    assert error.file == __file__
    assert error.line == source_line(line)


# ---------------------------------------------------------------- CUDA C++ kernels (against the stand-in driver)

from test_launch_paths import fake_driver, nvrtc, run_with_fake  # noqa: E402,F401  (fixtures and their runner)


def test_raw_kernel_configuration_errors(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, f"""
        k = jiasu.RawKernel('extern "C" __global__ void f(float* x, int n) {{}}', 'f')
        f = jiasu.SourceModule('extern "C" __global__ void f(float* x, int n) {{}}').get_function('f')
        x = jiasu.asarray(np.ones(4, np.float32))
        for kernel in (k, f):
            print(error_of(lambda: kernel(2**64, 4, (x, 4))))
            print(error_of(lambda: kernel(1, (4, -{HUGE}), (x, 4))))
            print(error_of(lambda: kernel(1, 4, (x, 4), shared_mem={HUGE})))
            print(error_of(lambda: kernel(1, 4, (x, 4), shared_mem=-{HUGE})))
            print(error_of(lambda: kernel(1, 4, (x, 4), stream=-1)))
            kernel(1, 4, (x, 4))  # and a good call still works
        print(error_of(lambda: f.max_active_blocks_per_multiprocessor(-1)))
        print(error_of(lambda: f.max_active_blocks_per_multiprocessor(128, shared_mem=-1)))
        print(error_of(lambda: f.max_active_blocks_per_multiprocessor((16, 16))))
        print(f.max_active_blocks_per_multiprocessor(128) >= 0)
        print(error_of(lambda: x[{HUGE}]))
        print(error_of(lambda: x.__dlpack__(stream="default")))
    """)
    for first in (0, 5):
        assert out[first:first + 5] == [
            "LaunchError: grid dimensions must be between 1 and 4294967295, not 18446744073709551616",
            f"LaunchError: block dimensions must be between 1 and 4294967295, not -{HUGE_DIGITS}",
            f"ValueError: shared_mem={HUGE_DIGITS} bytes is more shared memory than any GPU has",
            f"ValueError: shared_mem must be >= 0, not -{HUGE_DIGITS}",
            "ValueError: stream -1 is not a CUstream address (those are 0 to 2**64 - 1)",
        ], out[first:first + 5]
    assert out[10:] == [
        "LaunchError: block_size dimensions must be between 1 and 4294967295, not -1",
        "ValueError: shared_mem must be >= 0, not -1",
        "TypeError: block_size is a number of threads (an int)",
        "True",
        f"IndexError: index {HUGE_DIGITS} is out of bounds for axis 0 with size 4",
        "TypeError: __dlpack__(stream=...) takes None or an int (a CUstream address, or 1 or 2 for the legacy and "
        "per-thread default streams), not 'default'",
    ], out[10:]
