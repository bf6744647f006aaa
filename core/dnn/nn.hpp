// jiasu.nn's operations with PyTorch's semantics (torch.nn.functional), on both backends: the activations
// (rows of ops/ufuncs.def, run by the elementwise engine), softmax and log-softmax, the cross-entropy loss,
// each with its gradient. float16 and bfloat16 inputs of softmax and the loss are computed in float32 and
// rounded back, as PyTorch does. Messages name the function as Python sees it ("jiasu.nn.relu").
#pragma once

#include <cstdint>
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

}  // namespace jiasu::dnn
