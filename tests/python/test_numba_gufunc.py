"""Numba's generalized ufuncs on jiasu: `@cuda.guvectorize(signatures, layout)` and, under `python -m jiasu numba`,
`numba.guvectorize(..., target="cuda")`, checked against NumPy (float64 references). Runs on the CPU backend
everywhere and on CUDA where a GPU is present (host arrays then go to the GPU and back)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu
from jiasu import cuda

pytestmark = pytest.mark.usefixtures("each_backend")


@cuda.guvectorize(["void(float32[:, :], float32[:, :], float32[:, :])",
                   "void(float64[:, :], float64[:, :], float64[:, :])"], "(m,n),(n,p)->(m,p)")
def matmul(a, b, c):
    m, n = a.shape
    p = b.shape[1]
    for i in range(m):
        for j in range(p):
            c[i, j] = 0
            for k in range(n):
                c[i, j] += a[i, k] * b[k, j]


@cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def row_sum(x, total):
    s = 0.0
    for v in x:
        s += v
    total[0] = s  # a scalar output is a 1-element array, as Numba passes it


@cuda.guvectorize(["void(float32, float32[:], float32[:], float32[:])"], "(),(t),(t)->(t)")
def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@cuda.guvectorize(["void(int32[:], int32[:], float64[:])"], "(x)->(x),(x)")
def copy_and_scale(a, same, scaled):
    for i in range(a.size):
        same[i] = a[i]
        scaled[i] = a[i] * 1.5


def reference_matmul(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def test_matmul_layout_over_loop_dimensions_of_any_rank():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 2, 4)).astype(np.float32)
    b = rng.standard_normal((7, 4, 3)).astype(np.float32)
    c = matmul(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (7, 2, 3)
    np.testing.assert_allclose(c, reference_matmul(a, b), rtol=1e-5, atol=1e-5)
    # Two loop dimensions, float64: the other signature.
    a, b = rng.standard_normal((3, 5, 2, 4)), rng.standard_normal((3, 5, 4, 6))
    c = matmul(a, b)
    assert c.dtype == np.float64 and c.shape == (3, 5, 2, 6)
    np.testing.assert_allclose(c, np.matmul(a, b), rtol=1e-12)
    # No loop dimension: one matrix product.
    np.testing.assert_allclose(matmul(a[0, 0], b[0, 0]), a[0, 0] @ b[0, 0], rtol=1e-12)


def test_loop_dimensions_broadcast_as_numpys():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((10, 3, 3)), rng.standard_normal((3, 3))
    np.testing.assert_allclose(matmul(x, y), np.matmul(x, y), rtol=1e-12)  # y for every x
    a, b = rng.standard_normal((4, 1, 2, 3)), rng.standard_normal((5, 3, 2))
    c = matmul(a, b)
    assert c.shape == (4, 5, 2, 2)
    np.testing.assert_allclose(c, np.matmul(a, b), rtol=1e-12)
    # A strided view (a transposed batch) is read through its strides.
    t = rng.standard_normal((3, 4, 6)).transpose(2, 1, 0)[::2]  # (3, 4, 3)
    np.testing.assert_allclose(matmul(t, y), np.matmul(t, y), rtol=1e-12)


def test_scalar_outputs_and_scalar_inputs():
    x = np.random.default_rng(3).standard_normal((4, 6, 9))
    sums = row_sum(x)
    assert sums.shape == (4, 6)
    np.testing.assert_allclose(sums, x.sum(axis=2), rtol=1e-12)
    assert row_sum(np.arange(5.0)).shape == ()  # no loop dimension: a 0-d result
    assert float(row_sum(np.arange(5.0))) == 10.0

    xs, ys = np.arange(10, dtype=np.float32).reshape(5, 2), np.ones((5, 2), np.float32)
    np.testing.assert_array_equal(saxpy(np.float32(2), xs, ys), 2 * xs + ys)
    a = np.arange(5, dtype=np.float32)  # one a per row
    np.testing.assert_array_equal(saxpy(a, xs, ys), a[:, None] * xs + ys)
    # A Python float is a float64, which float32 casts to safely: Numba's rule takes the signature and converts it.
    np.testing.assert_array_equal(saxpy(0.5, xs, ys), 0.5 * xs + ys)


def test_old_style_scalar_given_as_a_one_element_array():
    @cuda.guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)")
    def shift(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]

    a, b = np.array([1, 2, 3, 4], np.int32), np.array([2], np.int32)
    res = np.zeros(4, np.int32)
    assert shift(a, b, out=res) is res  # the loop is (1,): the output may leave out its leading length-1 axis
    np.testing.assert_array_equal(res, a + 2)
    a = np.arange(8, dtype=np.int32).reshape(2, 4)
    b = np.array([2, 10], np.int32)
    np.testing.assert_array_equal(shift(a, b), a + b[:, None])


def test_outputs_given_positionally_or_as_out():
    a = np.arange(1, 11, dtype=np.int32)
    same, scaled = np.zeros(10, np.int32), np.zeros(10)
    assert copy_and_scale(a, same, scaled) == (same, scaled)
    np.testing.assert_array_equal(same, a)
    np.testing.assert_array_equal(scaled, a * 1.5)
    made = copy_and_scale(a)
    assert isinstance(made, tuple) and made[1].dtype == np.float64
    np.testing.assert_array_equal(made[1], a * 1.5)
    out = (np.zeros(10, np.int32), np.zeros(10))
    assert copy_and_scale(a, out=out) == out
    np.testing.assert_array_equal(out[1], a * 1.5)

    x = np.random.default_rng(4).standard_normal((3, 7))
    into = np.full(3, np.nan)
    assert row_sum(x, out=into) is into
    np.testing.assert_allclose(into, x.sum(axis=1), rtol=1e-12)
    strided = np.zeros(6)[::2]  # a host output that is a view
    row_sum(x, strided)
    np.testing.assert_allclose(strided, x.sum(axis=1), rtol=1e-12)


def test_device_arrays_in_device_arrays_out():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 2, 3)).astype(np.float32), rng.standard_normal((6, 3, 4)).astype(np.float32)
    stream = cuda.stream()
    da, db = cuda.to_device(a, stream), cuda.to_device(b, stream)
    dc = matmul(da, db, stream=stream)
    assert isinstance(dc, jiasu.Array)
    np.testing.assert_allclose(dc.copy_to_host(), reference_matmul(a, b), rtol=1e-5, atol=1e-5)
    given = cuda.device_array((6, 2, 4), np.float32)
    assert matmul(da, db, out=given, stream=stream) is given
    np.testing.assert_allclose(given.copy_to_host(), reference_matmul(a, b), rtol=1e-5, atol=1e-5)
    # A host input beside a device one is copied to the device; the result stays there.
    mixed = matmul(a, db)
    assert isinstance(mixed, jiasu.Array)
    np.testing.assert_allclose(mixed.copy_to_host(), reference_matmul(a, b), rtol=1e-5, atol=1e-5)
    # A NumPy output of a device call is filled and returned.
    host_out = np.zeros((6, 2, 4), np.float32)
    assert matmul(da, db, host_out) is host_out
    np.testing.assert_allclose(host_out, reference_matmul(a, b), rtol=1e-5, atol=1e-5)


def test_signature_chosen_by_dtype_and_host_inputs_converted_as_numba_does():
    @cuda.guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)")
    def scale(k, b, out):
        for i in range(b.size):
            out[i] = k * b[i]

    b = np.arange(10, dtype=np.int32)
    out = scale(np.int64(2), b)  # int64 is converted to the signature's int32
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, 2 * b)
    with pytest.raises(TypeError, match="a device array is not converted .*does not support .astype()"):
        scale(cuda.to_device(np.array(2, np.int64)), b)
    with pytest.raises(TypeError, match=r"no signature of the gufunc \(\),\(t\)->\(t\) takes inputs of dtypes "
                                        r"\(float32, int32\)"):
        scale(np.float32(2), b)


def test_empty_loop_launches_nothing():
    sums = row_sum(np.zeros((0, 4)))
    assert sums.shape == (0,) and sums.dtype == np.float64


def test_numba_type_objects_as_signatures():
    numba = pytest.importorskip("numba")
    f32 = numba.float32

    @cuda.guvectorize([numba.void(f32[:], f32[:])], "(x)->(x)")
    def double(a, b):
        for i in range(b.size):
            b[i] = 2 * a[i]

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(double(a), 2 * a)
    with pytest.raises(TypeError, match="guvectorized functions cannot return values: .* specifies int32 return"):
        cuda.guvectorize([numba.int32(numba.int32[:], numba.int32[:])], "(m)->(m)")(lambda x, y: None)


def test_call_errors_say_what_is_wrong():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"This gufunc accepts 2 positional arguments \(when providing input only\) "
                                        r"or 3 positional arguments \(when providing input and output\)\. Got 1 "
                                        r"positional argument\."):
        matmul(a)
    with pytest.raises(ValueError, match="cannot specify argument 'out' as both positional and keyword"):
        matmul(a, a.T, a, out=a)
    with pytest.raises(ValueError, match=r"disagree on its core dimension n: 3 and 2"):
        matmul(a, a)
    with pytest.raises(ValueError, match=r"loop dimensions .* do not broadcast together: \(2,\) \(3,\)"):
        matmul(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32))
    with pytest.raises(ValueError, match=r"output 0 of the gufunc \(m,n\),\(n,p\)->\(m,p\) has shape \(3,3\) where "
                                         r"the result has shape \(2,2\)"):
        matmul(a, a.T, np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match=r"output 0 .* is an array of float64 where its signature .* makes float32"):
        matmul(a, a.T, np.zeros((2, 2)))
    with pytest.raises(TypeError, match="an output is a device array or a NumPy array, not list"):
        matmul(a, a.T, [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match=r"fewer dimensions than its core dimensions \(m,n\)"):
        matmul(np.ones(3, np.float32), a)


def test_decoration_errors_say_what_is_wrong():
    def f(a, b):
        pass

    with pytest.raises(ValueError, match="bad gufunc layout '\\(n\\)->\\(q\\)': the output dimension q is no input's"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->(q)")(f)
    with pytest.raises(ValueError, match="bad gufunc layout '\\(n\\)\\(n\\)': no '->'"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n)(n)")(f)
    with pytest.raises(TypeError, match="it has 3 parameters and the layout has 2 operands"):
        cuda.guvectorize(["void(float32[:], float32[:], float32[:])"], "(n)->(n)")(f)
    with pytest.raises(TypeError, match="input 0 is an array of 2 dimensions where the layout gives it 1, \\(n\\)"):
        cuda.guvectorize(["void(float32[:, :], float32[:])"], "(n)->(n)")(f)
    with pytest.raises(ValueError, match="input 0 is a number where the layout gives it the core dimensions \\(n\\)"):
        cuda.guvectorize(["void(float32, float32[:])"], "(n)->(n)")(f)
    with pytest.raises(TypeError, match="guvectorized functions cannot return values: signature int32\\(int32\\[:\\], "
                                        "int32\\[:\\]\\) specifies int32 return type"):
        cuda.guvectorize(["int32(int32[:], int32[:])"], "(n)->(n)")(f)
    with pytest.raises(TypeError, match="unknown type 'float31'"):
        cuda.guvectorize(["void(float31[:], float32[:])"], "(n)->(n)")(f)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->(n)", nopython=False)
    with pytest.raises(TypeError, match="The following target options are not supported: 'what1', 'ever2'"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->(n)", what1=True, ever2=False)
    with pytest.raises(TypeError, match="takes the signatures and the layout"):
        cuda.guvectorize("(n)->(n)")
    assert matmul.__name__ == "matmul"


GUFUNC_SCRIPT = '''\
import numpy as np
import numba
from numba import guvectorize

@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target="cuda")
def dot(x, y, r):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    r[0] = s

a = np.arange(12.0).reshape(3, 4)
print("dot", dot(a, a).tolist())
try:
    numba.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
except NotImplementedError as e:
    print(e)
'''


def test_numba_guvectorize_under_python_m_jiasu_numba(tmp_path, each_backend):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(GUFUNC_SCRIPT))
    done = subprocess.run([sys.executable, "-m", "jiasu", "numba", str(script)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "JIASU_BACKEND": each_backend})
    assert done.returncode == 0, done.stderr
    expected = (np.arange(12.0).reshape(3, 4) ** 2).sum(axis=1).tolist()
    assert f"dot {expected}" in done.stdout
    assert "numba.guvectorize(target='cpu') is not served by jiasu; target='cuda' is" in done.stdout
