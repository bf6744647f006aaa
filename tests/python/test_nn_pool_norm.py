"""jiasu.nn's pooling (max_pool2d, avg_pool2d) and batch normalisation, forward and backward, against float64
NumPy implementations written here from PyTorch's definitions; gradients also against central finite
differences; float16/bfloat16/float32/float64; channels-last inputs; the running statistics' in-place update;
the errors. Runs on the CPU backend everywhere and on CUDA where a GPU is present."""
import ml_dtypes
import numpy as np
import pytest

import jiasu
from jiasu import nn
from support import assert_gradients

pytestmark = pytest.mark.usefixtures("each_backend")

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
TOLERANCE = {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2, np.dtype(np.float32): 2e-6,
             np.dtype(np.float64): 1e-12}


def pool_reference(x, kernel, stride, padding, kind, count_include_pad=True):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    fill = -np.inf if kind == "max" else 0.0
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), fill)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            if kind == "max":
                y[:, :, i, j] = window.max(axis=(2, 3))
            else:
                rows = min(i * sh - ph + kh, h) - max(i * sh - ph, 0)
                cols = min(j * sw - pw + kw, w) - max(j * sw - pw, 0)
                y[:, :, i, j] = window.sum(axis=(2, 3)) / (kh * kw if count_include_pad else rows * cols)
    return y


