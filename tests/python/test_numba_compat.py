"""Numba-CUDA programs on jiasu: `from jiasu import cuda` (the decorator, kernels spelled with cuda.*, the host
API) and `python -m jiasu numba SCRIPT.py` running the seed article's example written as Numba code, each
checked against NumPy. Runs on the CPU backend everywhere and on CUDA where a GPU is present."""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu
from jiasu import cuda
from jiasu.cuda_random import (xoroshiro128p_normal_float32, xoroshiro128p_uniform_float32,
                               xoroshiro128p_uniform_float64)

pytestmark = pytest.mark.usefixtures("each_backend")


@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit(device=True)
def square(v):
    return v * v


@cuda.jit("void(float32[:], float32[:])", fastmath=True, lineinfo=True)
def block_sums(x, sums):
    # A tree reduction in shared memory: one sum per block of 128 threads.
    partial = cuda.shared.array(128, cuda.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    partial[t] = square(x[i]) if i < x.size else 0
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        sums[cuda.blockIdx.x] = partial[0]


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i] % bins.size, 1)


def test_kernels_spelled_as_numba_match_numpy(rng):
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    out = cuda.device_array_like(dx)
    add[(n + 127) // 128, 128](dx, dy, out)
    np.testing.assert_array_equal(out.copy_to_host(), x + y)

    sums = cuda.device_array(8, np.float32)
    block_sums[8, 128](dx, sums)
    np.testing.assert_allclose(sums.copy_to_host(), [np.sum(x[b * 128:(b + 1) * 128].astype(np.float64) ** 2)
                                                     for b in range(8)], rtol=1e-5)

    values = rng.integers(0, 1000, 5000).astype(np.int32)
    bins = cuda.to_device(np.zeros(16, np.int32))
    histogram.forall(values.size)(cuda.to_device(values), bins)
    np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(values % 16, minlength=16))


def test_host_api_round_trips(rng):
    a = rng.standard_normal((3, 4))
    d = cuda.to_device(a)
    assert cuda.is_cuda_array(d) == (jiasu.get_backend() == "cuda")
    host = np.zeros_like(a)
    assert d.copy_to_host(host) is host
    np.testing.assert_array_equal(host, a)
    d.copy_to_device(a * 2)
    np.testing.assert_array_equal(d.copy_to_host(), a * 2)
    into = cuda.device_array((3, 4))
    assert cuda.to_device(a, to=into) is into
    np.testing.assert_array_equal(into.copy_to_host(), a)
    f = cuda.device_array_like(np.asfortranarray(a))
    assert f.shape == (3, 4) and f.strides == (8, 24)
    pinned = cuda.pinned_array((2, 5), np.float32)
    assert pinned.shape == (2, 5) and pinned.dtype == np.float32
    assert cuda.float32 is np.float32 and cuda.f8 is np.float64 and cuda.boolean is np.bool_
    cuda.synchronize()


def test_unsupported_parts_say_so():
    with pytest.raises(TypeError, match="unsupported option.*bogus"):
        cuda.jit(bogus=True)
    with pytest.raises(NotImplementedError, match="link=.*extra.ptx.*PTX"):
        cuda.jit(link=["extra.ptx"])
    with pytest.raises(NotImplementedError, match="strides"):
        cuda.device_array((2, 3), strides=(8, 8))
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        cuda.nonsense  # noqa: B018


SEED = '''\
from numba import jit, cuda
import numpy as np

@cuda.jit
def add_gpu(x, y, out):
    idx = cuda.grid(1)
    if idx < out.size:
        out[idx] = x[idx] + y[idx]

x = np.arange(1000000).astype(np.float32)
y = np.arange(1000000).astype(np.float32)
out = np.empty_like(x)
threadsperblock = 256
blockspergrid = (x.size + (threadsperblock - 1)) // threadsperblock
add_gpu[blockspergrid, threadsperblock](x, y, out)
assert np.array_equal(out, x + y), "wrong sum"
print("seed ok", out[:3], sys.argv[1:])
'''


def run_numba_script(tmp_path, source, *args, backend):
    script = tmp_path / "program.py"
    script.write_text("import sys\n" + textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "jiasu", "numba", str(script), *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "JIASU_BACKEND": backend})


