"""The CPU backend from Python: choosing it, arrays in host memory, where launches run, NumPy arrays used
in place, and the errors of what it cannot do. Runs on every machine (no GPU needed)."""
import contextlib
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jiasu

from support import run_python


@jiasu.kernel
def scale(x, out, factor):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] * factor


def test_backend_names(cpu_backend):
    assert jiasu.get_backend() == "cpu"
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        jiasu.set_backend("tpu")
    with jiasu.backend("cpu"):
        assert jiasu.get_backend() == "cpu"
    assert jiasu.get_device() == jiasu.Device("cpu")
    assert jiasu.Device("cpu").type == "cpu" and jiasu.Device("cpu").id is None
    assert repr(jiasu.Device("cpu")) == "<jiasu.Device cpu>"
    with pytest.raises(ValueError, match="unknown device 'cpux'"):
        jiasu.Device("cpux")


def test_environment_chooses_the_backend_at_first_use():
    ok = run_python("""
        import jiasu
        print(jiasu.get_backend())
    """, JIASU_BACKEND="cpu")
    assert ok.returncode == 0 and ok.stdout.strip() == "cpu", ok.stderr
    bad = run_python("""
        import jiasu                     # never fails at import
        try:
            jiasu.get_backend()
        except ValueError as e:
            print("ValueError:", e)
    """, JIASU_BACKEND="quantum")
    assert bad.returncode == 0, bad.stderr
    assert "unknown backend 'quantum'" in bad.stdout


def test_cpu_arrays_behave_like_gpu_arrays(cpu_backend, rng):
    host = rng.random((4, 6))
    a = jiasu.asarray(host)
    assert a.device == jiasu.Device("cpu")
    host[0, 0] = -1  # asarray copied: the array does not see later changes of its source
    assert a.get()[0, 0] != -1
    np.testing.assert_array_equal(a[1:3, ::2].get(), np.asarray(host)[1:3, ::2])
    view = np.asarray(a)  # __array_interface__: a NumPy view of the same memory
    view[2, 3] = 99.0
    assert a.get()[2, 3] == 99.0
    a[0] = 7
    np.testing.assert_array_equal(a.get()[0], np.full(6, 7.0))
    b = a.copy()
    b[:] = 0
    assert a.get()[0, 0] == 7 and b.get().sum() == 0
    z = jiasu.full((3, 2), 2.5, dtype=np.float32)
    np.testing.assert_array_equal(np.from_dlpack(z), np.full((3, 2), 2.5, np.float32))
    assert not hasattr(z, "__cuda_array_interface__")
    assert z.__dlpack_device__() == (1, 0)


def test_from_dlpack_views_numpy_in_place(cpu_backend):
    x = np.arange(5, dtype=np.int32)
    a = jiasu.from_dlpack(x)
    assert a.device == jiasu.Device("cpu") and a.ptr == x.ctypes.data
    x[2] = 40
    assert a.get()[2] == 40


def test_numpy_arguments_are_used_in_place(cpu_backend, rng):
    x = rng.random(1000, dtype=np.float32)
    out = np.full(1000, np.nan, np.float32)
    with no_performance_warning():
        scale[4, 256](x, out, 3.0)
    np.testing.assert_allclose(out, x * np.float32(3.0), rtol=1e-6)
    # A strided view is used in place too: only its elements change.
    big = np.zeros(2000, np.float32)
    scale[4, 256](x, big[::2], 1.0)
    np.testing.assert_array_equal(big[::2], x)
    assert not big[1::2].any()


