// softmax and log_softmax along a dimension, and their gradients: on a GPU along the last dimension of a
// C-contiguous array through fused kernels (dnn/softmax_cuda.hpp); otherwise composed of engine calls
// (dnn/array_math.hpp):
//   softmax(x)     = exp(x - max) / sum(exp(x - max))
//   log_softmax(x) = (x - max) - log(sum(exp(x - max)))
// the maximum subtracted first so that exp cannot overflow.
#include <string>

#include "dnn/array_math.hpp"
#include "dnn/nn.hpp"
#include "dnn/checks.hpp"
#include "dnn/softmax_cuda.hpp"

namespace jiasu::dnn {
namespace {

using math::apply;
using ops::ReduceOp;
using ops::Ufunc;

}  // namespace

Array softmax(const Array& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  require_float(x, name, "input");
  const int64_t axis = normalize_dim(dim, x.ndim(), name);
  if (x.size() == 0) return Array::empty(x.shape(), x.dtype(), x.device());
  if (x.ndim() == 0) return softmax(x.reshape({1}), 0, log).reshape({});
  if (fused_softmax_applies(x, axis)) return fused_softmax(x, log);
  const Array in = computed_in_float32(x);
  const Array shifted = apply(Ufunc::Subtract, in, math::reduce(ReduceOp::Max, in, {axis}));
  const Array exps = apply(Ufunc::Exp, shifted);
  const Array sums = math::reduce(ReduceOp::Sum, exps, {axis});
  const Array y = log ? apply(Ufunc::Subtract, shifted, apply(Ufunc::Log, sums)) : apply(Ufunc::Divide, exps, sums);
  return rounded_back(y, x.dtype());
}

// softmax:     dx = y * (dy - sum(dy * y))
// log_softmax: dx = dy - exp(y) * sum(dy)
Array softmax_backward(const Array& grad_y, const Array& y, int64_t dim, bool log) {
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  require_float(y, name, "output");
  require_same(grad_y, "grad_output", y, "output", name);
  const int64_t axis = normalize_dim(dim, y.ndim(), name);
  if (y.size() == 0) return Array::empty(y.shape(), y.dtype(), y.device());
  if (y.ndim() == 0) return softmax_backward(grad_y.reshape({1}), y.reshape({1}), 0, log).reshape({});
  if (fused_softmax_applies(y, axis) && grad_y.c_contiguous()) return fused_softmax_backward(grad_y, y, log);
  const Array dy = computed_in_float32(grad_y), out = computed_in_float32(y);
  Array dx = log ? apply(Ufunc::Subtract, dy,
                         apply(Ufunc::Multiply, apply(Ufunc::Exp, out), math::reduce(ReduceOp::Sum, dy, {axis})))
                 : apply(Ufunc::Multiply, out,
                         apply(Ufunc::Subtract, dy,
                               math::reduce(ReduceOp::Sum, apply(Ufunc::Multiply, dy, out), {axis})));
  return rounded_back(dx, y.dtype());
}

}  // namespace jiasu::dnn