def test_the_seed_example_runs_unchanged_as_numba_code(tmp_path, each_backend):
    done = run_numba_script(tmp_path, SEED, "--flag", "7", backend=each_backend)
    assert done.returncode == 0, done.stderr
    assert "seed ok [0. 2. 4.] ['--flag', '7']" in done.stdout


def test_numba_names_jiasu_does_not_serve_raise_not_implemented(tmp_path, each_backend):
    done = run_numba_script(tmp_path, "from numba import prange\n", backend=each_backend)
    assert done.returncode != 0
    assert "NotImplementedError: numba.prange is not served by jiasu" in done.stderr
    done = run_numba_script(tmp_path, "import numba\nnumba.jit(lambda: 0)\n", backend=each_backend)
    assert "NotImplementedError: numba.jit (Numba's CPU compiler) is not served by jiasu" in done.stderr


PRINTS_WITH_LIBDEVICE = '''\
import numpy as np
from numba import cuda
from numba.cuda import libdevice

@cuda.jit
def roots(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = libdevice.sqrtf(x[i]) + libdevice.fast_expf(x[i]) - libdevice.exp(x[i])
        if i == 0:
            print("roots of", x.size, "values:", x[3], x[1] < 2.0, "100%")

print("before")
x = np.arange(4, dtype=np.float32)
out = np.zeros_like(x)
roots[1, 32](x, out)
cuda.synchronize()
print("after", np.allclose(out, np.sqrt(x), rtol=1e-5, atol=1e-4))
'''


def test_numba_code_prints_and_calls_libdevice(tmp_path, each_backend):
    # stdout is a pipe here, so Python's print buffers: on the CPU backend the kernel's line still comes between
    # the script's own lines; on a GPU it comes when the script synchronises, before Python flushes at exit.
    done = run_numba_script(tmp_path, PRINTS_WITH_LIBDEVICE, backend=each_backend)
    assert done.returncode == 0, done.stderr
    lines = ["before", "roots of 4 values: 3.000000 True 100%", "after True"]
    got = done.stdout.splitlines()
    assert got == lines if each_backend == "cpu" else sorted(got) == sorted(lines)


EXEC_MADE = '''\
from numba import cuda
import numpy as np

def make(op):
    namespace = {}
    exec(f"def kernel(out, x):\\n    i = cuda.grid(1)\\n    if i < out.size:\\n        out[i] = x[i] {op} 3\\n",
         {"cuda": cuda}, namespace)
    return cuda.jit(namespace["kernel"])

x = np.arange(10, dtype=np.int64)
for op, expected in (("*", x * 3), ("-", x - 3)):
    out = np.zeros_like(x)
    make(op)[1, 32](out, x)
    assert np.array_equal(out, expected), (op, out)
exec("y = 5")  # exec() without namespaces still runs in the caller's
assert y == 5
print("exec ok")
'''


def test_kernels_made_with_exec_compile_under_the_numba_runner(tmp_path, each_backend):
    done = run_numba_script(tmp_path, EXEC_MADE, backend=each_backend)
    assert done.returncode == 0, done.stderr
    assert "exec ok" in done.stdout
    namespace = {}
    exec("def kernel(out):\n    out[0] = 1\n", {}, namespace)  # outside the runner the text is gone
    with pytest.raises(TypeError, match="python -m jiasu numba"):
        jiasu.kernel(namespace["kernel"])


def test_devices_streams_and_events(capsys, each_backend):
    found = cuda.detect()
    assert found == jiasu.is_available() == bool(cuda.gpus)
    assert f"Found {len(cuda.gpus)} CUDA devices" in capsys.readouterr().out
    assert cuda.default_stream() == 0
    assert cuda.pinned_array_like(np.zeros((2, 3), np.int16)).dtype == np.int16
    with pytest.raises(TypeError, match="does not export __cuda_array_interface__"):
        cuda.as_cuda_array(np.zeros(3))
    # Streams and events work on the CPU backend too, where work is done when its call returns.
    s, start, end = cuda.stream(), cuda.event(), cuda.event()
    d = cuda.to_device(np.arange(4.0), stream=s)
    start.record(s)
    add[1, 4, s](d, d, d)
    end.record(s)
    s.synchronize()
    assert s.done and end.done
    assert start.elapsed_time(end) >= 0
    np.testing.assert_array_equal(d.copy_to_host(stream=s), [0, 2, 4, 6])
    if each_backend == "cuda":
        assert cuda.select_device(0).id == 0 and cuda.get_current_device().id == 0
        np.testing.assert_array_equal(cuda.as_cuda_array(d).copy_to_host(), [0, 2, 4, 6])


