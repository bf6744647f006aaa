"""Behaviour on a machine without a usable GPU: clear Python exceptions, never a crash."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.skipif(jiasu.is_available(), reason="a CUDA GPU is present")

SOURCE = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
"""

# What a good message names: the missing driver library or the missing device.
CAUSE = re.compile(r"driver|libcuda|GPU|device|JIASU_LIBCUDA", re.IGNORECASE)
NO_GPU_ERRORS = (jiasu.CudaError, jiasu.LibraryNotFoundError)


def check_no_gpu_error(excinfo):
    error = excinfo.value
    assert isinstance(error, jiasu.JiasuError)
    assert isinstance(error, NO_GPU_ERRORS), type(error)
    assert CAUSE.search(str(error)), str(error)
    if isinstance(error, jiasu.CudaError):
        assert error.name.startswith("CUDA_ERROR_"), error.name
    return error


def test_arrays_default_to_the_cpu_backend():
    assert jiasu.get_backend() == "cpu"
    a = jiasu.zeros(3)
    assert a.device == jiasu.Device("cpu")
    np.testing.assert_array_equal(a.get(), np.zeros(3))


def test_gpu_arrays_raise():
    with pytest.raises(jiasu.JiasuError) as excinfo:
        jiasu.zeros(3, device="cuda")
    check_no_gpu_error(excinfo)
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.empty((2, 2), dtype=jiasu.float32, device=0)
    check_no_gpu_error(excinfo)
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.asarray([1.0, 2.0], device="cuda")
    check_no_gpu_error(excinfo)
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.set_backend("cuda")
    check_no_gpu_error(excinfo)
    assert jiasu.get_backend() == "cpu"


def test_raw_kernel_call_raises():
    kernel = jiasu.RawKernel(SOURCE, "add")  # construction compiles nothing and needs no GPU
    assert kernel.name == "add"
    with pytest.raises(jiasu.CudaError) as excinfo:
        kernel((1,), (1,), ())
    check_no_gpu_error(excinfo)
    assert "need a GPU" in str(excinfo.value) and "CPU backend" in str(excinfo.value)
    with pytest.raises(jiasu.CudaError):  # stable on a second call
        kernel((1,), (1,), ())


def test_raw_kernel_compile_raises():
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.RawKernel(SOURCE, "add").compile()
    check_no_gpu_error(excinfo)


def test_source_module_raises():
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.SourceModule(SOURCE)
    check_no_gpu_error(excinfo)


def test_device_raises():
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        jiasu.Device(0)
    check_no_gpu_error(excinfo)
    assert jiasu.get_device() == jiasu.Device("cpu")  # the active backend's device


def test_streams_and_events_are_the_cpus_on_the_cpu_backend():
    # CPU work is done when its call returns: nothing to wait for, and events time the host clock.
    stream, start, end = jiasu.Stream(), jiasu.Event(), jiasu.Event()
    assert stream.device == jiasu.Device("cpu") and stream.done and stream.ptr == 0
    start.record(stream)
    a = jiasu.zeros(1 << 16) + 1
    end.record(stream)
    stream.wait_event(end)
    stream.synchronize()
    end.synchronize()
    assert end.done and start.elapsed_time(end) >= 0 and a.get().sum() == 1 << 16
    with pytest.raises(ValueError, match="timing=True"):
        start.elapsed_time(jiasu.Event(timing=False))


def test_gpu_streams_and_events_raise():
    with pytest.raises(NO_GPU_ERRORS) as excinfo:
        with jiasu.backend("cuda"):
            jiasu.Stream()
    check_no_gpu_error(excinfo)


@jiasu.kernel
def _fill(out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = 1


def test_kernel_resources_are_the_cpu_backends():
    signature = _fill.specialize(np.zeros(4))  # a compiled signature whose resources are asked for
    resources = _fill.resources()[signature]
    assert resources.registers is None and resources.const_bytes is None  # what only a GPU's driver knows
    assert resources.shared_bytes == 0 and resources.local_bytes == 0
    assert resources.device == jiasu.Device("cpu")
    assert resources.occupancy(256) is None


def test_queries_do_not_raise():
    assert jiasu.is_available() is False
    assert jiasu.devices() == []


def test_override_is_named_in_message():
    code = textwrap.dedent("""
        import jiasu
        for attempt in (lambda: jiasu.zeros(3, device="cuda"), lambda: jiasu.Device(0), lambda: jiasu.set_backend("cuda")):
            try:
                attempt()
            except jiasu.JiasuError as e:
                print(type(e).__name__, "|", str(e).replace("\\n", " "))
            else:
                print("NO ERROR")
    """)
    env = dict(os.environ, JIASU_LIBCUDA="/nonexistent")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3, result.stdout
    for line in lines:
        kind, _, message = line.partition(" | ")
        assert kind == "LibraryNotFoundError", line
        assert "JIASU_LIBCUDA" in message, line
        assert "/nonexistent" in message, line
