#include "dnn/convolution_pointwise.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "array/layout.hpp"
#include "dnn/convolution_cudnn.hpp"
#include "ops/matmul.hpp"
#include "ops/reduce.hpp"
#include "runtime/device.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using cudnn::Pass;

// `a` seen with `shape` without a copy, if it can be.
std::optional<Array> viewed_as(const Array& a, const Layout& layout, const Shape& shape) {
  try {
    return a.view(reshape_layout(layout, shape));
  } catch (const BadValue&) {
    return std::nullopt;
  }
}
Layout swapped(const Layout& layout) { return transpose_layout(layout, {1, 0}); }

// An (N, C, H, W) array as (N*H*W, C) rows, C one element apart (channels-last memory).
std::optional<Array> rows_of(const Array& a) {
  const Shape& s = a.shape();
  std::optional<Array> rows = viewed_as(a, transpose_layout(a.layout(), {0, 2, 3, 1}), {s[0] * s[2] * s[3], s[1]});
  if (rows && s[1] > 1 && rows->strides()[1] != a.layout().itemsize) return std::nullopt;
  return rows;
}
// An (N, C, H, W) array as N (C, H*W) matrices.
std::optional<Array> planes_of(const Array& a) {
  const Shape& s = a.shape();
  return viewed_as(a, a.layout(), {s[0], s[1], s[2] * s[3]});
}

// One pass as out = left @ right; with `summed`, left @ right is a batch of matrices whose sum is out.
struct Matrices {
  Array left, right, out;
  bool summed = false;
};

std::optional<Matrices> matrices_of(Pass pass, const Array& x, const Array& w, const Array& y) {
  const Array kc = w.view(squeeze_layout(w.layout(), {2, 3}));  // (K, C)
  const Array ck = kc.view(swapped(kc.layout()));
  const std::optional<Array> x_rows = rows_of(x), y_rows = rows_of(y);
  if (x_rows && y_rows) {  // channels-last: (M, C) and (M, K) matrices
    switch (pass) {
      case Pass::Forward: return Matrices{*x_rows, ck, *y_rows};
      case Pass::DataGradient: return Matrices{*y_rows, kc, *x_rows};
      case Pass::WeightGradient: return Matrices{y_rows->view(swapped(y_rows->layout())), *x_rows, kc};
    }
  }
  const std::optional<Array> x_planes = planes_of(x), y_planes = planes_of(y);
  if (!x_planes || !y_planes) return std::nullopt;
  switch (pass) {  // the weight broadcast over the batch of images
    case Pass::Forward: return Matrices{kc, *x_planes, *y_planes};
    case Pass::DataGradient: return Matrices{ck, *y_planes, *x_planes};
    case Pass::WeightGradient: {
      // A sum over the images: N products (K, C), then their sum; not for the half types, whose products would
      // round before the sum, nor where the N products would take more memory than the input.
      if (info(x.dtype()).itemsize < 4 || x.shape()[0] * kc.size() > x.size()) return std::nullopt;
      return Matrices{*y_planes, x_planes->view(transpose_layout(x_planes->layout(), {0, 2, 1})), kc, true};
    }
  }
  return std::nullopt;
}

void run(const Matrices& p) {
  if (!p.summed) {
    convolution_product(p.left, p.right, &p.out);
    return;
  }
  ops::ReduceRequest sum;
  sum.axes = std::vector<int64_t>{0};
  sum.out = &p.out;
  ops::reduce(convolution_product(p.left, p.right), sum);
}

// Benchmark mode's choices, per problem: whether the product beat cuDNN.
struct Choices {
  std::mutex mutex;
  std::map<std::string, bool> product_wins;
};
Choices& choices() {
  static auto* c = new Choices;  // never freed: used until exit
  return *c;
}

std::string problem_key(Pass pass, const Array& x, const Array& w, const Array& y) {
  std::string key = std::to_string(static_cast<int>(pass)) + " " + info(x.dtype()).name + " " +
                    std::to_string(x.device()) + (allow_tf32() ? " tf32" : "");
  for (const Array* a : {&x, &w, &y}) {
    key += " | " + std::to_string(a->data() % 256) + " @";  // the alignment cuBLASLt's and cuDNN's plans depend on
    for (int64_t d : a->shape()) key += " " + std::to_string(d);
    key += " :";
    for (int64_t s : a->strides()) key += " " + std::to_string(s);
  }
  return key;
}

}  // namespace

Array convolution_product(const Array& a, const Array& b, const Array* out) {
  ops::Product product = ops::prepare_matmul(a, b, out);
  product.allow_tf32 = allow_tf32();
  return ops::compute(product);
}

bool pointwise_convolution(Pass pass, const Array& x, const Array& w, const Array& y, const ConvParams& p) {
  // float16 and bfloat16 only on a GPU (cuBLASLt accumulates them in float32; NumPy's product would not).
  const DType d = x.dtype();
  if (!(d == DType::Float32 || d == DType::Float64 || (!x.on_host() && info(d).kind == DTypeKind::Float))) return false;
  if (w.shape()[2] != 1 || w.shape()[3] != 1 || p.groups != 1 || p.stride != std::array<int64_t, 2>{1, 1} ||
      p.pad_before != std::array<int64_t, 2>{0, 0} || p.pad_after != std::array<int64_t, 2>{0, 0})
    return false;
  if (x.size() == 0 || w.size() == 0 || y.size() == 0) return false;
  const std::optional<Matrices> product = matrices_of(pass, x, w, y);
  if (!product) return false;
  if (!benchmark() || x.on_host()) {
    try {
      run(*product);
    } catch (const LibraryNotFound&) {  // no cuBLASLt: cuDNN may still run it (nothing ran)
      return false;
    }
    return true;
  }
  const std::string key = problem_key(pass, x, w, y);
  Choices& c = choices();
  {
    std::lock_guard<std::mutex> guard(c.mutex);
    const auto it = c.product_wins.find(key);
    if (it != c.product_wins.end()) {
      if (it->second) run(*product);
      return it->second;
    }
  }
  // First use: cuDNN's first run in benchmark mode times its own plans; then both are timed alike. Either way
  // the pass's output is computed.
  activate(x.device());
  bool product_wins = true;
  if (cudnn_convolution(pass, x, w, y, p)) {
    const double ms_product = gpu_ms_per_call(x.device(), [&] { run(*product); });
    const double ms_cudnn = gpu_ms_per_call(x.device(), [&] { cudnn_convolution(pass, x, w, y, p); });
    product_wins = ms_product <= ms_cudnn;
  } else {
    run(*product);
  }
  std::lock_guard<std::mutex> guard(c.mutex);
  c.product_wins[key] = product_wins;
  return true;
}

}  // namespace jiasu::dnn
