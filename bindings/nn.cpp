// jiasu.nn's C++ functions (jiasu._core.nn, re-exported by python/jiasu/nn.py): conversion only, the work is
// dnn/nn.hpp's. Arrays are jiasu arrays or GPU arrays of other libraries (torch, CuPy), viewed without a copy.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <array>
#include <optional>
#include <string>

#include "common.hpp"
#include "dnn/convolution_cudnn.hpp"
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
auto released(const Array& a, F&& f) -> decltype(f()) {
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

// An int, or a pair of ints (rows, columns), as PyTorch's _pair.
std::array<int64_t, 2> pair_from(nb::handle value, const char* what, const char* function = "conv2d") {
  if (PyLong_Check(value.ptr())) {
    const int64_t v = nb::cast<int64_t>(value);
    return {v, v};
  }
  if ((PyTuple_Check(value.ptr()) || PyList_Check(value.ptr())) && nb::len(value) == 2)
    return {nb::cast<int64_t>(value[0]), nb::cast<int64_t>(value[1])};
  throw BadArgument(std::string("jiasu.nn.") + function + ": " + what + " must be an int or a pair of ints, not " +
                    python_type_name(value));
}

dnn::ConvParams conv_params(nb::handle stride, nb::handle padding, nb::handle dilation, int64_t groups,
                            const Array& weight) {
  std::string mode;
  std::array<int64_t, 2> pads{0, 0};
  if (PyUnicode_Check(padding.ptr())) mode = nb::cast<std::string>(padding);
  else pads = pair_from(padding, "padding");
  return dnn::conv_params(pair_from(stride, "stride"), mode, pads, pair_from(dilation, "dilation"), groups,
                          weight.shape());
}

nb::object optional_array(std::optional<Array>& a) { return a ? nb::cast(std::move(*a)) : nb::none(); }

dnn::PoolParams pool_params(nb::handle kernel, nb::handle stride, nb::handle padding, bool count_include_pad,
                            const char* function) {
  std::optional<std::array<int64_t, 2>> steps;
  if (!stride.is_none()) steps = pair_from(stride, "stride", function);
  return dnn::pool_params(pair_from(kernel, "kernel_size", function), steps, pair_from(padding, "padding", function),
                          count_include_pad, function);
}

// None or an array.
std::optional<Array> maybe_array(nb::handle value, const char* function, const char* what) {
  if (value.is_none()) return std::nullopt;
  return array_argument(value, function, what);
}
const Array* pointer(const std::optional<Array>& a) { return a ? &*a : nullptr; }

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
  m.def("conv2d", [](nb::handle input, nb::handle weight, nb::handle bias, nb::handle stride, nb::handle padding,
                     nb::handle dilation, int64_t groups) {
    const Array x = array_argument(input, "conv2d", "input"), w = array_argument(weight, "conv2d", "weight");
    std::optional<Array> b;
    if (!bias.is_none()) b = array_argument(bias, "conv2d", "bias");
    const dnn::ConvParams params = conv_params(stride, padding, dilation, groups, w);
    return released(x, [&] { return dnn::conv2d(x, w, b ? &*b : nullptr, params); });
  }, input, nb::arg("weight"), nb::arg("bias").none() = nb::none(), nb::arg("stride") = 1, nb::arg("padding") = 0,
     nb::arg("dilation") = 1, nb::arg("groups") = 1);
  m.def("conv2d_backward", [](nb::handle grad_output, nb::handle input, nb::handle weight, nb::handle stride,
                              nb::handle padding, nb::handle dilation, int64_t groups, nb::handle needs) {
    const char* name = "conv2d_backward";
    const Array dy = array_argument(grad_output, name, "grad_output"), x = array_argument(input, name, "input"),
                w = array_argument(weight, name, "weight");
    bool need[3] = {false, false, false};
    for (nb::handle item : needs) {
      const std::string what = nb::cast<std::string>(item);
      const int index = what == "x" || what == "input" ? 0 : what == "weight" ? 1 : what == "bias" ? 2 : -1;
      if (index < 0) throw BadValue("jiasu.nn.conv2d_backward: needs takes 'x', 'weight' and 'bias', not '" + what + "'");
      need[index] = true;
    }
    const dnn::ConvParams params = conv_params(stride, padding, dilation, groups, w);
    dnn::ConvGradients grads = released(x, [&] {
      return dnn::conv2d_backward(dy, x, w, params, need[0], need[1], need[2]);
    });
    return nb::make_tuple(optional_array(grads.x), optional_array(grads.weight), optional_array(grads.bias));
  }, grad, input, nb::arg("weight"), nb::arg("stride") = 1, nb::arg("padding") = 0, nb::arg("dilation") = 1,
     nb::arg("groups") = 1, nb::arg("needs") = nb::make_tuple("x", "weight", "bias"));

  const auto kernel = nb::arg("kernel_size");
  const auto stride = nb::arg("stride").none() = nb::none();
  const auto padding = nb::arg("padding") = 0;
  const auto include_pad = nb::arg("count_include_pad") = true;
  m.def("max_pool2d", [](nb::handle input, nb::handle kernel_size, nb::handle stride, nb::handle padding) {
    const Array x = array_argument(input, "max_pool2d", "input");
    const dnn::PoolParams p = pool_params(kernel_size, stride, padding, true, "max_pool2d");
    return released(x, [&] { return dnn::max_pool2d(x, p); });
  }, input, kernel, stride, padding);
  m.def("max_pool2d_backward", [](nb::handle grad_output, nb::handle input, nb::handle kernel_size, nb::handle stride,
                                  nb::handle padding) {
    const char* name = "max_pool2d_backward";
    const Array dy = array_argument(grad_output, name, "grad_output"), x = array_argument(input, name, "input");
    const dnn::PoolParams p = pool_params(kernel_size, stride, padding, true, name);
    return released(x, [&] { return dnn::max_pool2d_backward(dy, x, p); });
  }, grad, input, kernel, stride, padding);
  m.def("avg_pool2d", [](nb::handle input, nb::handle kernel_size, nb::handle stride, nb::handle padding,
                         bool count_include_pad) {
    const Array x = array_argument(input, "avg_pool2d", "input");
    const dnn::PoolParams p = pool_params(kernel_size, stride, padding, count_include_pad, "avg_pool2d");
    return released(x, [&] { return dnn::avg_pool2d(x, p); });
  }, input, kernel, stride, padding, include_pad);
  m.def("avg_pool2d_backward", [](nb::handle grad_output, nb::handle input, nb::handle kernel_size, nb::handle stride,
                                  nb::handle padding, bool count_include_pad) {
    const char* name = "avg_pool2d_backward";
    const Array dy = array_argument(grad_output, name, "grad_output"), x = array_argument(input, name, "input");
    const dnn::PoolParams p = pool_params(kernel_size, stride, padding, count_include_pad, name);
    return released(x, [&] { return dnn::avg_pool2d_backward(dy, x, p); });
  }, grad, input, kernel, stride, padding, include_pad);

  m.def("batch_norm", [](nb::handle input, nb::handle running_mean, nb::handle running_var, nb::handle weight,
                         nb::handle bias, bool training, double momentum, double eps) {
    const char* name = "batch_norm";
    const Array x = array_argument(input, name, "input");
    const std::optional<Array> mean = maybe_array(running_mean, name, "running_mean"),
                               var = maybe_array(running_var, name, "running_var"),
                               w = maybe_array(weight, name, "weight"), b = maybe_array(bias, name, "bias");
    return released(x, [&] {
      if (training) return dnn::batch_norm_training(x, pointer(w), pointer(b), pointer(mean), pointer(var), momentum, eps).y;
      if (!mean || !var) throw BadValue("jiasu.nn.batch_norm: running_mean and running_var are needed when not training");
      return dnn::batch_norm_inference(x, *mean, *var, pointer(w), pointer(b), eps);
    });
  }, input, nb::arg("running_mean").none(), nb::arg("running_var").none(), nb::arg("weight").none() = nb::none(),
     nb::arg("bias").none() = nb::none(), nb::arg("training") = false, nb::arg("momentum") = 0.1,
     nb::arg("eps") = 1e-5);
  m.def("batch_norm_training", [](nb::handle input, nb::handle weight, nb::handle bias, nb::handle running_mean,
                                  nb::handle running_var, double momentum, double eps) {
    const char* name = "batch_norm_training";
    const Array x = array_argument(input, name, "input");
    const std::optional<Array> mean = maybe_array(running_mean, name, "running_mean"),
                               var = maybe_array(running_var, name, "running_var"),
                               w = maybe_array(weight, name, "weight"), b = maybe_array(bias, name, "bias");
    dnn::BatchNormTraining r = released(x, [&] {
      return dnn::batch_norm_training(x, pointer(w), pointer(b), pointer(mean), pointer(var), momentum, eps);
    });
    return nb::make_tuple(std::move(r.y), std::move(r.saved_mean), std::move(r.saved_invstd));
  }, input, nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("running_mean").none(),
     nb::arg("running_var").none(), nb::arg("momentum") = 0.1, nb::arg("eps") = 1e-5);
  m.def("batch_norm_backward", [](nb::handle grad_output, nb::handle input, nb::handle weight, nb::handle saved_mean,
                                  nb::handle saved_invstd) {
    const char* name = "batch_norm_backward";
    const Array dy = array_argument(grad_output, name, "grad_output"), x = array_argument(input, name, "input");
    const std::optional<Array> w = maybe_array(weight, name, "weight");
    const Array mean = array_argument(saved_mean, name, "saved_mean"), invstd = array_argument(saved_invstd, name, "saved_invstd");
    dnn::BatchNormGradients g = released(x, [&] { return dnn::batch_norm_backward(dy, x, pointer(w), mean, invstd); });
    return nb::make_tuple(std::move(g.x), std::move(g.weight), std::move(g.bias));
  }, grad, input, nb::arg("weight").none(), nb::arg("saved_mean"), nb::arg("saved_invstd"));

  m.def("set_allow_tf32", &dnn::set_allow_tf32, nb::arg("allow"));
  m.def("allow_tf32", &dnn::allow_tf32);
  m.def("set_benchmark", &dnn::set_benchmark, nb::arg("on"));
  m.def("benchmark", &dnn::benchmark);
  m.def("cudnn_info", [] {
    const dnn::CudnnReport r = dnn::cudnn_report();
    nb::dict d;
    d["built"] = r.built;
    d["frontend"] = r.frontend;
    d["loaded"] = r.loaded;
    d["library"] = r.library;
    d["version"] = r.version;
    d["why_not"] = r.why_not;
    d["passes"] = r.passes;
    d["fallbacks"] = r.fallbacks;
    d["last_fallback"] = r.last_fallback;
    return d;
  }, "How jiasu.nn uses cuDNN: whether it was built with cudnn-frontend, the library it loaded (loading it "
     "if needed), and the convolution passes cuDNN ran or declined.");

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
