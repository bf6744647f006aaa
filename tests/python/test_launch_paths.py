"""The launch paths and device arrays on a machine without a GPU, against tools/launch-overhead/fake_driver.cpp:
a stand-in libcuda whose device memory is host memory and whose launches do nothing. What runs is jiasu's own
code: argument classification and its errors, launch-configuration checks, NumPy staging, array transfers.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_SOURCE = os.path.join(ROOT, "tools", "launch-overhead", "fake_driver.cpp")


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not compiler:
        pytest.skip("no C++ compiler to build the stand-in driver")
    folder = tmp_path_factory.mktemp("fake_cuda")
    library = folder / "libcuda.so.1"
    subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-o", str(library), FAKE_SOURCE], check=True)
    return str(library)


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
        print(np.array_equal(a[::2].copy().get(), host[::2]))
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
    assert out[3].startswith("CompileError: ") and "'add' has 3 parameters but is called with 2 arguments" in out[3]
    assert out[4].startswith("TypeError: argument 2 of kernel 'add': expected device memory"), out[4]
    assert out[5].startswith("TypeError: kernel arguments are positional; the only keyword is device="), out[5]
    assert out[6] == "TypeError: a kernel is launched with a configuration: add[blocks, threads](...)"
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
    """)
    assert out[0] == "no error" and out[1] == "no error"
    assert out[2].startswith("TypeError: argument 0 of kernel 'f': expected device memory"), out[2]
    assert "jiasu.asarray" in out[2]
    assert out[3].startswith("TypeError: argument 1 of kernel 'f'"), out[3]
    assert out[4].startswith("TypeError: kernel arguments must be a tuple"), out[4]
    assert out[5].startswith("InvalidArrayError: this array's memory was freed"), out[5]


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