@contextlib.contextmanager
def no_performance_warning():
    """No copies on the CPU backend, so no PerformanceWarning either."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", jiasu.PerformanceWarning)
        yield


def test_read_only_numpy_output_is_refused(cpu_backend):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        scale[1, 8](x, out, 2.0)


def test_device_keyword_per_call(rng):
    x = rng.random(64)
    out = np.zeros(64)
    scale[1, 64](x, out, 2.0, device="cpu")
    np.testing.assert_allclose(out, 2 * x)
    with pytest.raises(TypeError, match="the only keyword is device="):
        scale[1, 64](x, out, 2.0, stream=None)


def test_launch_limits_match_cuda(cpu_backend):
    x = np.ones(8, np.float32)
    with pytest.raises(jiasu.LaunchError, match="1024 threads"):
        scale[1, 2048](x, x, 1.0)


def test_no_compiler_is_a_clear_error_at_first_compile(tmp_path):
    result = run_python("""
        import numpy as np, jiasu
        import sys
        sys.path.insert(0, %r)
        from test_cpu_backend import scale
        try:
            scale[1, 8](np.ones(8), np.zeros(8), 1.0)
        except jiasu.LibraryNotFoundError as e:
            print("LibraryNotFoundError:", str(e).splitlines()[0])
    """ % os.path.dirname(os.path.abspath(__file__)), JIASU_BACKEND="cpu", JIASU_CXX="/nonexistent/c++",
        JIASU_CACHE_DIR=str(tmp_path / "cache"))  # an empty cache: the compiler must run
    assert result.returncode == 0, result.stderr
    assert "LibraryNotFoundError: JIASU_CXX=/nonexistent/c++" in result.stdout, result.stdout


def test_thread_count_comes_from_the_environment():
    result = run_python("""
        import jiasu
        print(jiasu._core.cpu_threads())
    """, JIASU_CPU_THREADS="3")
    assert result.returncode == 0 and result.stdout.strip() == "3", result.stderr


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two CPUs to tell one from all")
def test_thread_count_follows_the_cpu_affinity_mask():
    """Without JIASU_CPU_THREADS the pool has a thread per CPU the process may run on (taskset, cpusets)."""
    result = run_python("""
        import os
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        import jiasu
        print(jiasu._core.cpu_threads(), len(os.sched_getaffinity(0)))
    """, JIASU_CPU_THREADS=None)
    assert result.returncode == 0 and result.stdout.split() == ["1", "1"], result.stderr


def test_raw_cuda_kernels_refuse_the_cpu_backend(cpu_backend):
    kernel = jiasu.RawKernel('extern "C" __global__ void f(float* x) { x[0] = 1; }', "f")
    with pytest.raises(jiasu.CudaError, match="need a GPU"):
        kernel((1,), (1,), (np.zeros(1, np.float32),))
    with pytest.raises(jiasu.CudaError, match="need a GPU"):
        jiasu.SourceModule('extern "C" __global__ void f() {}')


def test_native_tuning_builds_its_own_library(tmp_path):
    code = """
        import numpy as np, jiasu, sys
        sys.path.insert(0, %r)
        from test_cpu_backend import scale
        x = np.arange(10.0)
        out = np.zeros(10)
        scale[1, 16](x, out, 2.0)
        assert (out == 2 * x).all()
        print("ok")
    """ % os.path.dirname(os.path.abspath(__file__))
    cache = tmp_path / "cache"
    plain = run_python(code, JIASU_BACKEND="cpu", JIASU_CACHE_DIR=str(cache))
    entries = sum(len(files) for _, _, files in os.walk(cache))
    native = run_python(code, JIASU_BACKEND="cpu", JIASU_CACHE_DIR=str(cache), JIASU_CPU_NATIVE="1")
    assert plain.stdout.strip() == native.stdout.strip() == "ok", plain.stderr + native.stderr
    assert sum(len(files) for _, _, files in os.walk(cache)) > entries  # -march=native: another cache entry


def test_kernels_calling_device_functions_are_freed(tmp_path):
    """A kernel and the device function it calls refer to each other through their module's globals: the
    garbage collector must see that cycle, or the kernel outlives the interpreter (nanobind reports it)."""
    (tmp_path / "cycle.py").write_text(textwrap.dedent("""
        import numpy as np, jiasu

        @jiasu.func
        def twice(a):
            return a * 2

        @jiasu.kernel
        def k(x):
            i = jiasu.grid(1)
            if i < x.size:
                x[i] = twice(x[i])

        def make_and_drop():
            @jiasu.kernel
            def local(x):
                i = jiasu.grid(1)
                if i < x.size:
                    x[i] = twice(x[i])
            x = np.ones(8, np.float32)
            local[1, 8](x)
            return x
    """))
    result = run_python("""
        import gc, sys
        sys.path.insert(0, %r)
        import numpy as np, cycle
        x = np.ones(8, np.float32)
        cycle.k[1, 8](x)
        assert (cycle.make_and_drop() == 2).all() and (x == 2).all()
        print("ok")
    """ % str(tmp_path), JIASU_BACKEND="cpu")
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    assert "leaked" not in result.stderr, result.stderr


def test_inspect_host_shows_the_generated_cpp(cpu_backend):
    x = np.arange(4, dtype=np.float64)
    scale[1, 4](x, np.zeros(4), 2.0)
    sources = scale.inspect_host()
    assert "(array(float64, 1d, C), array(float64, 1d, C), float)" in sources
    code = sources["(array(float64, 1d, C), array(float64, 1d, C), float)"]
    assert "static void jiasu_kernel_blocks(" in code  # thread loops: the kernel has no barrier
    assert "test_cpu_backend.py:" in code and "out[i] = x[i] * factor" in code  # annotated with the Python


def test_fibers_get_stacks_for_large_local_arrays(tmp_path):
    """A block run as fibers gives each thread a stack with room for its local arrays (here 256 KiB, four
    times the usual fiber stack), as a GPU thread has local memory for them. In a process of its own: a
    stack too small would crash it."""
    script = tmp_path / "big_local.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, jiasu

        @jiasu.kernel
        def big_local(out):
            buf = jiasu.local.array(32768, np.float64)
            t = jiasu.threadIdx.x
            for i in range(32768):
                buf[i] = i + t
            jiasu.syncwarp()  # a warp operation: the block's threads run as fibers
            s = 0.0
            for i in range(32768):
                s += buf[i]
            out[jiasu.grid(1)] = s

        @jiasu.kernel
        def lane_ids(out):  # fibers too, with the usual stacks: the OS thread's stacks serve both kernels
            jiasu.syncwarp()
            out[jiasu.grid(1)] = jiasu.laneid

        lanes = np.zeros(256)
        for _ in range(3):
            lane_ids[1, 256](lanes)
            out = np.zeros(128)
            big_local[2, 64](out)
        print(" ".join(str(v) for v in out[[0, 1, 63, 64, 127]]))
        print(np.array_equal(lanes, np.arange(256) % 32))
    """))
    env = dict(os.environ, JIASU_BACKEND="cpu", JIASU_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    t = np.array([0, 1, 63, 0, 63], dtype=np.float64)
    sums, lanes_ok = result.stdout.splitlines()
    np.testing.assert_array_equal(np.array(sums.split(), dtype=np.float64), 32767 * 32768 / 2 + 32768 * t)
    assert lanes_ok == "True"