def test_numba_scalar_types_are_dtypes_in_kernels(each_backend):
    numba = pytest.importorskip("numba")  # Numba's own type objects, as Numba-CUDA programs name them
    float32, int16 = numba.float32, numba.types.int16

    @cuda.jit
    def convert(x, out):
        i = cuda.grid(1)
        scratch = cuda.local.array(2, int16)
        if i < x.size:
            scratch[0] = int16(x[i])
            out[i] = float32(scratch[0]) / 2

    x = np.array([3.7, -5.2, 120.9], np.float64)
    out = cuda.device_array(3, np.float32)
    convert[1, 32](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), x.astype(np.int16).astype(np.float32) / 2)


@cuda.jit
def _mark(out, i, value):
    out[i] = value


@cuda.jit
def _mark_all(out):
    i = cuda.grid(1)
    if i < out.size:
        _mark(out, i, i * 3)  # a kernel called from a kernel runs as a device function, as in Numba


def test_a_kernel_called_from_a_kernel_and_py_func(each_backend):
    out = cuda.device_array(37, np.int64)
    _mark_all[2, 32](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(37) * 3)
    assert _mark_all.py_func.__name__ == "_mark_all" and callable(_mark.py_func)
    ref = np.zeros(2, np.int64)
    _mark.py_func(ref, 1, 5)  # the plain Python function
    np.testing.assert_array_equal(ref, [0, 5])


@cuda.jit
def _fp16_all(a, b, c, out, flags):
    i = cuda.grid(1)
    if i < a.size:
        x, y, z = a[i], b[i], c[i]
        out[i, 0] = cuda.fp16.hadd(x, y)
        out[i, 1] = cuda.fp16.hsub(x, y)
        out[i, 2] = cuda.fp16.hmul(x, y)
        out[i, 3] = cuda.fp16.hdiv(x, y)
        out[i, 4] = cuda.fp16.hfma(x, y, z)
        out[i, 5] = cuda.fp16.hneg(x)
        out[i, 6] = cuda.fp16.habs(x)
        out[i, 7] = cuda.fp16.hmax(x, y)
        out[i, 8] = cuda.fp16.hmin(x, y)
        out[i, 9] = cuda.fp16.hsqrt(cuda.fp16.habs(x))
        out[i, 10] = cuda.fp16.hexp10(z)
        out[i, 11] = cuda.fp16.hfloor(x)
        out[i, 12] = cuda.fp16.hrcp(y)
        out[i, 13] = cuda.fp16.hsin(x)
        out[i, 14] = cuda.fp16.hrint(x)
        flags[i, 0] = cuda.fp16.hlt(x, y)
        flags[i, 1] = cuda.fp16.heq(x, x)
        flags[i, 2] = cuda.fp16.hne(x, y)
        flags[i, 3] = cuda.fp16.hge(x, y)


def test_fp16_functions_match_numpy_float16(each_backend):
    rng = np.random.default_rng(7)
    n = 1000
    a = rng.uniform(-4, 4, n).astype(np.float16)
    b = rng.uniform(0.5, 4, n).astype(np.float16)
    c = rng.uniform(-1, 1, n).astype(np.float16)
    a[:5] = np.nan  # hmax/hmin return the other operand; the comparisons are false
    out, flags = cuda.device_array((n, 15), np.float16), cuda.device_array((n, 4), np.bool_)
    _fp16_all[8, 128](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), out, flags)
    out, flags = out.copy_to_host(), flags.copy_to_host()
    f = np.float64
    expected = [a + b, a - b, a * b, a / b, f(a) * f(b) + f(c), -a, np.abs(a), np.fmax(a, b), np.fmin(a, b),
                np.sqrt(np.abs(a)), 10.0 ** f(c), np.floor(a), 1 / f(b), np.sin(f(a)), np.rint(a)]
    for column, reference in enumerate(expected):
        np.testing.assert_allclose(out[:, column].astype(f), np.asarray(reference, f), rtol=1e-3, atol=1e-3,
                                   err_msg=f"column {column}")
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(flags, np.stack([a < b, a == a, (a < b) | (a > b), a >= b], axis=1))


