"""jiasu.nn.conv2d and conv2d_backward against a direct float64 convolution written here (a loop over output
positions, PyTorch's cross-correlation), the gradients also against central finite differences; strides,
padding (numbers and 'same'/'valid', asymmetric), dilation, groups, float16/bfloat16/float32/float64,
channels-last inputs, and the errors. Runs on the CPU backend everywhere and on CUDA where a GPU is present."""
import ml_dtypes
import numpy as np
import pytest

import jiasu
from jiasu import nn
from support import assert_gradients

pytestmark = pytest.mark.usefixtures("each_backend")

TOLERANCE = {np.dtype(np.float16): 4e-3, np.dtype(ml_dtypes.bfloat16): 3e-2, np.dtype(np.float32): 1e-5,
             np.dtype(np.float64): 1e-12}


def conv_reference(x, w, b=None, stride=(1, 1), pad_before=(0, 0), pad_after=(0, 0), dilation=(1, 1), groups=1):
    n, c, h, width = x.shape
    k, cg, r, s = w.shape
    xp = np.zeros((n, c, h + pad_before[0] + pad_after[0], width + pad_before[1] + pad_after[1]))
    xp[:, :, pad_before[0]:pad_before[0] + h, pad_before[1]:pad_before[1] + width] = x
    oh = (xp.shape[2] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, oh, ow))
    kg = k // groups
    for out_channel in range(k):
        group = out_channel // kg
        for i in range(oh):
            for j in range(ow):
                rows = slice(i * stride[0], i * stride[0] + dilation[0] * (r - 1) + 1, dilation[0])
                cols = slice(j * stride[1], j * stride[1] + dilation[1] * (s - 1) + 1, dilation[1])
                patch = xp[:, group * cg:(group + 1) * cg, rows, cols]
                y[:, out_channel, i, j] = (patch * w[out_channel]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    return y


CASES = [  # input shape, weight shape, keyword arguments, the reference's padding (before, after)
    ((2, 3, 7, 6), (4, 3, 3, 3), {}, ((0, 0), (0, 0))),
    ((2, 4, 9, 8), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2},
     ((1, 1), (2, 2))),
    ((1, 2, 5, 5), (3, 2, 2, 4), {"padding": "same"}, ((0, 1), (1, 2))),
    ((1, 2, 6, 5), (2, 2, 3, 3), {"padding": "same", "dilation": 2}, ((2, 2), (2, 2))),
    ((3, 4, 5, 5), (4, 1, 3, 3), {"padding": 1, "groups": 4, "stride": 2}, ((1, 1), (1, 1))),  # depthwise
    ((2, 3, 4, 4), (5, 3, 1, 1), {"padding": "valid"}, ((0, 0), (0, 0))),
]


def reference_kwargs(kwargs, pads):
    def pair(v):
        return v if isinstance(v, tuple) else (v, v)
    return {"stride": pair(kwargs.get("stride", 1)), "dilation": pair(kwargs.get("dilation", 1)),
            "groups": kwargs.get("groups", 1), "pad_before": (pads[0][0], pads[1][0]),
            "pad_after": (pads[0][1], pads[1][1])}


@pytest.mark.parametrize("x_shape,w_shape,kwargs,pads", CASES)
def test_conv2d_forward_and_backward_float64(x_shape, w_shape, kwargs, pads, rng):
    x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
    ref = reference_kwargs(kwargs, pads)
    expected = conv_reference(x, w, b, **ref)
    y = nn.conv2d(jiasu.asarray(x), jiasu.asarray(w), jiasu.asarray(b), **kwargs)
    np.testing.assert_allclose(y.get(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nn.conv2d(jiasu.asarray(x), jiasu.asarray(w), **kwargs).get(),
                               conv_reference(x, w, **ref), rtol=1e-12, atol=1e-12)

    # The loss sum(weights * conv2d(x, w) + b): its gradients by central differences at a few elements.
    weights = rng.standard_normal(expected.shape)
    grad_x, grad_w, grad_b = nn.conv2d_backward(jiasu.asarray(weights), jiasu.asarray(x), jiasu.asarray(w), **kwargs)

    def loss(x_, w_, b_):
        return float((weights * conv_reference(x_, w_, b_, **ref)).sum())

    assert_gradients(loss, (x, w, b), (grad_x, grad_w, grad_b), rng)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32], ids=lambda d: np.dtype(d).name)
