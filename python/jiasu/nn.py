"""jiasu.nn: neural-network operations with PyTorch's functional names and argument order
(``torch.nn.functional``), forward and backward, on jiasu arrays (and, without a copy, on torch or CuPy GPU
arrays), on both backends. Each ``*_backward`` function returns the gradients of its forward's inputs from the
gradient of its output. See docs/nn.md.

The activations and softmax run in jiasu's own elementwise engine and reductions (the C++ core's
dnn/ and ops/); conv2d runs on cuDNN on a GPU (through cudnn-frontend, where jiasu was built with it), else
as matrix products over an im2col matrix (cuBLASLt on a GPU, NumPy's BLAS on the CPU backend); linear is a
matrix product. ``jiasu.nn.allow_tf32 = True`` lets float32 convolutions use TF32, ``jiasu.nn.benchmark =
True`` lets cuDNN time its candidate plans for each convolution and keep the fastest, ``cudnn_info()`` says
how cuDNN is used.
"""
import sys as _sys
import types as _types

from . import _core
from ._linalg import matmul as _matmul

_nn = _core.nn

relu = _nn.relu
relu_backward = _nn.relu_backward
leaky_relu = _nn.leaky_relu
leaky_relu_backward = _nn.leaky_relu_backward
sigmoid = _nn.sigmoid
sigmoid_backward = _nn.sigmoid_backward
tanh = _nn.tanh
tanh_backward = _nn.tanh_backward
silu = _nn.silu
silu_backward = _nn.silu_backward
gelu = _nn.gelu
gelu_backward = _nn.gelu_backward
softmax = _nn.softmax
softmax_backward = _nn.softmax_backward
log_softmax = _nn.log_softmax
log_softmax_backward = _nn.log_softmax_backward
conv2d = _nn.conv2d
conv2d_backward = _nn.conv2d_backward
max_pool2d = _nn.max_pool2d
max_pool2d_backward = _nn.max_pool2d_backward
avg_pool2d = _nn.avg_pool2d
avg_pool2d_backward = _nn.avg_pool2d_backward
batch_norm = _nn.batch_norm
batch_norm_training = _nn.batch_norm_training
batch_norm_backward = _nn.batch_norm_backward
cross_entropy = _nn.cross_entropy
cross_entropy_backward = _nn.cross_entropy_backward


def _check_linear(x, weight, bias=None, grad_y=None):
    for name, a in (("input", x), ("weight", weight), ("bias", bias), ("grad_output", grad_y)):
        if a is not None and not isinstance(a, _core.Array):
            raise TypeError(f"jiasu.nn.linear: {name} must be a jiasu.Array, not {type(a).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"jiasu.nn.linear: weight must have shape (out_features, in_features), not {weight.shape}")
    if x.ndim < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"jiasu.nn.linear: input of shape {x.shape} does not match weight of shape {weight.shape} "
                         f"(the input's last dimension must be in_features = {weight.shape[1]})")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"jiasu.nn.linear: bias must have shape ({weight.shape[0]},), not {bias.shape}")
    if grad_y is not None and grad_y.shape != x.shape[:-1] + (weight.shape[0],):
        raise ValueError(f"jiasu.nn.linear_backward: grad_output of shape {grad_y.shape} does not match the output "
                         f"shape {x.shape[:-1] + (weight.shape[0],)}")


def linear(input, weight, bias=None):  # noqa: A002 (PyTorch's name)
    """``input @ weight.T + bias``: input (..., in_features), weight (out_features, in_features)."""
    _check_linear(input, weight, bias)
    y = _matmul(input, weight.T)
    if bias is not None:
        y += bias
    return y


def linear_backward(grad_output, input, weight):  # noqa: A002
    """The gradients of ``linear`` with respect to input, weight and bias: ``(grad_input, grad_weight, grad_bias)``."""
    _check_linear(input, weight, grad_y=grad_output)
    grad_input = _matmul(grad_output, weight)
    rows_y = grad_output.reshape((-1, weight.shape[0]))
    rows_x = input.reshape((-1, weight.shape[1]))
    grad_weight = _matmul(rows_y.T, rows_x)
    grad_bias = rows_y.sum(axis=0)
    return grad_input, grad_weight, grad_bias


cudnn_info = _nn.cudnn_info


class _Module(_types.ModuleType):
    """jiasu.nn's settings are properties of the module, as PyTorch's torch.backends.cudnn.allow_tf32 and
    torch.backends.cudnn.benchmark."""

    @property
    def allow_tf32(self):
        """float32 convolutions may use TF32 tensor cores (default False, as PyTorch's for convolutions)."""
        return _nn.allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value):
        _nn.set_allow_tf32(bool(value))

    @property
    def benchmark(self):
        """Time cuDNN's candidate plans on each convolution problem's first run on a GPU and keep the fastest
        (default False: the heuristic's first plan that supports the problem). The first run of each new shape,
        dtype or layout is then slower, the later ones may be faster; no effect on the CPU backend."""
        return _nn.benchmark()

    @benchmark.setter
    def benchmark(self, value):
        _nn.set_benchmark(bool(value))


_sys.modules[__name__].__class__ = _Module

__all__ = ["relu", "relu_backward", "leaky_relu", "leaky_relu_backward", "sigmoid", "sigmoid_backward", "tanh",
           "tanh_backward", "silu", "silu_backward", "gelu", "gelu_backward", "softmax", "softmax_backward",
           "log_softmax", "log_softmax_backward", "conv2d", "conv2d_backward", "max_pool2d",
           "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "batch_norm", "batch_norm_training",
           "batch_norm_backward", "cross_entropy", "cross_entropy_backward", "linear",
           "linear_backward", "cudnn_info"]
