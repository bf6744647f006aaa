"""k.analyze with a GPU present: it still runs on the CPU backend; a jiasu GPU array is analysed as a host copy,
and the device array keeps its contents."""
import numpy as np
import pytest

import jiasu

pytestmark = pytest.mark.gpu


@jiasu.kernel
def strided_double(x, out):
    i = jiasu.grid(1)
    out[i] = 2 * x[i * 4]


def test_gpu_arrays_are_analysed_as_host_copies():
    x = jiasu.asarray(np.arange(256, dtype=np.float32))
    out = jiasu.zeros(64, np.float32)
    assert out.device.type != "cpu"
    report = strided_double.analyze(2, 32, x, out)
    load = [r for r in report.rows if r["array"] == "x"][0]
    assert load["requests"] == 2 and load["sectors_per_request"] == 16.0 and load["efficiency"] == 25.0
    np.testing.assert_array_equal(out.get(), np.zeros(64, np.float32))  # the kernel wrote the host copy
    strided_double[2, 32](x, out)  # the GPU launch of the same kernel is unaffected by the analysis
    np.testing.assert_array_equal(out.get(), 2 * np.arange(0, 256, 4, dtype=np.float32))
