"""jiasu.nn's activations, softmax, log_softmax, cross_entropy and linear, forward and backward, against NumPy
float64 implementations written here from PyTorch's definitions; every gradient also against central finite
differences of the forward on small inputs; dtypes float16, bfloat16, float32, float64; non-contiguous inputs;
the errors. Runs on the CPU backend everywhere and on CUDA where a GPU is present (tests/python/gpu/ compares
with PyTorch)."""
import math

import ml_dtypes
import numpy as np
import pytest

import jiasu
from jiasu import nn

pytestmark = pytest.mark.usefixtures("each_backend")

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
TOLERANCE = {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2, np.dtype(np.float32): 2e-6,
             np.dtype(np.float64): 1e-12}

_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu_tanh_inner(x):
    return math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)


# name -> (forward, keyword arguments), float64 references of PyTorch's formulas.
ACTIVATIONS = {
    "relu": (lambda x: np.maximum(x, 0), {}),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.2 * x), {"negative_slope": 0.2}),
    "sigmoid": (_sigmoid, {}),
    "tanh": (np.tanh, {}),
    "silu": (lambda x: x * _sigmoid(x), {}),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), {}),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + np.tanh(_gelu_tanh_inner(x))), {"approximate": "tanh"}),
}
# Their derivatives, written out (not differenced): the finite-difference test checks these too.
DERIVATIVES = {
    "relu": lambda x: (x > 0).astype(np.float64),
    "leaky_relu": lambda x: np.where(x > 0, 1.0, 0.2),
    "sigmoid": lambda x: _sigmoid(x) * (1 - _sigmoid(x)),
    "tanh": lambda x: 1 - np.tanh(x) ** 2,
    "silu": lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x))),
    "gelu": lambda x: 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi),
    "gelu_tanh": lambda x: (0.5 * (1 + np.tanh(_gelu_tanh_inner(x))) + 0.5 * x * (1 - np.tanh(_gelu_tanh_inner(x)) ** 2)
                            * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)),
}


def function_name(name):
    return "gelu" if name == "gelu_tanh" else name


def close(actual, expected, dtype, scale=1.0):
    assert isinstance(actual, jiasu.Array)
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    tol = TOLERANCE[np.dtype(dtype)] * scale
    np.testing.assert_allclose(actual.get().astype(np.float64), expected, rtol=tol, atol=tol)


def values(rng, shape, dtype, low=-4, high=4):
    """Random values that `dtype` holds exactly, so that the float64 reference sees the same inputs."""
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_and_its_gradient_against_float64(name, dtype, rng):
    forward, kwargs = ACTIVATIONS[name]
    x = values(rng, (5, 67), dtype)
    x[0, :4] = [0.0, -0.0, 1e-3, -1e-3]
    dy = values(rng, (5, 67), dtype, -2, 2)
    wide_x, wide_dy = x.astype(np.float64), dy.astype(np.float64)
    f = getattr(nn, function_name(name))
    close(f(jiasu.asarray(x), **kwargs), forward(wide_x), dtype)
    grad = getattr(nn, function_name(name) + "_backward")(jiasu.asarray(dy), jiasu.asarray(x), **kwargs)
    close(grad, wide_dy * DERIVATIVES[name](wide_x), dtype, scale=4)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_gradient_against_finite_differences(name, rng):
    forward, kwargs = ACTIVATIONS[name]
    x = rng.uniform(-3, 3, 41)
    x = x[np.abs(x) > 1e-3]  # relu's kink: no derivative there
    h = 1e-6
    numeric = (forward(x + h) - forward(x - h)) / (2 * h)
    np.testing.assert_allclose(DERIVATIVES[name](x), numeric, rtol=1e-6, atol=1e-8)
    f_backward = getattr(nn, function_name(name) + "_backward")
    grad = f_backward(jiasu.ones(x.shape, "float64"), jiasu.asarray(x), **kwargs).get()
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_activations_on_strided_views_and_in_place(rng):
    x = values(rng, (8, 10), np.float32)
    view = jiasu.asarray(x)[::2, ::-3]
    np.testing.assert_allclose(nn.relu(view).get(), np.maximum(x[::2, ::-3], 0))
    a = jiasu.asarray(x)
    assert nn.relu(a, inplace=True) is a
    np.testing.assert_array_equal(a.get(), np.maximum(x, 0))
    b = jiasu.asarray(x)
    nn.leaky_relu(b, 0.5, inplace=True)
    np.testing.assert_allclose(b.get(), np.where(x > 0, x, np.float32(0.5) * x))