def test_kernel_names_exist_on_the_host_and_say_where_they_work():
    # Every jiasu.* name of the front end's builtin table is a Python object; cuda.X is the same object.
    assert cuda.grid is jiasu.grid and cuda.atomic.add is jiasu.atomic.add and cuda.fp16.hfma is jiasu.fp16.hfma
    assert set(dir(jiasu.threadIdx)) == {"x", "y", "z"} and "nanmax" in dir(cuda.atomic)
    assert "kernel language" in jiasu.shared.array.__doc__
    for name in (jiasu.grid, cuda.syncthreads, cuda.threadIdx.x, jiasu.atomic):
        with pytest.raises(TypeError, match="works inside kernels only"):
            name(1)
    with pytest.raises(AttributeError, match="jiasu.threadIdx has no kernel name 'w'"):
        jiasu.threadIdx.w
    with pytest.raises(AttributeError):
        jiasu.no_such_name


@cuda.jit(device=True)
def _bump_in_shared(ary, op, dtype):
    scratch = cuda.shared.array(32, dtype)
    t = cuda.threadIdx.x
    scratch[t] = ary[t]
    cuda.syncthreads()
    op(scratch, t % 4, dtype(t))  # dtype(t): a cast to the bound dtype
    cuda.syncthreads()
    ary[t] = scratch[t]


@cuda.jit
def _bump_add_uint32(ary):
    _bump_in_shared(ary, cuda.atomic.add, np.uint32)


@cuda.jit
def _bump_max_float64(ary):
    _bump_in_shared(ary, cuda.atomic.max, np.float64)


@cuda.jit(device=True)
def _rebinds_dtype(x, dtype):
    dtype = 2
    return x * dtype


@cuda.jit
def _calls_rebinds(out):
    out[0] = _rebinds_dtype(out[0], np.int32)


def test_dtypes_and_builtins_passed_to_device_functions(each_backend):
    # Numba lets a device function take a dtype or an intrinsic; each distinct one is its own specialisation.
    a = cuda.to_device(np.full(32, 5, np.uint32))
    _bump_add_uint32[1, 32](a)
    lanes = np.arange(32)
    expected = np.full(32, 5, np.uint64)
    np.add.at(expected, lanes % 4, lanes)
    np.testing.assert_array_equal(a.copy_to_host(), np.where(lanes < 4, expected, 5).astype(np.uint32))
    b = cuda.to_device(np.zeros(32))
    _bump_max_float64[1, 32](b)
    np.testing.assert_array_equal(b.copy_to_host()[:4], [28.0, 29.0, 30.0, 31.0])
    np.testing.assert_array_equal(b.copy_to_host()[4:], 0.0)
    with pytest.raises(jiasu.CompileError, match="parameter 'dtype' holds a dtype\\(int32\\).*cannot be assigned"):
        _calls_rebinds[1, 1](cuda.device_array(1, np.int64))


@cuda.jit(device=True)
def _square(x):
    return x * x


@cuda.jit(device=True)
def _negate(x):
    return -x


@cuda.jit(device=True)
def _apply(f, x):
    return f(x)


@cuda.jit(device=True)
def _compose(f, g, x):
    return _apply(f, _apply(g, x))  # a bound function passed on


@cuda.jit(device=True)
def _at(a, ij):
    i, j = ij
    return a[i, j] + ij[1]


