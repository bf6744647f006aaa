"""The launch paths and device arrays on a machine without a GPU, against tools/launch-overhead/fake_driver.cpp:
a stand-in libcuda whose device memory is host memory and whose launches do nothing. What runs is jiasu's own
code: argument classification and its errors, launch-configuration checks, NumPy staging, array transfers.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from support import FAKE_DRIVER, build_stand_ins


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    return build_stand_ins(tmp_path_factory.mktemp("fake_cuda"), {"libcuda.so.1": FAKE_DRIVER})[0]


@pytest.fixture(scope="module")
def nvrtc():
    from support import nvrtc_missing
    if reason := nvrtc_missing():
        pytest.skip(f"kernels are compiled with NVRTC, which is missing: {reason}")


def run_with_fake(fake_driver, tmp_path, body):
    """Run `body` in a fresh interpreter that sees the stand-in GPU; returns its stdout lines."""
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import warnings
        import numpy as np
        import jiasu

        @jiasu.kernel
        def add(x, y, out):
            i = jiasu.grid(1)
            if i < out.size:
                out[i] = x[i] + y[i]

        def error_of(call):
            try:
                call()
            except Exception as error:  # noqa: BLE001
                return f"{type(error).__name__}: {error}".splitlines()[0]
            return "no error"
    """) + textwrap.dedent(body))
    env = dict(os.environ, JIASU_LIBCUDA=fake_driver, JIASU_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_arrays_round_trip_through_the_stand_in(fake_driver, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, """
        host = np.arange(24, dtype=np.float64).reshape(4, 6)
        a = jiasu.asarray(host)
        print(jiasu.is_available(), a.device.name)
        print(np.array_equal(a.get(), host))
        print(np.array_equal(a[1:, ::-2].get(), host[1:, ::-2]))
        print(np.array_equal(a.reshape(6, 4).get(), host.reshape(6, 4)))
        print(np.array_equal(a[1:3].copy().get(), host[1:3]))  # contiguous: a device copy (strided ones are kernels)
        a[0] = np.arange(6)
        print(np.array_equal(a[0].get(), np.arange(6.0)))
    """)
    assert out == ["True jiasu fake GPU", "True", "True", "True", "True", "True"]


def test_python_kernel_launch_errors(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, """
        x = jiasu.asarray(np.ones(8, np.float32))
        print(error_of(lambda: add[1, 2048](x, x, x)))
        print(error_of(lambda: add[0, 32](x, x, x)))
        print(error_of(lambda: add[1, 32, None, 1 << 30](x, x, x)))
        print(error_of(lambda: add[1, 32](x, x)))
        print(error_of(lambda: add[1, 32](x, x, "out")))
        print(error_of(lambda: add[1, 32](x, x, out=x)))
        print(error_of(lambda: add(x, x, x)))
        print(error_of(lambda: add[True, 32](x, x, x)))
        print(error_of(lambda: add.forall(-1)))
        print(error_of(lambda: add[1, 32](x, x, x)))
        # The cached configuration must not let a different one through: tuples, bools, floats, sizes.
        print(error_of(lambda: add[(1,), (32,)](x, x, x)))
        print(error_of(lambda: add[(1,), (True,)](x, x, x)))
        print(error_of(lambda: add[(1,), (32.0,)](x, x, x)))
        print(error_of(lambda: add[(1,), (2048,)](x, x, x)))
        print(error_of(lambda: add[(1,), (32,)](x, x, x)))
    """)
    assert out[0].startswith("LaunchError: block (2048, 1, 1) exceeds this device's limit"), out[0]
    assert out[1].startswith("LaunchError: blocks dimensions must be between 1 and"), out[1]
    assert out[2].startswith("LaunchError: shared_mem=1073741824 bytes is more dynamic shared memory"), out[2]
    assert out[3].startswith("TypeError: add() missing 1 required positional argument: 'out' (defined at "), out[3]
    assert out[4].startswith("TypeError: argument 2 of kernel 'add': expected device memory"), out[4]
    assert out[5].startswith("TypeError: kernel arguments are positional; the only keyword is device="), out[5]
    assert out[6] == "ValueError: launch configuration was not specified: a kernel is launched as add[blocks, threads](...)"
    assert out[7].startswith("TypeError: blocks must be an int or a tuple of up to 3 ints, not bool"), out[7]
    assert out[8] == "ValueError: forall(n) needs n >= 0, not -1"
    assert out[9] == "no error"
    assert out[10] == "no error"
    assert out[11].startswith("TypeError: threads must be an int or a tuple of up to 3 ints"), out[11]
    assert out[12].startswith("TypeError: threads must be an int or a tuple of up to 3 ints"), out[12]
    assert out[13].startswith("LaunchError: block (2048, 1, 1) exceeds this device's limit"), out[13]
    assert out[14] == "no error"


def test_numpy_arguments_are_staged_with_one_warning(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, """
        x = np.ones(8, np.float32)
        out = np.full(8, 7, np.float32)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            add[1, 32](x, x, out)
            add[1, 32](x, x, out)
        print(sum(issubclass(w.category, jiasu.PerformanceWarning) for w in caught))
        # The stand-in runs no kernel, so the copy back returns what was copied in: out is unchanged.
        print(np.array_equal(out, np.full(8, 7, np.float32)))
        frozen = np.zeros(8, np.float32)
        frozen.setflags(write=False)
        print(error_of(lambda: add[1, 32](x, x, frozen)))
        print(error_of(lambda: add[1, 32](frozen, x, out)))
    """)
    assert out[0] == "1"
    assert out[1] == "True"
    assert out[2] == ("ValueError: argument 2 is a read-only NumPy array, and results would be written into it")
    assert out[3] == "no error"  # a read-only input is fine


def test_raw_kernel_argument_errors(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, r"""
        k = jiasu.RawKernel('extern "C" __global__ void f(float* x, int n) { }', "f")
        x = jiasu.asarray(np.ones(4, np.float32))
        print(error_of(lambda: k((1,), (32,), (x, 4))))
        print(error_of(lambda: k((1,), (32,), [x, 4])))
        print(error_of(lambda: k((1,), (32,), (np.ones(4), 4))))
        print(error_of(lambda: k((1,), (32,), (x, "four"))))
        print(error_of(lambda: k((1,), (32,), x)))
        freed = jiasu.asarray(np.ones(4, np.float32))
        freed.free()
        print(error_of(lambda: k((1,), (32,), (freed, 4))))
        print(error_of(lambda: k((1,), (32,), (x, np.int64(4)))))
        print(error_of(lambda: k((1,), (32,), (x, np.int16(4)))))
    """)
    assert out[0] == "no error" and out[1] == "no error"
    assert out[2].startswith("TypeError: argument 0 of kernel 'f': expected device memory"), out[2]
    assert "jiasu.asarray" in out[2]
    assert out[3].startswith("TypeError: argument 1 of kernel 'f'"), out[3]
    assert out[4].startswith("TypeError: kernel arguments must be a tuple"), out[4]
    assert out[5].startswith("InvalidArrayError: this array's memory was freed"), out[5]
    for line, name, size in ((out[6], "int64", 8), (out[7], "int16", 2)):  # NumPy scalars keep their size
        assert line == (f"TypeError: argument 1 of kernel 'f' is a numpy.{name} ({size} bytes) but the kernel's "
                        "parameter 1 takes 4 bytes"), line


def test_raw_kernel_call_forms(fake_driver, nvrtc, tmp_path):
    """RawKernel and SourceModule kernels parse (grid, block, args, shared_mem=0, stream=None) themselves."""
    out = run_with_fake(fake_driver, tmp_path, """
        k = jiasu.RawKernel('extern "C" __global__ void f(float* x, int n) {}', 'f')
        f = jiasu.SourceModule('extern "C" __global__ void f(float* x, int n) {}').get_function('f')
        x = jiasu.asarray(np.ones(4, np.float32))
        for kernel in (k, f):
            kernel(1, 4, (x, 4)); kernel(1, 4, [x, 4], 0); kernel(1, 4, (x, 4), 0, None)
            kernel(grid=1, block=4, args=(x, 4), shared_mem=16, stream=None)
            print(error_of(lambda: kernel(1, 4)))
            print(error_of(lambda: kernel(1, 4, (x, 4), shared_mem=1.5)))
            print(error_of(lambda: kernel(1, 4, (x, 4), shared_mem=-1)))
            print(error_of(lambda: kernel(1, 4, (x, 4), foo=1)))
            print(error_of(lambda: kernel(1, 4, (x, 4), 0, None, 7)))
    """)
    for first in (0, 5):
        assert out[first] == "TypeError: __call__() missing required argument 'args' (pos 3)", out[first]
        assert out[first + 1] == "TypeError: shared_mem must be an int (bytes), not float", out[first + 1]
        assert out[first + 2] == "ValueError: shared_mem must be >= 0, not -1", out[first + 2]
        assert out[first + 3] == "TypeError: 'foo' is an invalid keyword argument for __call__()", out[first + 3]
        assert out[first + 4] == "TypeError: __call__() takes at most 5 arguments (6 given)", out[first + 4]


READ_LAST_LAUNCH = """
    import ctypes, os, struct

    fake = ctypes.CDLL(os.environ["JIASU_LIBCUDA"])
    fake.jiasu_fake_last_launch.restype = ctypes.c_size_t

    def last_launch():
        function, stream = ctypes.c_void_p(), ctypes.c_void_p()
        config, params = (ctypes.c_uint * 7)(), (ctypes.c_ubyte * 4096)()
        size = fake.jiasu_fake_last_launch(ctypes.byref(function), config, ctypes.byref(stream), params, 4096)
        return tuple(config), bytes(params[:size])

    def last_kernel():  # the CUfunction launched last
        function, stream, config, params = ctypes.c_void_p(), ctypes.c_void_p(), (ctypes.c_uint * 7)(), (ctypes.c_ubyte * 1)()
        fake.jiasu_fake_last_launch(ctypes.byref(function), config, ctypes.byref(stream), params, 0)
        return function.value

    def packed(*fields):
        # (format, value) per parameter, each aligned to its size as the compiled kernel lays them out
        out = b""
        for format, *values in fields:
            size = struct.calcsize("<" + format)
            align = 8 if size >= 8 else size
            out += bytes(-len(out) % align) + struct.pack("<" + format, *values)
        return out

    def c_array(a):  # jiasu::ArrayC<T, 1>
        return ("Qq", a.ptr, a.shape[0])

    def strided(a):  # jiasu::ArrayA<T, 1>
        return ("Qqq", a.ptr, a.shape[0], a.strides[0])
"""


def test_repeat_launches_pack_each_argument_anew(fake_driver, nvrtc, tmp_path):
    """A launch like the last one rewrites the last one's parameters in place: every argument must be written
    again (new arrays, new numbers), and any change of kind must go back to the full path."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        @jiasu.kernel
        def scale(x, out, a, b):
            i = jiasu.grid(1)
            if i < x.size:
                out[i] = x[i] * a + b

        arrays = [jiasu.asarray(np.arange(n, dtype=np.float32)) for n in (10, 20, 30, 40)]
        big = jiasu.asarray(np.arange(100, dtype=np.float32))
        f64 = jiasu.asarray(np.arange(7, dtype=np.float64))
        cases = [  # arguments, expected parameters
            ((arrays[0], arrays[1], 3, 4), [c_array(arrays[0]), c_array(arrays[1]), ("q", 3), ("q", 4)]),
            ((arrays[2], arrays[3], -5, 2 ** 40), [c_array(arrays[2]), c_array(arrays[3]), ("q", -5), ("q", 2 ** 40)]),
            ((arrays[1], arrays[0], 0.5, 7), [c_array(arrays[1]), c_array(arrays[0]), ("d", 0.5), ("q", 7)]),
            ((arrays[3], arrays[2], -1.25, 8), [c_array(arrays[3]), c_array(arrays[2]), ("d", -1.25), ("q", 8)]),
            ((big[::3], arrays[0], 2, 1), [strided(big[::3]), c_array(arrays[0]), ("q", 2), ("q", 1)]),
            ((big[1::2], arrays[1], 9, 3), [strided(big[1::2]), c_array(arrays[1]), ("q", 9), ("q", 3)]),
            ((arrays[0], arrays[1], True, 1), [c_array(arrays[0]), c_array(arrays[1]), ("?", True), ("q", 1)]),
            ((arrays[2], arrays[3], False, 6), [c_array(arrays[2]), c_array(arrays[3]), ("?", False), ("q", 6)]),
            ((f64, f64, True, 3), [c_array(f64), c_array(f64), ("?", True), ("q", 3)]),  # only the dtype changes
            ((arrays[0], arrays[1], np.float32(1.5), 2), [c_array(arrays[0]), c_array(arrays[1]), ("f", 1.5), ("q", 2)]),
            ((arrays[2], arrays[3], np.float32(2.5), 4), [c_array(arrays[2]), c_array(arrays[3]), ("f", 2.5), ("q", 4)]),
            ((arrays[1], arrays[0], np.int32(7), 3), [c_array(arrays[1]), c_array(arrays[0]), ("i", 7), ("q", 3)]),
            ((arrays[0], arrays[1], np.float64(3.5), 2), [c_array(arrays[0]), c_array(arrays[1]), ("d", 3.5), ("q", 2)]),
            ((arrays[1], arrays[2], 11, 12), [c_array(arrays[1]), c_array(arrays[2]), ("q", 11), ("q", 12)]),
        ]
        kernels = []
        for blocks, (args, fields) in zip((1000, 1001, 7, 7, (3, 2), (3, 2), 5, 5, 1, 1, 2, 2, 3, 3), cases):
            scale[blocks, 64](*args)
            config, params = last_launch()
            kernels.append(last_kernel())
            grid = blocks if isinstance(blocks, tuple) else (blocks,)
            print(config[:6] == grid + (1,) * (3 - len(grid)) + (64, 1, 1), params == packed(*fields))
        # Cases 0-1, 2-3, 4-5, 6-7 and 9-10 share a signature, and so a compiled kernel; 8, 11 (a NumPy scalar
        # of the same size as 10's) and 12 have one of their own each, and 13 has the first's.
        print(all(kernels[i] == kernels[i + 1] for i in (0, 2, 4, 6, 9)),
              len({kernels[i] for i in (0, 2, 4, 6, 8, 9, 11, 12)}) == 8, kernels[13] == kernels[0])
        print(error_of(lambda: scale[1, 64](arrays[0], arrays[1], 2 ** 70, 1)))
        freed = jiasu.asarray(np.ones(10, np.float32))
        freed.free()
        print(error_of(lambda: scale[1, 64](freed, arrays[1], 1, 1)))
        scale[1, 64](arrays[3], arrays[0], 5, 6)
        print(last_launch()[1] == packed(c_array(arrays[3]), c_array(arrays[0]), ("q", 5), ("q", 6)))
    """))
    assert out[:14] == ["True True"] * 14, out
    assert out[14] == "True True True", out[14]
    assert out[15] == "ValueError: argument 2 of kernel 'scale' is an int too large for int64", out[15]
    assert out[16].startswith("InvalidArrayError: this array's memory was freed"), out[16]
    assert out[17] == "True"