def test_conv2d_low_precision_against_float64(dtype, rng):
    x = rng.uniform(-1, 1, (2, 4, 6, 7)).astype(dtype)
    w = rng.uniform(-1, 1, (4, 2, 3, 3)).astype(dtype)
    dy = rng.uniform(-1, 1, (2, 4, 6, 7)).astype(dtype)
    wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
    y = nn.conv2d(jiasu.asarray(x), jiasu.asarray(w), padding=1, groups=2)
    assert y.dtype == np.dtype(dtype)
    tol = TOLERANCE[np.dtype(dtype)] * 8  # sums of 18 products
    np.testing.assert_allclose(y.get().astype(np.float64),
                               conv_reference(wide_x, wide_w, pad_before=(1, 1), pad_after=(1, 1), groups=2),
                               rtol=tol, atol=tol)
    grad_x, grad_w, grad_b = nn.conv2d_backward(jiasu.asarray(dy), jiasu.asarray(x), jiasu.asarray(w), padding=1,
                                                groups=2)
    assert grad_x.dtype == grad_w.dtype == grad_b.dtype == np.dtype(dtype)
    # Against the float64 computation of the same gradients (this module's float64 test checks those).
    exact = nn.conv2d_backward(jiasu.asarray(dy.astype(np.float64)), jiasu.asarray(wide_x), jiasu.asarray(wide_w),
                               padding=1, groups=2)
    for got, want, scale in zip((grad_x, grad_w, grad_b), exact, (8, 60, 60)):
        np.testing.assert_allclose(got.get().astype(np.float64), want.get(), rtol=tol * scale / 8, atol=tol * scale / 8)


def channels_last(a):
    """A jiasu array of a's values with NHWC strides on the NCHW shape (torch.channels_last)."""
    return jiasu.asarray(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).transpose((0, 3, 1, 2))


def is_channels_last(a):
    n, c, h, w = a.shape
    item = a.itemsize
    return a.strides == (h * w * c * item, item, w * c * item, c * item)


def test_conv2d_channels_last_keeps_its_layout(rng):
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3))
    dy = rng.standard_normal((2, 4, 6, 5))
    xs, ws = channels_last(x), channels_last(w)
    assert is_channels_last(xs)
    y = nn.conv2d(xs, ws, padding=1)
    assert is_channels_last(y)
    np.testing.assert_allclose(y.get(), conv_reference(x, w, pad_before=(1, 1), pad_after=(1, 1)), rtol=1e-12,
                               atol=1e-12)
    grad_x, grad_w, _ = nn.conv2d_backward(channels_last(dy), xs, ws, padding=1)
    assert is_channels_last(grad_x) and is_channels_last(grad_w)
    plain = nn.conv2d_backward(jiasu.asarray(dy), jiasu.asarray(x), jiasu.asarray(w), padding=1)
    np.testing.assert_allclose(grad_x.get(), plain[0].get(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_w.get(), plain[1].get(), rtol=1e-12, atol=1e-12)


def test_conv2d_backward_gives_only_what_is_asked(rng):
    x, w = jiasu.asarray(rng.standard_normal((1, 2, 4, 4))), jiasu.asarray(rng.standard_normal((3, 2, 3, 3)))
    dy = jiasu.asarray(rng.standard_normal((1, 3, 2, 2)))
    grad_x, grad_w, grad_b = nn.conv2d_backward(dy, x, w, needs=("weight",))
    assert grad_x is None and grad_b is None and grad_w.shape == (3, 2, 3, 3)
    with pytest.raises(ValueError, match=r"needs takes 'x', 'weight' and 'bias', not 'w'"):
        nn.conv2d_backward(dy, x, w, needs=("w",))


def test_conv2d_errors():
    x, w = jiasu.zeros((1, 4, 5, 5), "float32"), jiasu.zeros((2, 4, 3, 3), "float32")
    with pytest.raises(ValueError, match=r"input must have shape \(N, C, H, W\), not \(4, ?5, ?5\)"):
        nn.conv2d(jiasu.zeros((4, 5, 5), "float32"), w)
    with pytest.raises(ValueError, match=r"has 4 channels, but weight of shape \(2, ?3, ?3, ?3\) with groups=1 "
                                         r"expects 3"):
        nn.conv2d(x, jiasu.zeros((2, 3, 3, 3), "float32"))
    with pytest.raises(ValueError, match=r"out_channels \(3\) must be divisible by groups \(2\)"):
        nn.conv2d(x, jiasu.zeros((3, 2, 3, 3), "float32"), groups=2)
    with pytest.raises(ValueError, match=r"the kernel \(7 x 3 with dilation\) is larger than the padded input"):
        nn.conv2d(x, w, dilation=(3, 1))
    with pytest.raises(ValueError, match=r"padding='same' is not supported for strided convolutions"):
        nn.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError, match=r"padding must be 'same', 'valid' or numbers, not 'full'"):
        nn.conv2d(x, w, padding="full")
    with pytest.raises(ValueError, match=r"stride must be at least 1, not 0"):
        nn.conv2d(x, w, stride=0)
    with pytest.raises(TypeError, match=r"weight is float64 but input is float32"):
        nn.conv2d(x, jiasu.zeros((2, 4, 3, 3), "float64"))
    with pytest.raises(ValueError, match=r"bias must have shape \(2,\), not \(3,\)"):
        nn.conv2d(x, w, jiasu.zeros((3,), "float32"))
    with pytest.raises(TypeError, match=r"input must be float16, bfloat16, float32 or float64, not int32"):
        nn.conv2d(jiasu.zeros((1, 4, 5, 5), "int32"), jiasu.zeros((2, 4, 3, 3), "int32"))
    with pytest.raises(ValueError, match=r"grad_output has shape \(1, ?2, ?2, ?2\) but the output has shape "
                                         r"\(1, ?2, ?3, ?3\)"):
        nn.conv2d_backward(jiasu.zeros((1, 2, 2, 2), "float32"), x, w)
    with pytest.raises(TypeError, match=r"stride must be an int or a pair of ints"):
        nn.conv2d(x, w, stride=(1, 2, 3))


