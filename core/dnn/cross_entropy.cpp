// The cross-entropy loss of integer class targets, mean over the batch, and its gradient, composed of
// engine calls (dnn/array_math.hpp): the target's class is picked out of each row by a one-hot mask.
#include <string>
#include <vector>

#include "array/layout.hpp"
#include "array/promotion.hpp"
#include "dnn/array_math.hpp"
#include "dnn/checks.hpp"
#include "dnn/nn.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using math::apply;
using ops::ReduceOp;
using ops::Ufunc;

// The reduction's one value, on the host.
int64_t host_value(const Array& a) {
  int64_t value = 0;
  ops::astype(a, DType::Int64).copy_to_host(&value);
  return value;
}

// Checks the shapes, types and target values; the number of classes.
int64_t check(const Array& logits, const Array& target, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  require_float(logits, function, "input");
  if (logits.ndim() != 2)
    throw BadValue(prefix + "input must have shape (N, C), not " + shape_string(logits.shape()));
  if (category(target.dtype()) != Category::Integer)
    throw BadArgument(prefix + "target must hold class indices of an integer dtype, not " + info(target.dtype()).name);
  if (target.ndim() != 1 || target.shape()[0] != logits.shape()[0])
    throw BadValue(prefix + "target of shape " + shape_string(target.shape()) + " does not match input of shape " +
                   shape_string(logits.shape()) + " (it must have shape (N,))");
  require_same_device(logits, "input", target, "target", function);
  const int64_t classes = logits.shape()[1];
  if (target.size() > 0) {
    for (ReduceOp bound : {ReduceOp::Min, ReduceOp::Max}) {
      const int64_t value = host_value(math::reduce(bound, target, {0}, false));
      if (value < 0 || value >= classes)
        throw OutOfRange(prefix + "target " + std::to_string(value) + " is out of bounds for " +
                         std::to_string(classes) + " classes");
    }
  }
  return classes;
}

// (N, C) bool: row i true at column target[i].
Array one_hot(const Array& target, int64_t classes) {
  std::vector<int64_t> indices(classes);
  for (int64_t c = 0; c < classes; ++c) indices[c] = c;
  Array columns = Array::empty({1, classes}, DType::Int64, target.device());
  if (classes > 0) columns.copy_from_host(indices.data());
  return apply(Ufunc::Equal, target.reshape({target.shape()[0], 1}), columns);
}

}  // namespace

Array cross_entropy(const Array& logits, const Array& target) {
  const int64_t classes = check(logits, target, "cross_entropy");
  const Array log_probabilities = softmax(computed_in_float32(logits), 1, true);
  const Array picked = math::reduce(ReduceOp::Sum, math::where_else_zero(one_hot(target, classes), log_probabilities),
                                    {1}, false);
  const Array loss = apply(Ufunc::Negative, math::reduce(ReduceOp::Mean, picked, {0}, false));
  return rounded_back(loss, logits.dtype());
}

Array cross_entropy_backward(const Array& logits, const Array& target) {
  const int64_t classes = check(logits, target, "cross_entropy_backward");
  const Array probabilities = softmax(computed_in_float32(logits), 1, false);
  const Array onehot = ops::astype(one_hot(target, classes), probabilities.dtype());
  const double batch = static_cast<double>(logits.shape()[0]);
  const Array grad = apply(Ufunc::Divide, apply(Ufunc::Subtract, probabilities, onehot), batch);
  return rounded_back(grad, logits.dtype());
}

}  // namespace jiasu::dnn