def test_raw_kernel_repeat_calls_pack_each_argument_anew(fake_driver, nvrtc, tmp_path):
    """RawKernel keeps the last plain grid and block and packs plain arguments in its own buffer: each call
    must still launch with its own grid, block and arguments."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        k = jiasu.RawKernel('extern "C" __global__ void f(float* x, int n, double s) {}', 'f')
        x, y = jiasu.asarray(np.ones(4, np.float32)), jiasu.asarray(np.ones(9, np.float32))
        grid, block = (1000,), (128,)

        class Float(np.float64):  # a NumPy scalar type made in Python
            pass

        calls = [
            (grid, block, (x, 4, 0.5)), (grid, block, (y, 9, 1.5)), ((1001,), block, (x, 5, 2.5)),
            (grid, (64,), (y, 6, 3.5)), (3, 32, (x, 7, 4.5)), (3, 32, [y, 8, 5.5]),
            ([2, 2], [8, 4], (x, np.int32(3), np.float64(6.5))), ((2, 2), (8, 4), (y, 10, 7.5)),
            (grid, block, (y, np.int32(11), np.float64(8.5))), (grid, block, (x, np.int32(12), Float(9.5))),
            (grid, block, (y, np.int32(13), np.float64(10.5))),
        ]
        for g, b, args in calls:
            k(g, b, args)
            config, params = last_launch()
            g, b = (tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in (g, b))
            expected = packed(("Q", args[0].ptr), ("i", int(args[1])), ("d", float(args[2])))
            print(config[:6] == g + (1,) * (3 - len(g)) + b + (1,) * (3 - len(b)), params == expected)
        print(error_of(lambda: k(grid, block, (x, 2 ** 40, 1.0))))
    """))
    assert out[:11] == ["True True"] * 11, out
    assert out[11].startswith("ValueError: argument 1 = 1099511627776 does not fit the 4-byte parameter"), out[11]


