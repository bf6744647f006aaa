// jiasu.nn's C++ functions (jiasu._core.nn, re-exported by python/jiasu/nn.py): conversion only, the work is
// dnn/nn.hpp's. Arrays are jiasu arrays or GPU arrays of other libraries (torch, CuPy), viewed without a copy.
#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"
#include "dnn/nn.hpp"

namespace jiasu::py {
namespace {

// `value` as an array: a jiasu Array, or a zero-copy view of a GPU array of another library.
Array array_argument(nb::handle value, const char* function, const char* what) {
  if (nb::isinstance<Array>(value)) return *nb::inst_ptr<Array>(value);
  if (is_device_object(value)) return device_array_from(value);
  throw BadArgument(std::string("jiasu.nn.") + function + ": " + what + " must be a jiasu.Array (or a GPU array), not " +
                    python_type_name(value));
}

// Large arrays run without the GIL, as the elementwise operations do.
template <typename F>
Array released(const Array& a, F&& f) {
  if (a.size() >= kReleaseGilElements) {
    nb::gil_scoped_release unlocked;
    return f();
  }
  return f();
}

dnn::ActivationOptions options(const std::string& approximate, double negative_slope) {
  dnn::ActivationOptions o;
  o.approximate = approximate;
  o.negative_slope = negative_slope;
  return o;
}

// jiasu.nn.NAME(input, ...) and NAME_backward(grad_output, input, ...).
nb::object forward(const std::string& name, nb::handle input, bool inplace, const dnn::ActivationOptions& o) {
  const Array x = array_argument(input, name.c_str(), "input");
  Array y = released(x, [&] { return dnn::activation(name, x, o, inplace ? &x : nullptr); });
  return inplace && nb::isinstance<Array>(input) ? nb::borrow(input) : nb::cast(std::move(y));
}

Array backward(const std::string& name, nb::handle grad_output, nb::handle input, const dnn::ActivationOptions& o) {
  const std::string function = name + "_backward";
  const Array dy = array_argument(grad_output, function.c_str(), "grad_output");
  const Array x = array_argument(input, function.c_str(), "input");
  return released(x, [&] { return dnn::activation_backward(name, dy, x, o); });
}

}  // namespace

void bind_nn(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("nn", "jiasu.nn's C++ functions");
  const auto input = nb::arg("input"), grad = nb::arg("grad_output");
  const auto inplace = nb::arg("inplace") = false;
  for (const char* name : {"relu", "sigmoid", "tanh", "silu"}) {
    const std::string n = name;
    m.def(name, [n](nb::handle x, bool in_place) { return forward(n, x, in_place, {}); }, input, inplace);
    m.def((n + "_backward").c_str(), [n](nb::handle dy, nb::handle x) { return backward(n, dy, x, {}); }, grad, input);
  }
  m.def("gelu", [](nb::handle x, const std::string& approximate) {
    return forward("gelu", x, false, options(approximate, 0));
  }, input, nb::arg("approximate") = "none");
  m.def("gelu_backward", [](nb::handle dy, nb::handle x, const std::string& approximate) {
    return backward("gelu", dy, x, options(approximate, 0));
  }, grad, input, nb::arg("approximate") = "none");
  m.def("leaky_relu", [](nb::handle x, double slope, bool in_place) {
    return forward("leaky_relu", x, in_place, options("none", slope));
  }, input, nb::arg("negative_slope") = 0.01, inplace);
  m.def("leaky_relu_backward", [](nb::handle dy, nb::handle x, double slope) {
    return backward("leaky_relu", dy, x, options("none", slope));
  }, grad, input, nb::arg("negative_slope") = 0.01);

  for (bool log : {false, true}) {
    const std::string name = log ? "log_softmax" : "softmax";
    m.def(name.c_str(), [name, log](nb::handle input, int64_t dim) {
      const Array x = array_argument(input, name.c_str(), "input");
      return released(x, [&] { return dnn::softmax(x, dim, log); });
    }, input, nb::arg("dim"));
    const std::string backward_name = name + "_backward";
    m.def(backward_name.c_str(), [backward_name, log](nb::handle grad_output, nb::handle output, int64_t dim) {
      const Array dy = array_argument(grad_output, backward_name.c_str(), "grad_output");
      const Array y = array_argument(output, backward_name.c_str(), "output");
      return released(y, [&] { return dnn::softmax_backward(dy, y, dim, log); });
    }, grad, nb::arg("output"), nb::arg("dim"));
  }
  for (bool gradient : {false, true}) {
    const std::string name = gradient ? "cross_entropy_backward" : "cross_entropy";
    m.def(name.c_str(), [name, gradient](nb::handle input, nb::handle target) {
      const Array logits = array_argument(input, name.c_str(), "input");
      const Array classes = array_argument(target, name.c_str(), "target");
      return released(logits, [&] {
        return gradient ? dnn::cross_entropy_backward(logits, classes) : dnn::cross_entropy(logits, classes);
      });
    }, input, nb::arg("target"));
  }
}

}  // namespace jiasu::py
