// The activations' names and options, mapped to their rows of ops/ufuncs.def.
#include <string>

#include "dnn/array_math.hpp"
#include "dnn/checks.hpp"
#include "dnn/nn.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using ops::Ufunc;

struct Rows {
  Ufunc forward, backward;
  bool sloped;  // the ufuncs take negative_slope as their last operand
};

Rows rows_of(const std::string& name, const ActivationOptions& options) {
  if (name == "relu") return {Ufunc::Relu, Ufunc::ReluBackward, false};
  if (name == "leaky_relu") return {Ufunc::LeakyRelu, Ufunc::LeakyReluBackward, true};
  if (name == "sigmoid") return {Ufunc::Sigmoid, Ufunc::SigmoidBackward, false};
  if (name == "tanh") return {Ufunc::Tanh, Ufunc::TanhBackward, false};
  if (name == "silu") return {Ufunc::Silu, Ufunc::SiluBackward, false};
  if (name == "gelu") {
    if (options.approximate == "none") return {Ufunc::Gelu, Ufunc::GeluBackward, false};
    if (options.approximate == "tanh") return {Ufunc::GeluTanh, Ufunc::GeluTanhBackward, false};
    throw BadValue("jiasu.nn.gelu: approximate must be 'none' or 'tanh', not '" + options.approximate + "'");
  }
  throw BadValue("jiasu.nn has no activation named '" + name + "'");
}

}  // namespace

Array activation(const std::string& name, const Array& x, const ActivationOptions& options, const Array* out) {
  const Rows rows = rows_of(name, options);
  require_float(x, name.c_str(), "input");
  const ops::Operand in[] = {math::operand(x), math::weak_float(options.negative_slope)};
  return ops::apply(rows.forward, in, rows.sloped ? 2 : 1, out);
}

Array activation_backward(const std::string& name, const Array& grad_y, const Array& x, const ActivationOptions& options) {
  const Rows rows = rows_of(name, options);
  const std::string function = name + "_backward";
  require_float(x, function.c_str(), "input");
  require_same(grad_y, "grad_output", x, "input", function.c_str());
  const ops::Operand in[] = {math::operand(grad_y), math::operand(x), math::weak_float(options.negative_slope)};
  return ops::apply(rows.backward, in, rows.sloped ? 3 : 2);
}

}  // namespace jiasu::dnn