def test_raw_kernel_construction_and_subclasses(fake_driver, nvrtc, tmp_path):
    """RawKernel(code, name, options=()) checks its arguments, and subclasses construct and launch as it does."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        source = 'extern "C" __global__ void f(float* x, int n) {}'
        print(error_of(lambda: jiasu.RawKernel(source)))
        print(error_of(lambda: jiasu.RawKernel(source, "f", 3)))
        print(error_of(lambda: jiasu.RawKernel(source, "f", ["-lineinfo", 2])))
        k = jiasu.RawKernel(code=source, name="f", options=["-lineinfo"])
        print(k.name, k.code == source)

        class Traced(jiasu.RawKernel):
            def __init__(self, name):
                super().__init__(source, name)

            def __call__(self, *args, **kwargs):
                print("traced")
                return super().__call__(*args, **kwargs)

        class Forgetful(jiasu.RawKernel):
            def __init__(self):
                pass

        x = jiasu.asarray(np.ones(4, np.float32))
        Traced("f")(2, 4, (x, 3))
        print(last_launch() == ((2, 1, 1, 4, 1, 1, 0), packed(("Q", x.ptr), ("i", 3))))
        print(error_of(lambda: Forgetful()(1, 4, (x, 3))))
    """))
    assert out[0] == "TypeError: RawKernel() missing required argument 'name' (pos 2)", out[0]
    assert out[1] == "TypeError: RawKernel options must be a sequence of str, not int", out[1]
    assert out[2] == "TypeError: RawKernel options must be a sequence of str, not list", out[2]
    assert out[3:6] == ["f True", "traced", "True"], out
    assert out[6] == "ValueError: this RawKernel was not initialised (a subclass's __init__ must call super().__init__)"