def test_relu_keeps_nan_and_its_gradient_passes_there():
    x = jiasu.asarray(np.array([np.nan, -1.0, 2.0], np.float32))
    np.testing.assert_array_equal(nn.relu(x).get(), [np.nan, 0, 2])
    np.testing.assert_array_equal(nn.relu_backward(jiasu.ones((3,), "float32"), x).get(), [1, 0, 1])


def test_activation_errors():
    ints = jiasu.asarray(np.arange(4))
    with pytest.raises(TypeError, match=r"jiasu\.nn\.relu: input must be float16.*not int64"):
        nn.relu(ints)
    with pytest.raises(TypeError, match=r"jiasu\.nn\.sigmoid_backward: input must be float"):
        nn.sigmoid_backward(ints, ints)
    with pytest.raises(ValueError, match=r"approximate must be 'none' or 'tanh', not 'erf'"):
        nn.gelu(jiasu.zeros((2,), "float32"), approximate="erf")
    with pytest.raises(ValueError, match=r"grad_output has shape \(3,\) but input has shape \(2,\)"):
        nn.relu_backward(jiasu.zeros((3,), "float32"), jiasu.zeros((2,), "float32"))
    with pytest.raises(TypeError, match=r"grad_output is float64 but input is float32"):
        nn.tanh_backward(jiasu.zeros((2,), "float64"), jiasu.zeros((2,), "float32"))
    with pytest.raises(TypeError, match=r"must be a jiasu.Array \(or a GPU array\), not ndarray"):
        nn.silu(np.zeros(3))
    assert not hasattr(jiasu, "relu") and not hasattr(jiasu, "gelu_tanh")  # not NumPy names


# ---- softmax and log_softmax


