"""jiasu.nn on the GPU against PyTorch's torch.nn.functional on the same inputs: convolutions (cuDNN, and 1x1
ones as matrix products; every pass, float16/bfloat16/float32, NCHW and channels-last, strides, padding,
dilation, groups), pooling, batch normalisation, softmax and the activations, forward and backward; jiasu.nn
on torch tensors without a copy; and which convolution passes ran on cuDNN."""
import ml_dtypes
import numpy as np
import pytest

import jiasu
from jiasu import nn

pytestmark = pytest.mark.gpu

TORCH_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}
# Relative to the largest reference value (sums of many products round at each dtype's precision).
TOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-4}


@pytest.fixture(autouse=True)
def _exact_torch(torch):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def to_torch(torch, a, dtype, channels_last=False):
    t = torch.tensor(np.asarray(a, np.float32), device="cuda").to(getattr(torch, dtype))
    return t.contiguous(memory_format=torch.channels_last) if channels_last and t.ndim == 4 else t


def check(torch, got, want, dtype, scale=1.0):
    assert tuple(got.shape) == tuple(want.shape)
    expected = want.detach().float().cpu().numpy().astype(np.float64)
    actual = jiasu.asarray(got).astype("float32").get().astype(np.float64)
    bound = TOL[dtype] * scale * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=bound)


CONVS = [  # (N, C, H, W), (K, C/g, R, S), keyword arguments
    ((4, 16, 20, 18), (32, 16, 3, 3), {"padding": 1}),
    ((2, 8, 17, 15), (16, 4, 3, 3), {"stride": 2, "padding": (1, 0), "groups": 2}),
    ((2, 8, 16, 16), (8, 8, 5, 3), {"dilation": (2, 1), "padding": "same"}),
    ((3, 32, 9, 9), (64, 32, 1, 1), {}),
    ((2, 16, 12, 12), (16, 1, 3, 3), {"padding": 1, "groups": 16}),
]


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
@pytest.mark.parametrize("x_shape,w_shape,kwargs", CONVS)
def test_conv2d_and_its_gradients_against_torch(torch, x_shape, w_shape, kwargs, dtype, channels_last, rng):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))
    b = rng.standard_normal(w_shape[0])
    tx = to_torch(torch, x, dtype, channels_last).requires_grad_()
    tw = to_torch(torch, w, dtype, channels_last).requires_grad_()
    tb = to_torch(torch, b, dtype).requires_grad_()
    ty = torch.nn.functional.conv2d(tx, tw, tb, **kwargs)
    dy = torch.randn_like(ty)
    ty.backward(dy)
    jx, jw, jb = (jiasu.asarray(t.detach()) for t in (tx, tw, tb))
    y = nn.conv2d(jx, jw, jb, **kwargs)
    check(torch, y, ty, dtype)
    if channels_last:
        assert y.strides[1] == y.itemsize  # the output keeps the input's layout
    grad_x, grad_w, grad_b = nn.conv2d_backward(jiasu.asarray(dy), jx, jw, **kwargs)
    check(torch, grad_x, tx.grad, dtype)
    check(torch, grad_w, tw.grad, dtype, scale=4)
    check(torch, grad_b, tb.grad, dtype, scale=4)


def test_conv2d_passes_run_on_cudnn_when_built_with_it(torch, rng):
    info = nn.cudnn_info()
    if not info["built"]:
        pytest.skip("jiasu was built without the cudnn-frontend headers")
    assert info["loaded"], info["why_not"]
    before = info["passes"]
    x = jiasu.asarray(rng.standard_normal((2, 4, 8, 8)).astype(np.float32))
    w = jiasu.asarray(rng.standard_normal((4, 4, 3, 3)).astype(np.float32))
    y = nn.conv2d(x, w, padding=1)
    nn.conv2d_backward(jiasu.ones(y.shape, "float32"), x, w, padding=1, needs=("x", "weight"))
    after = nn.cudnn_info()
    assert after["passes"] == before + 3, after["last_fallback"]