def test_foreign_device_arrays_are_read_once_per_launch(fake_driver, nvrtc, tmp_path):
    """An object with __cuda_array_interface__ is passed as the memory it describes; the interface (which
    torch builds anew at every read) is read as few times as the launch needs."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        class Foreign:
            def __init__(self, array, dlpack_device=None):
                self.array, self.reads = array, 0
                if dlpack_device:
                    self.__dlpack_device__ = lambda: dlpack_device

            @property
            def __cuda_array_interface__(self):
                self.reads += 1
                return {"shape": self.array.shape, "typestr": "<f4", "data": (self.array.ptr, False), "version": 3}

        x, y, out = (jiasu.asarray(np.full(8, v, np.float32)) for v in (1, 2, 0))
        for foreign in (Foreign(x), Foreign(x, dlpack_device=(2, 0))):
            add[1, 32](foreign, y, out)  # first, so that it also decides where the launch runs
            print(foreign.reads, last_launch()[1] == packed(c_array(x), c_array(y), c_array(out)))
        print(error_of(lambda: add[1, 32](Foreign(x, dlpack_device=(1, 0)), y, object())))

        class BadDevice:
            def __dlpack_device__(self):
                return ()

            def __dlpack__(self, stream=None):
                raise AssertionError("not reached")

        print(error_of(lambda: add[1, 32](x, y, BadDevice())))
    """))
    assert out[0] == "2 True", out  # one read decides the device, one wraps it
    assert out[1] == "1 True", out  # DLPack's device decides: only the wrapping reads it
    assert out[2].startswith("TypeError: argument 2 of kernel 'add': expected device memory"), out[2]
    assert out[3].startswith("TypeError: argument 2 of kernel 'add': __main__.BadDevice.__dlpack_device__() must "
                             "return (device_type, device_id), not ()"), out[3]