def softmax_reference(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
# On a GPU the last dimension of a C-contiguous array takes the fused kernels: rows held in registers up to
# 1024 elements (33, 9, 1024), a block per row beyond (2500); the others are compositions.
@pytest.mark.parametrize("shape,dim", [((7, 33), 1), ((7, 33), 0), ((3, 4, 5), -2), ((9,), 0), ((), 0),
                                       ((4, 0), 1), ((2, 1, 6), 1), ((5, 1024), -1), ((3, 2500), 1)])
def test_softmax_and_log_softmax(shape, dim, dtype, rng):
    x = values(rng, shape, dtype, -20, 20)
    wide = x.astype(np.float64)
    y = softmax_reference(wide, dim) if wide.size else wide
    log_y = np.log(y) if wide.size else wide
    close(nn.softmax(jiasu.asarray(x), dim), y, dtype)
    close(nn.log_softmax(jiasu.asarray(x), dim=dim), log_y, dtype, scale=20)


def test_softmax_of_large_values_does_not_overflow():
    x = jiasu.asarray(np.array([[1000.0, 1001.0, 1002.0]], np.float32))
    np.testing.assert_allclose(nn.softmax(x, 1).get(), softmax_reference(np.array([[0.0, 1, 2]]), 1), rtol=1e-6)
    np.testing.assert_allclose(nn.log_softmax(x, 1).get(), np.log(softmax_reference(np.array([[0.0, 1, 2]]), 1)),
                               rtol=1e-6)


def numeric_gradient(f, x, h=1e-6):
    """d(sum(f(x) * weights))/dx by central differences, `f` on float64 NumPy arrays returning a scalar."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        grad[index] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("columns", [5, 1100])  # on a GPU, dim 1 of (3, 1100) takes the block-per-row kernel
def test_softmax_backward_against_finite_differences(log, dim, columns, rng):
    x = rng.uniform(-2, 2, (3, columns))
    weights = rng.uniform(-1, 1, (3, columns))  # the loss sum(weights * y): its grad_output is `weights`
    forward = (lambda v: np.log(softmax_reference(v, dim))) if log else (lambda v: softmax_reference(v, dim))
    numeric = numeric_gradient(lambda v: float((weights * forward(v)).sum()), x)
    f, f_backward = (nn.log_softmax, nn.log_softmax_backward) if log else (nn.softmax, nn.softmax_backward)
    y = f(jiasu.asarray(x), dim)
    grad = f_backward(jiasu.asarray(weights), y, dim)
    # The differences of a sum of 3 * columns terms round at about 1e-16 * 3 * columns / h.
    np.testing.assert_allclose(grad.get(), numeric, rtol=1e-6, atol=1e-8 * max(1, columns / 20))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_softmax_backward_in_low_precision(dtype, rng):
    x = values(rng, (4, 50), dtype)
    dy = values(rng, (4, 50), dtype, -1, 1)
    y = nn.softmax(jiasu.asarray(x), 1)
    wide_y, wide_dy = y.get().astype(np.float64), dy.astype(np.float64)
    expected = wide_y * (wide_dy - (wide_dy * wide_y).sum(1, keepdims=True))
    close(nn.softmax_backward(jiasu.asarray(dy), y, 1), expected, dtype, scale=4)
    log_y = nn.log_softmax(jiasu.asarray(x), 1)
    wide_log = log_y.get().astype(np.float64)
    expected_log = wide_dy - np.exp(wide_log) * wide_dy.sum(1, keepdims=True)
    close(nn.log_softmax_backward(jiasu.asarray(dy), log_y, 1), expected_log, dtype, scale=8)


def test_softmax_errors():
    x = jiasu.zeros((2, 3), "float32")
    with pytest.raises(IndexError, match=r"dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        nn.softmax(x, 2)
    with pytest.raises(TypeError, match=r"jiasu\.nn\.log_softmax: input must be float"):
        nn.log_softmax(jiasu.zeros((2,), "int32"), 0)
    with pytest.raises(ValueError, match=r"grad_output has shape \(3, ?2\) but output has shape \(2, ?3\)"):
        nn.softmax_backward(jiasu.zeros((3, 2), "float32"), x, 1)
    with pytest.raises(TypeError):
        nn.softmax(x)  # dim is required, as PyTorch's implicit dim is deprecated


# ---- cross_entropy


def cross_entropy_reference(logits, target):
    log_p = np.log(softmax_reference(logits, 1))
    return -log_p[np.arange(len(target)), target].mean()


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("target_dtype", [np.int64, np.int32, np.uint8])
def test_cross_entropy_and_its_gradient(dtype, target_dtype, rng):
    logits = values(rng, (13, 7), dtype, -5, 5)
    target = rng.integers(0, 7, 13).astype(target_dtype)
    wide = logits.astype(np.float64)
    loss = nn.cross_entropy(jiasu.asarray(logits), jiasu.asarray(target))
    assert loss.shape == ()
    close(loss, cross_entropy_reference(wide, target), dtype, scale=4)
    one_hot = np.eye(7)[target]
    expected = (softmax_reference(wide, 1) - one_hot) / 13
    close(nn.cross_entropy_backward(jiasu.asarray(logits), jiasu.asarray(target)), expected, dtype, scale=4)


def test_cross_entropy_gradient_against_finite_differences(rng):
    logits = rng.uniform(-3, 3, (4, 6))
    target = rng.integers(0, 6, 4)
    numeric = numeric_gradient(lambda v: cross_entropy_reference(v, target), logits)
    grad = nn.cross_entropy_backward(jiasu.asarray(logits), jiasu.asarray(target)).get()
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)


def test_cross_entropy_errors():
    logits = jiasu.zeros((3, 4), "float32")
    with pytest.raises(IndexError, match=r"target 4 is out of bounds for 4 classes"):
        nn.cross_entropy(logits, jiasu.asarray(np.array([0, 4, 1])))
    with pytest.raises(IndexError, match=r"target -1 is out of bounds"):
        nn.cross_entropy_backward(logits, jiasu.asarray(np.array([0, -1, 1])))
    with pytest.raises(ValueError, match=r"target of shape \(2,\) does not match input of shape \(3, ?4\)"):
        nn.cross_entropy(logits, jiasu.asarray(np.array([0, 1])))
    with pytest.raises(TypeError, match=r"target must hold class indices of an integer dtype, not float32"):
        nn.cross_entropy(logits, jiasu.zeros((3,), "float32"))
    with pytest.raises(ValueError, match=r"input must have shape \(N, C\)"):
        nn.cross_entropy(jiasu.zeros((4,), "float32"), jiasu.asarray(np.array([0, 1, 2, 3])))


# ---- linear


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(5,), (2, 3), ()])
def test_linear_and_its_gradients(batch, dtype, rng):
    x = values(rng, batch + (6,), dtype, -1, 1)
    w = values(rng, (4, 6), dtype, -1, 1)
    b = values(rng, (4,), dtype, -1, 1)
    dy = values(rng, batch + (4,), dtype, -1, 1)
    wx, ww, wb, wdy = (a.astype(np.float64) for a in (x, w, b, dy))
    scale = 1e3 if dtype == np.float32 else 10  # sums of products: errors grow with the length
    close(nn.linear(jiasu.asarray(x), jiasu.asarray(w), jiasu.asarray(b)), wx @ ww.T + wb, dtype, scale)
    close(nn.linear(jiasu.asarray(x), jiasu.asarray(w)), wx @ ww.T, dtype, scale)
    grad_x, grad_w, grad_b = nn.linear_backward(jiasu.asarray(dy), jiasu.asarray(x), jiasu.asarray(w))
    close(grad_x, wdy @ ww, dtype, scale)
    rows_dy, rows_x = wdy.reshape(-1, 4), wx.reshape(-1, 6)
    close(grad_w, rows_dy.T @ rows_x, dtype, scale)
    close(grad_b, rows_dy.sum(0), dtype, scale)


def test_linear_gradient_against_finite_differences(rng):
    x, w, b = rng.uniform(-1, 1, (3, 5)), rng.uniform(-1, 1, (2, 5)), rng.uniform(-1, 1, 2)
    weights = rng.uniform(-1, 1, (3, 2))

    def loss(x_, w_, b_):
        return float((weights * (x_ @ w_.T + b_)).sum())

    grads = nn.linear_backward(jiasu.asarray(weights), jiasu.asarray(x), jiasu.asarray(w))
    numeric = [numeric_gradient(lambda v: loss(v, w, b), x), numeric_gradient(lambda v: loss(x, v, b), w),
               numeric_gradient(lambda v: loss(x, w, v), b)]
    for got, want in zip(grads, numeric):
        np.testing.assert_allclose(got.get(), want, rtol=1e-6, atol=1e-8)


def test_linear_errors():
    x, w = jiasu.zeros((3, 5), "float32"), jiasu.zeros((2, 5), "float32")
    with pytest.raises(ValueError, match=r"input of shape \(3, 4\) does not match weight of shape \(2, 5\)"):
        nn.linear(jiasu.zeros((3, 4), "float32"), w)
    with pytest.raises(ValueError, match=r"weight must have shape \(out_features, in_features\)"):
        nn.linear(x, jiasu.zeros((5,), "float32"))
    with pytest.raises(ValueError, match=r"bias must have shape \(2,\), not \(5,\)"):
        nn.linear(x, w, jiasu.zeros((5,), "float32"))
    with pytest.raises(ValueError, match=r"grad_output of shape \(3, 3\) does not match the output shape \(3, 2\)"):
        nn.linear_backward(jiasu.zeros((3, 3), "float32"), x, w)
    with pytest.raises(TypeError, match=r"input must be a jiasu.Array, not ndarray"):
        nn.linear(np.zeros((3, 5)), w)
