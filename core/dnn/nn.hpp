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

// ---- 2-D pooling of NCHW-shaped arrays (C-contiguous or channels-last; the result in the input's layout), on
// windows that stay inside the padded input (PyTorch's ceil_mode=False).
struct PoolParams {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0};
  bool count_include_pad = true;  // avg_pool2d: padding counts in each window's divisor
};
// From PyTorch's arguments (no stride: the kernel size); BadValue for sizes below 1, padding below 0 or above
// half the kernel, as PyTorch refuses.
PoolParams pool_params(std::array<int64_t, 2> kernel, std::optional<std::array<int64_t, 2>> stride,
                       std::array<int64_t, 2> padding, bool count_include_pad, const char* function);
Array max_pool2d(const Array& x, const PoolParams& params);
// The gradient reaches each window's first maximum (in row-major order), as PyTorch's does.
Array max_pool2d_backward(const Array& grad_y, const Array& x, const PoolParams& params);
Array avg_pool2d(const Array& x, const PoolParams& params);
Array avg_pool2d_backward(const Array& grad_y, const Array& x, const PoolParams& params);

// ---- batch normalisation over (N, H, W) per channel of x (N, C, ...): any rank of at least 2.
// Inference: (x - running_mean) / sqrt(running_var + eps) * weight + bias (weight and bias optional).
Array batch_norm_inference(const Array& x, const Array& running_mean, const Array& running_var, const Array* weight,
                           const Array* bias, double eps);
struct BatchNormTraining {
  Array y, saved_mean, saved_invstd;  // saved_*: (C,) float32 (float64 for float64 inputs)
};
// Training: normalised by the batch's statistics (biased variance); the running statistics, when given, are
// updated in place with the unbiased variance: r = (1 - momentum) r + momentum * batch, as PyTorch does.
BatchNormTraining batch_norm_training(const Array& x, const Array* weight, const Array* bias, const Array* running_mean,
                                      const Array* running_var, double momentum, double eps);
struct BatchNormGradients {
  Array x, weight, bias;
};
BatchNormGradients batch_norm_backward(const Array& grad_y, const Array& x, const Array* weight, const Array& saved_mean,
                                       const Array& saved_invstd);

}  // namespace jiasu::dnn