def test_mapped_and_managed_arrays_are_passed_by_address(fake_driver, nvrtc, tmp_path):
    """cuda.mapped_array and cuda.managed_array are NumPy arrays that kernels use in place: a launch passes their
    device address (the stand-in's is the host address, as with unified addressing) and stages nothing, where
    an array computed from one is ordinary host memory and is staged."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        from jiasu import cuda

        for make in (cuda.mapped_array, cuda.managed_array):
            a = make(10, np.float32)
            interface = a.__cuda_array_interface__
            print(type(a).__name__, cuda.is_cuda_array(a), interface["data"] == (a.ctypes.data, False),
                  a.device_ctypes_pointer.value == a.ctypes.data)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                add[1, 32](a, a, a)
                print(last_launch()[1] == packed(*[("Qq", a.ctypes.data, 10)] * 3), len(caught))
                view = a[1::3]
                add[1, 32](view, view, view)
                print(last_launch()[1] == packed(*[("Qqq", a.ctypes.data + 4, 3, 12)] * 3), len(caught))
                b = a + 1
                add[1, 32](b, b, b)
                print(cuda.is_cuda_array(b), last_launch()[1][:8] != struct.pack("<Q", b.ctypes.data), len(caught))
            device = jiasu.asarray(a)
            print(device.ptr == a.ctypes.data, device.shape)
    """))
    for first, warned in ((0, 1), (5, 0)):  # the kernel warns of staging once
        assert out[first] == "HostDeviceArray True True True", out
        assert out[first + 1:first + 5] == ["True 0", "True 0", f"False True {warned}", "True (10,)"], out