@cuda.jit
def _functions_and_tuples(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        x = a[i, j]
        out[i, j] = _apply(_square, x) + 10 * _compose(_negate, _square, x) + _at(a, (i, j)) + _at(a, cuda.grid(2))


def test_device_functions_and_tuples_passed_to_device_functions(each_backend):
    a = np.arange(12.0).reshape(3, 4)
    out = cuda.device_array((3, 4))
    _functions_and_tuples[(1, 1), (4, 4)](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a * a - 10 * a * a + 2 * (a + np.arange(4)))


_ROWS = 2


@cuda.jit(device=True)
def _stage(out, n, shape, dtype, extra):
    # n and shape come from the call as constants (Numba's literal arguments): they size the arrays.
    staged = cuda.shared.array(n, dtype)
    scratch = cuda.local.array(shape, dtype)
    i = cuda.threadIdx.x
    if i < n:
        staged[i] = i * 2
    scratch[shape[0] - 1, shape[1] - 1] = extra
    cuda.syncthreads()
    if i < n:
        out[i] = staged[n - 1 - i] + scratch[shape[0] - 1, shape[1] - 1]


@cuda.jit(device=True)
def _sum_down(n):
    total = 0
    while n > 0:  # an assigned parameter stays a variable
        total += n
        n -= 1
    return total


@cuda.jit
def _staged(out, out2, totals):
    _stage(out, 8, (_ROWS, 3), np.float64, 0.5)
    _stage(out2, 16, (1, 2), np.float32, 7)
    if cuda.threadIdx.x == 0:
        totals[0] = _sum_down(4)
        totals[1] = _sum_down(totals[0])


def test_constant_integer_arguments_size_arrays_in_device_functions(each_backend):
    out, out2, totals = cuda.device_array(8), cuda.device_array(16, np.float32), cuda.device_array(2, np.int64)
    _staged[1, 32](out, out2, totals)
    np.testing.assert_array_equal(out.copy_to_host(), (7 - np.arange(8)) * 2 + 0.5)
    np.testing.assert_array_equal(out2.copy_to_host(), (15 - np.arange(16)) * 2 + 7)
    np.testing.assert_array_equal(totals.copy_to_host(), [10, 55])


@cuda.jit
def _tuple_indices(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        ij = (i, j)
        out[ij] = a[ij] * 2  # a tuple value indexes one element per axis, as in Numba
        out[ij] += 1
        out[cuda.grid(2)] += a[i, j]


def test_a_tuple_value_indexes_an_array(each_backend):
    a = np.arange(12.0).reshape(3, 4)
    out = cuda.to_device(np.zeros_like(a))
    _tuple_indices[(1, 1), (4, 4)](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), 3 * a + 1)


@cuda.jit
def _sequence_loops(x, y, out):
    total = 0.0
    for v in x:
        total += v
    for i, v in enumerate(y, 1):
        total += i * v
    for a, b in zip(x, y):  # as long as the shorter
        total += 100 * a * b
    for i, (a, b) in enumerate(zip(x, y)):
        if i == 2:
            break
        total += 1000 * (a + b)
    out[0] = total


def test_loops_over_arrays_enumerate_and_zip(each_backend):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0, 7.0])
    out = cuda.device_array(1)
    _sequence_loops[1, 1](cuda.to_device(x), cuda.to_device(y), out)
    expected = (sum(x) + sum(i * v for i, v in enumerate(y, 1)) + 100 * sum(a * b for a, b in zip(x, y))
                + 1000 * sum(a + b for a, b in list(zip(x, y))[:2]))
    assert out.copy_to_host()[0] == expected


def test_a_signature_types_the_scalar_arguments_as_numba_does(each_backend):
    def leading_zeros(out, x):
        out[0] = cuda.clz(x)

    def rounded(out, x, n):
        out[0] = round(x, n)

    out = np.zeros(1, np.int32)
    for signature in ("void(int32[:], int32)", "void(int32[::1], i4)", ["void(int32[:], int32)"]):
        cuda.jit(signature)(leading_zeros)[1, 1](out, 0x00100000)
        assert out[0] == 11  # in 32 bits, not the 64 of a plain Python int
    cuda.jit("void(int32[:], int32)")(leading_zeros)[1, 1](out, 0xFFFFFFFF)  # wraps into int32, as Numba's does
    assert out[0] == 0
    cuda.jit("void(int32[:], int64)")(leading_zeros)[1, 1](out, 0x00100000)
    assert out[0] == 43
    f = np.zeros(1, np.float32)
    cuda.jit("void(float32[:], float32, int32)")(rounded)[1, 1](f, 0.3425, 3)  # rounds the float32 value (in double)
    assert f[0] == np.float32(np.round(np.float64(np.float32(0.3425)), 3)) == np.float32(0.343)
    kernel = cuda.jit("void(int32[:], int32)")(leading_zeros)
    assert kernel.py_func is leading_zeros
    kernel.forall(1)(out, 1)
    assert out[0] == 31