def test_float64_convolution_takes_the_im2col_path(torch, rng):
    x, w = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    want = torch.nn.functional.conv2d(torch.tensor(x, device="cuda"), torch.tensor(w, device="cuda"), padding=1)
    got = nn.conv2d(jiasu.asarray(x), jiasu.asarray(w), padding=1)
    np.testing.assert_allclose(got.get(), want.cpu().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size", [3, 1])
def test_float32_convolutions_do_not_round_to_tf32(torch, size, rng):
    # 1x1 convolutions are matrix products: jiasu.nn.allow_tf32 rules them, not the matmul precision.
    x = rng.standard_normal((2, 64, 16, 16)).astype(np.float32)
    w = rng.standard_normal((64, 64, size, size)).astype(np.float32) / (8 * size)
    exact = torch.nn.functional.conv2d(torch.tensor(x, device="cuda").double(), torch.tensor(w, device="cuda").double(),
                                       padding=size // 2).cpu().numpy()
    previous = jiasu.get_matmul_precision()
    try:
        jiasu.set_matmul_precision("high")
        got = nn.conv2d(jiasu.asarray(x), jiasu.asarray(w), padding=size // 2).get()
    finally:
        jiasu.set_matmul_precision(previous)
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-4 * np.abs(exact).max())


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
def test_pooling_against_torch(torch, dtype, channels_last, rng):
    # jiasu pools the input in its layout; the references come from PyTorch's NCHW kernels, as its channels-last
    # avg_pool2d gradient is wrong with padding (pytorch/pytorch#188344).
    values = rng.standard_normal((4, 8, 15, 14))
    x = to_torch(torch, values, dtype).requires_grad_()
    jx = jiasu.asarray(to_torch(torch, values, dtype, channels_last))
    F = torch.nn.functional
    for kwargs in ({"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 2}):
        ty = F.max_pool2d(x, **kwargs)
        dy = torch.randn_like(ty)
        (tgrad,) = torch.autograd.grad(ty, x, dy)
        if channels_last:
            dy = dy.contiguous(memory_format=torch.channels_last)
            assert nn.max_pool2d(jx, **kwargs).strides[1] == jx.itemsize  # the output keeps the input's layout
        check(torch, nn.max_pool2d(jx, **kwargs), ty, dtype)
        check(torch, nn.max_pool2d_backward(jiasu.asarray(dy), jx, **kwargs), tgrad, dtype)
        for include in (True, False):
            ty = F.avg_pool2d(x, count_include_pad=include, **kwargs)
            (tgrad,) = torch.autograd.grad(ty, x, dy)
            check(torch, nn.avg_pool2d(jx, count_include_pad=include, **kwargs), ty, dtype)
            check(torch, nn.avg_pool2d_backward(jiasu.asarray(dy), jx, count_include_pad=include, **kwargs), tgrad,
                  dtype)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
def test_batch_norm_against_torch(torch, dtype, rng):
    F = torch.nn.functional
    # float32 weight, bias and statistics beside a half-precision input: PyTorch's mixed batch-norm (it refuses
    # half-precision weights with float32 statistics).
    x = to_torch(torch, rng.standard_normal((8, 6, 9, 7)) * 2 + 1, dtype).requires_grad_()
    w = to_torch(torch, rng.uniform(0.5, 2, 6), "float32").requires_grad_()
    b = to_torch(torch, rng.standard_normal(6), "float32").requires_grad_()
    rm, rv = torch.zeros(6, device="cuda"), torch.ones(6, device="cuda")
    ty = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-4)
    dy = torch.randn_like(ty)
    ty.backward(dy)
    jrm, jrv = jiasu.zeros((6,), "float32"), jiasu.ones((6,), "float32")
    jx, jw, jb = (jiasu.asarray(t.detach()) for t in (x, w, b))
    y, mean, invstd = nn.batch_norm_training(jx, jw, jb, jrm, jrv, momentum=0.3, eps=1e-4)
    check(torch, y, ty, dtype)
    np.testing.assert_allclose(jrm.get(), rm.cpu().numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(jrv.get(), rv.cpu().numpy(), rtol=1e-3, atol=1e-3)
    grad_x, grad_w, grad_b = nn.batch_norm_backward(jiasu.asarray(dy), jx, jw, mean, invstd)
    check(torch, grad_x, x.grad, dtype, scale=4)
    check(torch, grad_w, w.grad, dtype, scale=8)
    check(torch, grad_b, b.grad, dtype, scale=8)
    check(torch, nn.batch_norm(jx, jrm, jrv, jw, jb), F.batch_norm(x.detach(), rm, rv, w.detach(), b.detach()), dtype)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
def test_softmax_and_activations_against_torch(torch, dtype, rng):
    F = torch.nn.functional
    x = to_torch(torch, rng.standard_normal((64, 333)) * 3, dtype).requires_grad_()
    dy = torch.randn_like(x)
    for name, f, kwargs in (("relu", F.relu, {}), ("sigmoid", torch.sigmoid, {}), ("tanh", torch.tanh, {}),
                            ("silu", F.silu, {}), ("gelu", F.gelu, {}), ("gelu", F.gelu, {"approximate": "tanh"}),
                            ("leaky_relu", F.leaky_relu, {"negative_slope": 0.1})):
        ty = f(x, **kwargs)
        (tgrad,) = torch.autograd.grad(ty, x, dy)
        jx = jiasu.asarray(x.detach())
        check(torch, getattr(nn, name)(jx, **kwargs), ty, dtype)
        check(torch, getattr(nn, name + "_backward")(jiasu.asarray(dy), jx, **kwargs), tgrad, dtype)
    for name, f in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
        for dim in (0, 1):
            ty = f(x, dim=dim)
            (tgrad,) = torch.autograd.grad(ty, x, dy)
            y = getattr(nn, name)(jiasu.asarray(x.detach()), dim)
            check(torch, y, ty, dtype)
            check(torch, getattr(nn, name + "_backward")(jiasu.asarray(dy), jiasu.asarray(ty.detach()), dim), tgrad,
                  dtype, scale=4)


def test_nn_takes_torch_tensors_without_a_copy(torch):
    t = torch.linspace(-2, 2, 11, device="cuda")
    y = nn.relu(t)
    np.testing.assert_array_equal(y.get(), torch.relu(t).cpu().numpy())
    nn.relu(t, inplace=True)  # writes the tensor's own memory
    assert float(t.min()) == 0.0


def test_cross_entropy_and_linear_against_torch(torch, rng):
    F = torch.nn.functional
    logits = torch.tensor(rng.standard_normal((32, 10)), device="cuda", dtype=torch.float32, requires_grad=True)
    target = torch.tensor(rng.integers(0, 10, 32), device="cuda")
    loss = F.cross_entropy(logits, target)
    (tgrad,) = torch.autograd.grad(loss, logits)
    jl, jt = jiasu.asarray(logits.detach()), jiasu.asarray(target)
    check(torch, nn.cross_entropy(jl, jt), loss.detach(), "float32")
    check(torch, nn.cross_entropy_backward(jl, jt), tgrad, "float32")
    w = torch.tensor(rng.standard_normal((5, 10)), device="cuda", dtype=torch.float32)
    check(torch, nn.linear(jl, jiasu.asarray(w)), F.linear(logits.detach(), w), "float32")


@pytest.mark.parametrize("size", [3, 1])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_conv2d_with_benchmark_against_torch(torch, dtype, size, rng):
    # 1x1: the first run of each pass times the matrix product against cuDNN; either may be kept.
    x_shape, w_shape, kwargs = (4, 16, 20, 18), (32, 16, size, size), {"padding": size // 2}
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))
    tx = to_torch(torch, x, dtype, channels_last=True).requires_grad_()
    tw = to_torch(torch, w, dtype, channels_last=True).requires_grad_()
    ty = torch.nn.functional.conv2d(tx, tw, **kwargs)
    dy = torch.randn_like(ty)
    ty.backward(dy)
    jx, jw = jiasu.asarray(tx.detach()), jiasu.asarray(tw.detach())
    before = nn.cudnn_info()["passes"]
    try:
        nn.benchmark = True
        for _ in range(2):  # the first run times the candidates, the second runs the one kept
            check(torch, nn.conv2d(jx, jw, **kwargs), ty, dtype)
            grad_x, grad_w, _ = nn.conv2d_backward(jiasu.asarray(dy), jx, jw, needs=("x", "weight"), **kwargs)
            check(torch, grad_x, tx.grad, dtype)
            check(torch, grad_w, tw.grad, dtype, scale=4)
    finally:
        nn.benchmark = False
    info = nn.cudnn_info()
    if info["built"] and info["loaded"] and size == 3:  # all six passes (three, twice) ran on cuDNN
        assert info["passes"] == before + 6, info["last_fallback"]