def test_grid_sync_kernels_launch_cooperatively(fake_driver, nvrtc, tmp_path):
    """A kernel that calls cg.this_grid() goes through cuLaunchCooperativeKernel, on the full path and the repeat
    one, and others do not; the stand-in holds 2 blocks on each of its 132 multiprocessors, which
    max_cooperative_grid_blocks reports and past which the launch is refused, saying how many fit."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        from jiasu import cuda

        fake.jiasu_fake_last_launch_cooperative.restype = ctypes.c_int

        @cuda.jit
        def reverse(a, out):
            i = cuda.grid(1)
            a[i] = i
            g = cuda.cg.this_grid()
            g.sync()
            out[i] = a[a.size - 1 - i]

        a, b = jiasu.zeros(264 * 128, np.int64), jiasu.zeros(264 * 128, np.int64)
        print(error_of(lambda: reverse.max_cooperative_grid_blocks(128)))
        for blocks in (264, 100, 264):  # the full path, then repeat launches
            reverse[blocks, 128](a, b)
            print(last_launch() == ((blocks, 1, 1, 128, 1, 1, 0), packed(c_array(a), c_array(b))),
                  fake.jiasu_fake_last_launch_cooperative())
        print(reverse.max_cooperative_grid_blocks(128), reverse.max_cooperative_grid_blocks((8, 4, 4)))
        print(error_of(lambda: reverse[265, 128](a, b)))
        add[1, 32](a, b, b)
        print(fake.jiasu_fake_last_launch_cooperative())
    """))
    assert out[0] == ("ValueError: kernel 'reverse' is not compiled yet: launch it, or call reverse.specialize(*args), "
                      "before asking for max_cooperative_grid_blocks"), out[0]
    assert out[1:4] == ["True 1"] * 3, out
    assert out[4] == "264 264", out[4]
    assert out[5] == ("LaunchError: kernel 'jiasu_kernel_reverse' calls cg.this_grid(), so its launch is cooperative (every block "
                      "resident at once), and a grid of 265 blocks is more than the 264 blocks of 128 threads that "
                      "jiasu fake GPU holds at once (2 per multiprocessor, 132 multiprocessors; see "
                      "max_cooperative_grid_blocks)"), out[5]
    assert out[6] == "0", out[6]