def max_pool_gradient(x, dy, kernel, stride, padding):
    """Each window's output gradient added at the window's first maximum (row-major), as PyTorch does."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), -np.inf)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    dxp = np.zeros_like(xp)
    for b in range(n):
        for ch in range(c):
            for i in range(dy.shape[2]):
                for j in range(dy.shape[3]):
                    window = xp[b, ch, i * sh:i * sh + kh, j * sw:j * sw + kw]
                    r, s = np.unravel_index(np.argmax(window), window.shape)
                    dxp[b, ch, i * sh + r, j * sw + s] += dy[b, ch, i, j]
    return dxp[:, :, ph:ph + h, pw:pw + w]


POOLS = [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0)), ((3, 2), (1, 2), (1, 0)), ((1, 1), (1, 1), (0, 0))]


def pair(v):
    return v if isinstance(v, tuple) else (v, v)


@pytest.mark.parametrize("kernel,stride,padding", POOLS)
def test_max_pool2d_and_its_gradient(kernel, stride, padding, rng):
    x = rng.permutation(2 * 3 * 9 * 8).reshape(2, 3, 9, 8).astype(np.float64) / 7  # distinct values: one maximum
    y = nn.max_pool2d(jiasu.asarray(x), kernel, stride, padding)
    expected = pool_reference(x, kernel, stride, padding, "max")
    np.testing.assert_array_equal(y.get(), expected)
    dy = rng.standard_normal(expected.shape)
    grad = nn.max_pool2d_backward(jiasu.asarray(dy), jiasu.asarray(x), kernel, stride, padding)
    np.testing.assert_allclose(grad.get(), max_pool_gradient(x, dy, kernel, stride, padding), rtol=1e-14, atol=1e-14)


def test_max_pool2d_gradient_goes_to_the_first_of_equal_maxima():
    x = jiasu.asarray(np.ones((1, 1, 2, 2)))
    grad = nn.max_pool2d_backward(jiasu.asarray(np.full((1, 1, 1, 1), 5.0)), x, 2)
    np.testing.assert_array_equal(grad.get(), [[[[5, 0], [0, 0]]]])


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("kernel,stride,padding", POOLS)
def test_avg_pool2d_and_its_gradient_against_finite_differences(kernel, stride, padding, count_include_pad, rng):
    x = rng.standard_normal((2, 2, 7, 6))
    y = nn.avg_pool2d(jiasu.asarray(x), kernel, stride, padding, count_include_pad=count_include_pad)
    expected = pool_reference(x, kernel, stride, padding, "avg", count_include_pad)
    np.testing.assert_allclose(y.get(), expected, rtol=1e-13, atol=1e-13)
    dy = rng.standard_normal(expected.shape)
    grad = nn.avg_pool2d_backward(jiasu.asarray(dy), jiasu.asarray(x), kernel, stride, padding,
                                  count_include_pad=count_include_pad)

    def loss(x_):
        return float((dy * pool_reference(x_, kernel, stride, padding, "avg", count_include_pad)).sum())

    assert_gradients(loss, (x,), (grad,), rng, samples=8, atol=1e-8)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_pooling_dtypes_and_channels_last(dtype, rng):
    x = rng.uniform(-2, 2, (2, 3, 8, 8)).astype(dtype)
    wide = x.astype(np.float64)
    last = jiasu.asarray(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).transpose((0, 3, 1, 2))
    for source in (jiasu.asarray(x), last):
        y = nn.max_pool2d(source, 3, 2, 1)
        assert y.dtype == np.dtype(dtype) and y.strides[1] == (y.itemsize if source is last else y.shape[2] * y.shape[3] * y.itemsize)
        np.testing.assert_array_equal(y.get().astype(np.float64), pool_reference(wide, (3, 3), (2, 2), (1, 1), "max"))
        tol = TOLERANCE[np.dtype(dtype)]
        np.testing.assert_allclose(nn.avg_pool2d(source, 2).get().astype(np.float64),
                                   pool_reference(wide, (2, 2), (2, 2), (0, 0), "avg"), rtol=tol, atol=tol)


def test_pooling_errors():
    x = jiasu.zeros((1, 2, 5, 5), "float32")
    with pytest.raises(ValueError, match=r"padding should be at least 0 and at most half of the kernel size, but "
                                         r"got padding=2 and kernel_size=3"):
        nn.max_pool2d(x, 3, padding=2)
    with pytest.raises(ValueError, match=r"input must have shape \(N, C, H, W\)"):
        nn.avg_pool2d(jiasu.zeros((5, 5), "float32"), 2)
    with pytest.raises(ValueError, match=r"the kernel \(6 x 6\) is larger than the padded input \(5 x 5\)"):
        nn.max_pool2d(x, 6)
    with pytest.raises(ValueError, match=r"kernel_size must be at least 1"):
        nn.avg_pool2d(x, 0)
    with pytest.raises(ValueError, match=r"grad_output has shape \(1, ?2, ?3, ?3\) but the output has shape "
                                         r"\(1, ?2, ?2, ?2\)"):
        nn.max_pool2d_backward(jiasu.zeros((1, 2, 3, 3), "float32"), x, 2)
    with pytest.raises(TypeError, match=r"input must be float16, bfloat16, float32 or float64, not int32"):
        nn.max_pool2d(jiasu.zeros((1, 1, 4, 4), "int32"), 2)


# ---- batch normalisation


def bn_reference(x, weight, bias, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * weight.reshape(shape) + bias.reshape(shape)
    return y, mean, var


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (8, 5), (2, 4, 7)])
def test_batch_norm_training_updates_the_running_statistics(shape, dtype, rng):
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    c = shape[1]
    weight, bias = rng.uniform(0.5, 2, c).astype(dtype), rng.uniform(-1, 1, c).astype(dtype)
    running_mean, running_var = rng.standard_normal(c).astype(np.float32), rng.uniform(1, 2, c).astype(np.float32)
    rm, rv = jiasu.asarray(running_mean), jiasu.asarray(running_var)
    y, saved_mean, saved_invstd = nn.batch_norm_training(jiasu.asarray(x), jiasu.asarray(weight), jiasu.asarray(bias),
                                                         rm, rv, momentum=0.2, eps=1e-3)
    wide = [a.astype(np.float64) for a in (x, weight, bias)]
    expected, mean, var = bn_reference(*wide, 1e-3)
    tol = TOLERANCE[np.dtype(dtype)] * 4
    assert y.dtype == np.dtype(dtype) and saved_mean.dtype == (np.float64 if dtype == np.float64 else np.float32)
    np.testing.assert_allclose(y.get().astype(np.float64), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(saved_mean.get(), mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(saved_invstd.get(), 1 / np.sqrt(var + 1e-3), rtol=1e-5)
    count = x.size // c
    np.testing.assert_allclose(rm.get(), 0.8 * running_mean + 0.2 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.get(), 0.8 * running_var + 0.2 * var * count / (count - 1), rtol=1e-5)
    # batch_norm(training=True) gives the same y and updates the statistics the same way.
    rm2, rv2 = jiasu.asarray(running_mean), jiasu.asarray(running_var)
    y2 = nn.batch_norm(jiasu.asarray(x), rm2, rv2, jiasu.asarray(weight), jiasu.asarray(bias), training=True,
                       momentum=0.2, eps=1e-3)
    np.testing.assert_array_equal(y2.get(), y.get())
    np.testing.assert_array_equal(rm2.get(), rm.get())


def test_batch_norm_inference(rng):
    x = rng.standard_normal((3, 4, 5, 5))
    rm, rv, w, b = rng.standard_normal(4), rng.uniform(0.5, 2, 4), rng.standard_normal(4), rng.standard_normal(4)
    y = nn.batch_norm(jiasu.asarray(x), jiasu.asarray(rm), jiasu.asarray(rv), jiasu.asarray(w), jiasu.asarray(b))
    s = (1, 4, 1, 1)
    expected = (x - rm.reshape(s)) / np.sqrt(rv.reshape(s) + 1e-5) * w.reshape(s) + b.reshape(s)
    np.testing.assert_allclose(y.get(), expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(nn.batch_norm(jiasu.asarray(x), jiasu.asarray(rm), jiasu.asarray(rv)).get(),
                               (x - rm.reshape(s)) / np.sqrt(rv.reshape(s) + 1e-5), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("shape", [(3, 2, 4, 3), (6, 3)])
def test_batch_norm_backward_against_finite_differences(shape, rng):
    x = rng.standard_normal(shape)
    c = shape[1]
    weight, bias = rng.uniform(0.5, 2, c), rng.standard_normal(c)
    dy = rng.standard_normal(shape)
    _, mean, invstd = nn.batch_norm_training(jiasu.asarray(x), jiasu.asarray(weight), jiasu.asarray(bias), None, None)
    grads = nn.batch_norm_backward(jiasu.asarray(dy), jiasu.asarray(x), jiasu.asarray(weight), mean, invstd)

    def loss(x_, w_, b_):
        return float((dy * bn_reference(x_, w_, b_, 1e-5)[0]).sum())

    assert_gradients(loss, (x, weight, bias), grads, rng, rtol=1e-5)


def test_batch_norm_channels_last_keeps_its_layout(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    last = jiasu.asarray(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).transpose((0, 3, 1, 2))
    y, _, _ = nn.batch_norm_training(last, None, None, None, None)
    assert y.strides[1] == y.itemsize
    np.testing.assert_allclose(y.get(), bn_reference(x, np.ones(3), np.zeros(3), 1e-5)[0], rtol=1e-12, atol=1e-12)


def test_batch_norm_errors():
    x = jiasu.zeros((4, 3, 2, 2), "float32")
    c3 = jiasu.zeros((3,), "float32")
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\) for input of shape \(4, ?3, ?2, ?2\), not \(2,\)"):
        nn.batch_norm(x, c3, c3, jiasu.zeros((2,), "float32"))
    with pytest.raises(ValueError, match=r"expected more than 1 value per channel when training"):
        nn.batch_norm_training(jiasu.zeros((1, 3), "float32"), None, None, c3, c3)
    with pytest.raises(ValueError, match=r"running_mean and running_var are needed when not training"):
        nn.batch_norm(x, None, None)
    with pytest.raises(ValueError, match=r"input must have shape \(N, C, ...\)"):
        nn.batch_norm(jiasu.zeros((3,), "float32"), c3, c3)
    with pytest.raises(TypeError, match=r"input must be float16, bfloat16, float32 or float64, not int64"):
        nn.batch_norm_training(jiasu.zeros((4, 3), "int64"), None, None, None, None)
