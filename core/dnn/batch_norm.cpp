// Batch normalisation and its gradients. On a GPU, fused kernels (dnn/batch_norm_cuda.hpp) for the layouts they
// take; elsewhere, and where a cooperative launch is unavailable, a composition of engine calls: per-channel
// statistics are reductions over every axis but 1, and the normalisation one broadcast elementwise pass per
// term. float16 and bfloat16 are computed in float32 and rounded back; the statistics are float32 (float64 for
// float64), as PyTorch's.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "array/layout.hpp"
#include "dnn/array_math.hpp"
#include "dnn/batch_norm_cuda.hpp"
#include "dnn/checks.hpp"
#include "dnn/nn.hpp"
#include "dnn/windows.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using math::apply;
using ops::ReduceOp;
using ops::Ufunc;

// The axes the statistics reduce: all but the channels'.
std::vector<int64_t> statistics_axes(const Array& x) {
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != 1) axes.push_back(d);
  return axes;
}

// A per-channel vector (C,) as (1, C, 1, ...), to broadcast against x.
Array per_channel(const Array& v, const Array& x) {
  Shape shape(x.ndim(), 1);
  shape[1] = x.shape()[1];
  return computed_in_float32(v).reshape(shape);
}

void check(const Array& x, const char* function) {
  if (x.ndim() < 2)
    throw BadValue(std::string("jiasu.nn.") + function + ": input must have shape (N, C, ...), not " +
                   shape_string(x.shape()));
  require_float(x, function, "input");
}

void check_vector(const Array* v, const char* name, const Array& x, const char* function) {
  if (!v) return;
  const int64_t c = x.shape()[1];
  if (v->shape() != Shape{c})
    throw BadValue(std::string("jiasu.nn.") + function + ": " + name + " must have shape (" + std::to_string(c) +
                   ",) for input of shape " + shape_string(x.shape()) + ", not " + shape_string(v->shape()));
  require_float(*v, function, name);
  require_same_device(x, "input", *v, name, function);
}

// (x - mean) * invstd * weight + bias, each vector broadcast per channel; in x's dtype and layout.
Array normalised(const Array& x, const Array& mean, const Array& invstd, const Array* weight, const Array* bias) {
  const Array in = computed_in_float32(x);
  Array y = apply(Ufunc::Multiply, apply(Ufunc::Subtract, in, per_channel(mean, x)), per_channel(invstd, x));
  if (weight) y = apply(Ufunc::Multiply, y, per_channel(*weight, x));
  if (bias) y = apply(Ufunc::Add, y, per_channel(*bias, x));
  return in_layout_of(rounded_back(y, x.dtype()), x);
}

// running = (1 - momentum) * running + momentum * batch, in place.
void update(const Array& running, const Array& batch, double momentum) {
  const Array moved = apply(Ufunc::Add, apply(Ufunc::Multiply, computed_in_float32(running), 1 - momentum),
                            apply(Ufunc::Multiply, batch, momentum));
  ops::assign(running, moved);
}

}  // namespace

Array batch_norm_inference(const Array& x, const Array& running_mean, const Array& running_var, const Array* weight,
                           const Array* bias, double eps) {
  const char* function = "batch_norm";
  check(x, function);
  check_vector(&running_mean, "running_mean", x, function);
  check_vector(&running_var, "running_var", x, function);
  check_vector(weight, "weight", x, function);
  check_vector(bias, "bias", x, function);
  if (fused_batch_norm_applies(x)) return fused_batch_norm_inference(x, running_mean, running_var, weight, bias, eps);
  const Array invstd =
      apply(Ufunc::Divide, 1.0, apply(Ufunc::Sqrt, apply(Ufunc::Add, computed_in_float32(running_var), eps)));
  return normalised(x, running_mean, invstd, weight, bias);
}

