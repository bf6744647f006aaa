// jiasu.nn's operations with PyTorch's semantics (torch.nn.functional), on both backends: the activations
// (rows of ops/ufuncs.def, run by the elementwise engine), softmax and log-softmax, the cross-entropy loss,
// each with its gradient. float16 and bfloat16 inputs of softmax and the loss are computed in float32 and
// rounded back, as PyTorch does. Messages name the function as Python sees it ("jiasu.nn.relu").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "array/array.hpp"

namespace jiasu::dnn {

// The activations by PyTorch's name: relu, leaky_relu, sigmoid, tanh, silu, gelu (BadValue for another).
struct ActivationOptions {
  std::string approximate = "none";  // gelu: "none" (erf) or "tanh"
  double negative_slope = 0.01;      // leaky_relu
};
// The activation of `x` (a float array: BadArgument otherwise), into `out` when given (x itself for in-place).
Array activation(const std::string& name, const Array& x, const ActivationOptions& options, const Array* out = nullptr);
// Its gradient with respect to x, from the gradient of its output `grad_y` (x's shape and dtype).
Array activation_backward(const std::string& name, const Array& grad_y, const Array& x, const ActivationOptions& options);

// softmax (log_softmax when `log`) of `x` along `dim` (negative counts from the end; OutOfRange outside
// [-ndim, ndim), with a 0-d array taken as 1-d). BadArgument for a non-float dtype.
Array softmax(const Array& x, int64_t dim, bool log);
// The gradient of softmax (log_softmax when `log`) with respect to its input, from the gradient of its
// output `grad_y` and the output `y` itself. BadValue when the shapes differ, BadArgument when the dtypes do.
Array softmax_backward(const Array& grad_y, const Array& y, int64_t dim, bool log);

// The mean over the batch of -log_softmax(logits)[i, target[i]]: logits (N, C) float, target (N,) of an
// integer dtype with values in [0, C) (OutOfRange otherwise). A 0-d array of the logits' dtype.
Array cross_entropy(const Array& logits, const Array& target);
// The gradient of that mean with respect to the logits: (softmax(logits) - one_hot(target)) / N.
Array cross_entropy_backward(const Array& logits, const Array& target);

// ---- 2-D convolution (cross-correlation, as PyTorch's conv2d) of NCHW-shaped arrays, C-contiguous or
// channels-last (NHWC strides); the result in the input's layout.
struct ConvParams {
  std::array<int64_t, 2> stride{1, 1}, dilation{1, 1};
  std::array<int64_t, 2> pad_before{0, 0}, pad_after{0, 0};  // rows, columns
  int64_t groups = 1;
};
// The parameters from PyTorch's arguments: `padding_mode` "same" or "valid", else `padding` (both sides);
// BadValue for a stride or dilation below 1, padding below 0, groups below 1, "same" with a stride.
// "same" pads d * (k - 1) in all, the extra element after, as PyTorch does.
ConvParams conv_params(std::array<int64_t, 2> stride, const std::string& padding_mode, std::array<int64_t, 2> padding,
                       std::array<int64_t, 2> dilation, int64_t groups, const Shape& weight_shape);

// y = conv2d(x, weight) + bias: x (N, C, H, W), weight (K, C / groups, R, S), bias (K,) or none. BadValue for
// shapes that do not fit (naming both), BadArgument for dtypes that differ or are not float.
Array conv2d(const Array& x, const Array& weight, const Array* bias, const ConvParams& params);

// The gradients of conv2d with respect to x, weight and bias, each only when asked for.
struct ConvGradients {
  std::optional<Array> x, weight, bias;
};
ConvGradients conv2d_backward(const Array& grad_y, const Array& x, const Array& weight, const ConvParams& params,
                              bool need_x, bool need_weight, bool need_bias);

}  // namespace jiasu::dnn