def test_frexp_ldexp_and_bit_count(each_backend):
    @cuda.jit
    def frexp_ldexp(mantissa, exponent, back, x):
        i = cuda.grid(1)
        if i < x.size:
            mantissa[i], exponent[i] = math.frexp(x[i])
            back[i] = math.ldexp(mantissa[i], exponent[i])

    @cuda.jit
    def bits(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i].bit_count()

    x = np.array([3.1415, -0.0, 0.0, 1e-310, -7.5e300, np.inf, -np.inf, np.nan, 1.0], np.float64)
    for dtype in (np.float32, np.float64):
        with np.errstate(over="ignore"):  # -7.5e300 is -inf in float32
            xs = x.astype(dtype)
        m, e, back = np.zeros_like(xs), np.zeros(len(xs), np.int32), np.zeros_like(xs)
        frexp_ldexp[1, 32](m, e, back, xs)
        expected = [math.frexp(v) for v in xs.astype(np.float64)] if dtype == np.float64 else \
            [(np.float32(mv), ev) for mv, ev in (math.frexp(float(v)) for v in xs)]
        np.testing.assert_array_equal(m, np.array([mv for mv, _ in expected], dtype))
        np.testing.assert_array_equal(e, [ev for _, ev in expected])
        np.testing.assert_array_equal(back, xs)
    ints = np.array([0, 1, -1, 255, -256, 2 ** 62 + 3, -2 ** 63], np.int64)
    out = np.zeros(len(ints), np.int64)
    bits[1, 32](out, ints)
    np.testing.assert_array_equal(out, [int(v).bit_count() for v in ints])  # Python's: of abs(x)


def operator_kernel(op):
    @cuda.jit
    def apply(out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])

    return apply


def test_operator_functions_and_kernel_names_as_values(each_backend):
    import operator

    from jiasu import atomic, grid, threadIdx

    a = np.array([7.0, -3.5, 2.0, 9.0])
    b = np.array([2.0, 1.5, -4.0, 9.0])
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
               operator.pow, operator.lt, operator.ge, operator.eq, operator.ne):
        out = np.zeros(4)
        operator_kernel(op)[1, 32](out, a, b)
        with np.errstate(invalid="ignore"):  # (-3.5) ** 1.5 is nan on both sides; CUDA's pow is within 2 ulp
            np.testing.assert_allclose(out, op(a, b).astype(np.float64), rtol=5e-16, atol=0, err_msg=op.__name__)

    @cuda.jit
    def unary(out, a):
        i = grid(1)  # kernel-language names imported from jiasu
        if i < out.size:
            out[i] = negate(a[i]) + absolute(a[i]) + threadIdx.x * 0
            atomic.add(out, 0, 0)

    negate, absolute = operator.neg, operator.abs
    out = np.zeros(4)
    unary[1, 32](out, a)
    np.testing.assert_array_equal(out, -a + np.abs(a))
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        unary(out, a)
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        cuda.jit("void(float64[:], float64[:])")(unary.py_func)(out, a)


def test_reduce_vectorize_and_host_helpers(each_backend):
    total = cuda.reduce(lambda a, b: a + b)  # Numba's own example: a lambda
    largest = cuda.reduce(lambda a, b: max(a, b))
    x = np.arange(1, 11, dtype=np.float64)
    assert total(x) == 55 and total(x, size=4) == 10 and total(x, init=100) == 155
    assert largest(np.array([-5, -2, -9]), init=-100) == -2
    assert total(cuda.to_device(x)) == 55
    res = cuda.to_device(np.zeros(2))
    assert total(x, res=res) is None
    np.testing.assert_array_equal(res.copy_to_host(), [55, 0])

    @cuda.vectorize(["float32(float32, float32)"])
    def axpy(a, b):
        return 2 * a + b

    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    host = axpy(a, b)
    assert isinstance(host, np.ndarray)
    np.testing.assert_array_equal(host, 2 * a + b)
    device = axpy(cuda.to_device(a), 1.0)
    assert isinstance(device, jiasu.Array)
    np.testing.assert_array_equal(device.copy_to_host(), 2 * a + 1)

    stream = cuda.stream()
    with stream.auto_synchronize():
        out = cuda.to_device(a, stream=stream)
    np.testing.assert_array_equal(out.copy_to_host(), a)
    with cuda.defer_cleanup():
        pass
    assert float(jiasu.sum(jiasu.asarray(x))) == 55.0  # a reduction's 0-d result converts, as NumPy's does
    assert int(jiasu.asarray(np.array([7]))) == 7 and complex(jiasu.asarray(np.array(2 + 1j))) == 2 + 1j
    with pytest.raises(TypeError, match="only one-element arrays can be converted to Python scalars"):
        float(jiasu.asarray(x))
    view = cuda.from_cuda_array_interface(out.__cuda_array_interface__, owner=out) if each_backend == "cuda" else out
    np.testing.assert_array_equal(view.copy_to_host(), a)