def test_graphs_record_launches_and_replay_them(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        fake.jiasu_fake_graph_launches.restype = ctypes.c_int

        def out_pointer():  # the third array parameter's data pointer, in the last launch's parameters
            return struct.unpack_from("Q", last_launch()[1], 32)[0]

        def pointer(a):
            return a.__cuda_array_interface__["data"][0]

        x = jiasu.asarray(np.ones(8, np.float32))
        y, z, w = (jiasu.zeros(8, np.float32) for _ in range(3))
        add[1, 8](x, x, y)
        before = last_launch()
        with jiasu.graph() as g:
            add[1, 8](x, y, z)
            add[2, 8](y, y, z)
        print(last_launch() == before, g.nodes, g.captured, g.updated, fake.jiasu_fake_graph_launches())
        g.replay()
        print(fake.jiasu_fake_graph_launches(), last_launch()[0][0], out_pointer() == pointer(z))
        with g.update():
            add[1, 8](x, y, w)
            add[3, 8](y, y, w)
        print(g.updated, g.nodes)
        g.replay()
        print(fake.jiasu_fake_graph_launches(), last_launch()[0][0], out_pointer() == pointer(w))
        with g:
            add[5, 8](x, y, z)
        print(g.updated, g.nodes)
        g.replay()
        print(last_launch()[0][0], out_pointer() == pointer(z))

        def copy_inside(graph):
            with graph:
                add[1, 8](x, y, z)
                z.get()
        fresh = jiasu.graph()
        print(error_of(lambda: copy_inside(fresh)))
        print(fresh.captured, fresh.capturing)
        print(error_of(fresh.replay))
        print(error_of(lambda: copy_inside(g)))
        g.replay()
        print(last_launch()[0][0])
        with jiasu.graph() as made:
            s = x + y
        made.replay()
        print(made.nodes >= 1, fake.jiasu_fake_graph_launches(), s.shape)
        with jiasu.graph():
            print(error_of(lambda: jiasu.graph().__enter__()))
            print(error_of(jiasu.synchronize))
        print(error_of(lambda: jiasu.graph(stream="no")))
        print(z.get().shape)  # after the block, copies work again
    """))
    assert out[0] == "True 2 True False 0", out
    assert out[1] == "1 2 True", out
    assert out[2] == "True 2", out
    assert out[3] == "2 3 True", out
    assert out[4] == "False 1", out
    assert out[5] == "5 True", out
    assert out[6].startswith("CudaError: a copy from the GPU to host memory cannot be part of a CUDA graph"), out[6]
    assert out[7] == "False False", out
    assert out[8].startswith("ValueError: the graph has nothing to replay yet"), out[8]
    assert out[9].startswith("CudaError: a copy from the GPU"), out[9]
    assert out[10] == "5", out  # the failed capture left the graph as it was
    assert out[11] == "True 5 (8,)", out
    assert out[12].startswith("CudaError: this thread is already capturing a CUDA graph"), out[12]
    assert out[13].startswith("CudaError: waiting for the GPU cannot be part of a CUDA graph"), out[13]
    assert out[14].startswith("TypeError: stream must be None"), out[14]
    assert out[15] == "(8,)", out[12:]
    assert len(out) == 16, out


def test_python_kernels_in_a_graph_may_overlap_the_kernel_before(fake_driver, nvrtc, tmp_path):
    """A @jiasu.kernel's code starts by waiting for the grid before it, so inside jiasu.graph() it is launched with
    the programmatic-stream-serialization attribute (the stand-in is of compute capability 9.0): the graph may start
    it as that grid ends. Eager launches, and a RawKernel whose code does not wait, are launched the usual way."""
    out = run_with_fake(fake_driver, tmp_path, textwrap.dedent(READ_LAST_LAUNCH) + textwrap.dedent("""
        fake.jiasu_fake_last_launch_overlaps.restype = ctypes.c_int
        overlaps = fake.jiasu_fake_last_launch_overlaps
        raw = jiasu.RawKernel('extern "C" __global__ void f(float* x) {}', 'f')
        x = jiasu.asarray(np.ones(8, np.float32))
        y = jiasu.zeros(8, np.float32)
        add[1, 8](x, x, y)
        print("eager", overlaps(), "jiasu::wait_for_prior_grid();" in next(iter(add.inspect_cuda().values())))
        with jiasu.graph() as g:
            add[1, 8](x, x, y)
            add[2, 8](x, y, y)
        g.replay()
        print("graph", overlaps(), last_launch()[0][0])
        with jiasu.graph() as g:
            add[1, 8](x, x, y)
            raw(1, 8, (x,))
        g.replay()
        print("raw", overlaps())
        add[1, 8](x, x, y)
        print("after", overlaps())
    """))
    assert out == ["eager 0 True", "graph 1 2", "raw 0", "after 0"], out


def test_profiles_record_gpu_launches(fake_driver, nvrtc, tmp_path):
    out = run_with_fake(fake_driver, tmp_path, """
        x = jiasu.asarray(np.ones(64, np.float32))
        y = jiasu.zeros(64, np.float32)
        with jiasu.profile() as p:
            add[2, 32](x, x, y)
            add[2, 32](x, y, y)
            with jiasu.graph():
                add[1, 64](x, x, y)  # recorded into the graph, not run: not timed
            s = x + y
        for r in p.records:
            print(r["name"], r["device"], r["grid"], r["block"], r["bytes_read"], r["bytes_written"], r["ms"] > 0,
                  r["registers"] is not None)
        print(p.summary()[0]["calls"])
    """)
    assert out[0] == "add 0 (2, 1, 1) (32, 1, 1) 512 256 True True", out
    assert out[1] == "add 0 (2, 1, 1) (32, 1, 1) 512 256 True True", out
    assert len(out) == 4 and out[2].split()[1] == "0" and out[2].split()[-2:] == ["True", "True"], out
    assert out[3] == "2", out