def test_benchmark_flag_round_trips_and_conv2d_stays_exact(rng):
    assert nn.benchmark is False  # off by default, as torch.backends.cudnn.benchmark
    try:
        nn.benchmark = True
        assert nn.benchmark is True
        x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 3))
        want = conv_reference(x, w, pad_before=(1, 1), pad_after=(1, 1))
        for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
            got = nn.conv2d(jiasu.asarray(x.astype(dtype)), jiasu.asarray(w.astype(dtype)), padding=1)
            np.testing.assert_allclose(got.get().astype(np.float64), want, rtol=tol, atol=tol * 10)
        nn.benchmark = False
        assert nn.benchmark is False
    finally:
        nn.benchmark = False


@pytest.mark.parametrize("layout", ["nchw", "nhwc", "nhwc-x-nchw-dy"])
@pytest.mark.parametrize("x_shape,k", [((2, 6, 5, 3), 4), ((1, 3, 1, 1), 7), ((3, 1, 4, 2), 2)])
def test_pointwise_conv2d_all_passes_in_each_layout(layout, x_shape, k, rng):
    # 1x1 convolutions are one matrix product per pass on views of the arrays (channels-last rows, NCHW planes);
    # a layout that has no such view (mixed here) takes the general path.
    x, w = rng.standard_normal(x_shape), rng.standard_normal((k, x_shape[1], 1, 1))
    dy = rng.standard_normal((x_shape[0], k) + x_shape[2:])
    nhwc = layout.startswith("nhwc")
    jx, jw = (channels_last(x), channels_last(w)) if nhwc else (jiasu.asarray(x), jiasu.asarray(w))
    jdy = channels_last(dy) if layout == "nhwc" else jiasu.asarray(dy)
    y = nn.conv2d(jx, jw)
    np.testing.assert_allclose(y.get(), conv_reference(x, w), rtol=1e-12, atol=1e-12)
    grad_x, grad_w, _ = nn.conv2d_backward(jdy, jx, jw)
    if nhwc and x_shape[1] > 1 and x_shape[2] * x_shape[3] > 1:  # outputs keep the input's layout (a 1x1
        assert is_channels_last(y) and is_channels_last(grad_x)  # weight's two layouts are one)
    # grad_x = sum_k dy[n, k] w[k, c]; grad_w = sum_{n, h, w} dy[n, k] x[n, c]
    np.testing.assert_allclose(grad_x.get(), np.einsum("nkhw,kc->nchw", dy, w[:, :, 0, 0]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_w.get()[:, :, 0, 0], np.einsum("nkhw,nchw->kc", dy, x), rtol=1e-12, atol=1e-12)
    for dtype in (np.float32,) + ((np.float16, ml_dtypes.bfloat16) if jiasu.get_backend() == "cuda" else ()):
        tol = TOLERANCE[np.dtype(dtype)] * 4
        cast = (lambda a: channels_last(a.astype(dtype))) if nhwc else (lambda a: jiasu.asarray(a.astype(dtype)))
        low = nn.conv2d(cast(x), cast(w))
        assert low.dtype == np.dtype(dtype)
        np.testing.assert_allclose(low.get().astype(np.float64), conv_reference(x, w), rtol=tol, atol=tol)