def test_numba_cuda_names_jiasu_does_not_serve_say_so():
    for name in ("compile_ptx", "external_stream"):
        with pytest.raises(NotImplementedError, match=f"numba.cuda.{name} .* is not served by jiasu yet"):
            getattr(cuda, name)
    with pytest.raises(AttributeError):
        cuda.no_such_name  # noqa: B018


@cuda.jit
def set_first(a, v):
    a[0] = v


class _CopyInOnly:
    """An extension as Numba's tests write one: every argument is cuda.In, and a callback runs after the launch."""

    def __init__(self):
        self.seen, self.called = [], 0

    def prepare_args(self, ty, value, stream=None, retr=None):
        self.seen.append(value if np.isscalar(value) else type(value).__name__)
        retr.append(self.after)
        return ty, cuda.In(value) if isinstance(value, np.ndarray) else value

    def after(self):
        self.called += 1


def test_in_inout_and_kernel_extensions(each_backend):
    a = np.full(3, 1.5)
    set_first[1, 1](cuda.In(a), 7.0)
    assert a[0] == 1.5  # In: copied to the kernel, never back
    set_first[1, 1](cuda.InOut(a), 7.0)
    assert a[0] == 7.0
    set_first[1, 1](cuda.Out(a), 8.0)
    assert a[0] == 8.0

    kernel = cuda.jit(set_first.py_func)
    assert kernel.extensions == []
    extension = _CopyInOnly()
    kernel.extensions.append(extension)
    kernel[1, 1](a, 9.0)
    assert a[0] == 8.0, "the extension made the array an In argument"
    assert extension.seen == ["ndarray", 9.0] and extension.called == 2
    kernel.extensions.clear()
    kernel[1, 1](a, 9.0)
    assert a[0] == 9.0


# ---- cuda.random, against xoroshiro128+ written here with Python integers
_MASK = 2 ** 64 - 1


def _next(state):
    s0, s1 = state
    result = (s0 + s1) & _MASK
    s1 ^= s0
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & _MASK  # noqa: E731
    state[:] = [rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _MASK), rotl(s1, 36)]
    return result


def _reference_states(n, seed, subsequence_start=0):
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    state = [z ^ (z >> 31)] * 2

    def jump():
        s = [0, 0]
        for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
            for bit in range(64):
                if word >> bit & 1:
                    s = [s[0] ^ state[0], s[1] ^ state[1]]
                _next(state)
        state[:] = s

    for _ in range(subsequence_start):
        jump()
    states = []
    for _ in range(n):
        states.append(list(state))
        jump()
    return states


@cuda.jit
def draw(states, uniform64, uniform32, normal32):
    t = cuda.grid(1)
    if t < states.shape[0]:
        uniform64[t] = xoroshiro128p_uniform_float64(states, t)
        uniform32[t] = xoroshiro128p_uniform_float32(states, t)
        for k in range(normal32.shape[1]):
            normal32[t, k] = xoroshiro128p_normal_float32(states, t)


def test_random_states_and_draws_are_xoroshiro128p(each_backend):
    states = cuda.random.create_xoroshiro128p_states(5, seed=12345, subsequence_start=2)
    reference = _reference_states(5, 12345, 2)
    assert states.copy_to_host().tolist() == [tuple(s) for s in reference]
    n = 64
    states = cuda.random.create_xoroshiro128p_states(n, seed=7)
    reference = _reference_states(n, 7)
    uniform64, uniform32 = np.zeros(n), np.zeros(n, np.float32)
    normal32 = np.zeros((n, 400), np.float32)
    draw[1, n](states, uniform64, uniform32, normal32)
    expected64 = [(_next(s) >> 11) / 2.0 ** 53 for s in reference]
    expected32 = [(_next(s) >> 40) / 2.0 ** 24 for s in reference]
    np.testing.assert_array_equal(uniform64, expected64)
    np.testing.assert_array_equal(uniform32, np.array(expected32, np.float32))
    assert abs(normal32.mean()) < 0.02 and abs(normal32.std() - 1) < 0.02  # 25600 draws: 4 standard errors
    assert states.copy_to_host().tolist() != cuda.random.create_xoroshiro128p_states(n, seed=7).tolist()