BatchNormTraining batch_norm_training(const Array& x, const Array* weight, const Array* bias, const Array* running_mean,
                                      const Array* running_var, double momentum, double eps) {
  const char* function = "batch_norm_training";
  check(x, function);
  check_vector(weight, "weight", x, function);
  check_vector(bias, "bias", x, function);
  check_vector(running_mean, "running_mean", x, function);
  check_vector(running_var, "running_var", x, function);
  const int64_t count = x.size() / x.shape()[1];
  if (count < 2 && (running_var || count < 1))
    throw BadValue(std::string("jiasu.nn.") + function + ": expected more than 1 value per channel when training, "
                   "got input of shape " + shape_string(x.shape()));
  if (fused_batch_norm_applies(x))
    if (std::optional<BatchNormTraining> fused =
            fused_batch_norm_training(x, weight, bias, running_mean, running_var, momentum, eps))
      return std::move(*fused);
  const Array in = computed_in_float32(x);
  const std::vector<int64_t> axes = statistics_axes(x);
  const Array mean = math::reduce(ReduceOp::Mean, in, axes, false);
  const Array variance = math::reduce(ReduceOp::Var, in, axes, false);
  const Array invstd = apply(Ufunc::Divide, 1.0, apply(Ufunc::Sqrt, apply(Ufunc::Add, variance, eps)));
  if (running_mean) update(*running_mean, mean, momentum);
  if (running_var)
    update(*running_var, apply(Ufunc::Multiply, variance, double(count) / double(count - 1)), momentum);
  return {normalised(x, mean, invstd, weight, bias), mean, invstd};
}

// With x_hat = (x - mean) * invstd and M elements per channel:
//   grad_bias = sum(dy), grad_weight = sum(dy * x_hat),
//   grad_x = weight * invstd * (dy - grad_bias / M - x_hat * grad_weight / M).
BatchNormGradients batch_norm_backward(const Array& grad_y, const Array& x, const Array* weight, const Array& saved_mean,
                                       const Array& saved_invstd) {
  const char* function = "batch_norm_backward";
  check(x, function);
  require_same(grad_y, "grad_output", x, "input", function);
  check_vector(weight, "weight", x, function);
  check_vector(&saved_mean, "saved_mean", x, function);
  check_vector(&saved_invstd, "saved_invstd", x, function);
  if (fused_batch_norm_backward_applies(grad_y, x))
    if (std::optional<BatchNormGradients> fused =
            fused_batch_norm_backward(grad_y, x, weight, saved_mean, saved_invstd))
      return std::move(*fused);
  const std::vector<int64_t> axes = statistics_axes(x);
  const double count = double(x.size() / x.shape()[1]);
  const Array dy = computed_in_float32(grad_y), in = computed_in_float32(x);
  const Array x_hat = apply(Ufunc::Multiply, apply(Ufunc::Subtract, in, per_channel(saved_mean, x)),
                            per_channel(saved_invstd, x));
  const Array grad_bias = math::reduce(ReduceOp::Sum, dy, axes, false);
  const Array grad_weight = math::reduce(ReduceOp::Sum, apply(Ufunc::Multiply, dy, x_hat), axes, false);
  const Array centred = apply(Ufunc::Subtract, apply(Ufunc::Subtract, dy, per_channel(apply(Ufunc::Divide, grad_bias, count), x)),
                              apply(Ufunc::Multiply, x_hat, per_channel(apply(Ufunc::Divide, grad_weight, count), x)));
  Array scale = per_channel(saved_invstd, x);
  if (weight) scale = apply(Ufunc::Multiply, scale, per_channel(*weight, x));
  const Array grad_x = apply(Ufunc::Multiply, centred, scale);
  const DType vector_dtype = weight ? weight->dtype() : x.dtype();
  return {in_layout_of(rounded_back(grad_x, x.dtype()), x), rounded_back(grad_weight, vector_dtype),
          rounded_back(grad_bias, vector_dtype)};
}

}  // namespace jiasu::dnn
