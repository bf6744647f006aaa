// conv2d and its gradients: 1x1 passes as one matrix product (dnn/convolution_pointwise.hpp); on a GPU the
// others through cuDNN (dnn/convolution_cudnn.hpp) where it runs the problem; else (the CPU backend, float64,
// problems cuDNN declines) as matrix products over an im2col matrix (cuBLASLt's on a GPU, NumPy's BLAS on the
// CPU backend): the input, zero-padded, is viewed without a copy as (N, G, C/G, R, S, OH, OW) through its
// strides, copied into columns (N, G, C/G*R*S, OH*OW), and multiplied by the weight (G, K/G, C/G*R*S).
// The input gradient scatters the columns' gradient back, one strided add per kernel position.
// float16 and bfloat16 are computed in float32 and rounded back.
#include <string>
#include <vector>

#include "array/layout.hpp"
#include "array/promotion.hpp"
#include "dnn/array_math.hpp"
#include "dnn/checks.hpp"
#include "dnn/convolution_cudnn.hpp"
#include "dnn/convolution_pointwise.hpp"
#include "dnn/nn.hpp"
#include "dnn/windows.hpp"
#include "ops/join.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using ops::Ufunc;

// Checks the operands; the walk of the weight's windows over x.
Windows geometry(const Array& x, const Array& weight, const ConvParams& p, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  if (x.ndim() != 4) throw BadValue(prefix + "input must have shape (N, C, H, W), not " + shape_string(x.shape()));
  if (weight.ndim() != 4)
    throw BadValue(prefix + "weight must have shape (out_channels, in_channels / groups, kH, kW), not " +
                   shape_string(weight.shape()));
  require_float(x, function, "input");
  require_like(weight, "weight", x, "input", function);
  const int64_t c = x.shape()[1], k = weight.shape()[0];
  if (weight.shape()[1] * p.groups != c)
    throw BadValue(prefix + "input of shape " + shape_string(x.shape()) + " has " + std::to_string(c) +
                   " channels, but weight of shape " + shape_string(weight.shape()) + " with groups=" +
                   std::to_string(p.groups) + " expects " + std::to_string(weight.shape()[1] * p.groups));
  if (k % p.groups != 0)
    throw BadValue(prefix + "out_channels (" + std::to_string(k) + ") must be divisible by groups (" +
                   std::to_string(p.groups) + ")");
  return windows_over(x.shape(), weight.shape()[2], weight.shape()[3], p, prefix);
}

// The im2col matrix: (N, G, C/G * R * S, OH * OW), C-contiguous.
Array columns(const Array& xp, const Windows& g) {
  const Array copy = ops::astype(xp.view(all_windows(xp, g)), xp.dtype());
  return copy.reshape({g.n, g.p.groups, g.c / g.p.groups * g.r * g.s, g.oh * g.ow});
}

Array transposed(const Array& a, const std::vector<int64_t>& axes) { return a.view(transpose_layout(a.layout(), axes)); }

void require_vector(const Array* bias, const Array& x, int64_t k, const char* function) {
  if (!bias) return;
  if (bias->shape() != Shape{k})
    throw BadValue(std::string("jiasu.nn.") + function + ": bias must have shape (" + std::to_string(k) + ",), not " +
                   shape_string(bias->shape()));
  require_like(*bias, "bias", x, "input", function);
}

// y += bias, broadcast over (N, ., H, W).
void add_bias(const Array& y, const Array& bias) {
  const Array b = bias.reshape({1, bias.shape()[0], 1, 1});
  const ops::Operand in[] = {math::operand(y), math::operand(b)};
  ops::apply(Ufunc::Add, in, 2, &y);
}

}  // namespace

ConvParams conv_params(std::array<int64_t, 2> stride, const std::string& padding_mode, std::array<int64_t, 2> padding,
                       std::array<int64_t, 2> dilation, int64_t groups, const Shape& weight_shape) {
  const std::string prefix = "jiasu.nn.conv2d: ";
  for (int i = 0; i < 2; ++i) {
    if (stride[i] < 1) throw BadValue(prefix + "stride must be at least 1, not " + std::to_string(stride[i]));
    if (dilation[i] < 1) throw BadValue(prefix + "dilation must be at least 1, not " + std::to_string(dilation[i]));
    if (padding[i] < 0) throw BadValue(prefix + "padding must be at least 0, not " + std::to_string(padding[i]));
  }
  if (groups < 1) throw BadValue(prefix + "groups must be at least 1, not " + std::to_string(groups));
  ConvParams p;
  p.stride = stride;
  p.dilation = dilation;
  p.groups = groups;
  if (padding_mode.empty()) {
    p.pad_before = p.pad_after = padding;
  } else if (padding_mode == "same") {
    if (stride[0] != 1 || stride[1] != 1)
      throw BadValue(prefix + "padding='same' is not supported for strided convolutions");
    for (int i = 0; i < 2 && weight_shape.size() == 4; ++i) {
      const int64_t total = dilation[i] * (weight_shape[2 + i] - 1);
      p.pad_before[i] = total / 2;
      p.pad_after[i] = total - total / 2;
    }
  } else if (padding_mode != "valid") {
    throw BadValue(prefix + "padding must be 'same', 'valid' or numbers, not '" + padding_mode + "'");
  }
  return p;
}


Array conv2d(const Array& x, const Array& weight, const Array* bias, const ConvParams& p) {
  const Windows g = geometry(x, weight, p, "conv2d");
  require_vector(bias, x, weight.shape()[0], "conv2d");
  {
    const Array y = empty_in_layout_of({g.n, weight.shape()[0], g.oh, g.ow}, x.dtype(), x);
    if (pointwise_convolution(cudnn::Pass::Forward, x, weight, y, p) ||
        cudnn_convolution(cudnn::Pass::Forward, x, weight, y, p)) {
      if (bias) add_bias(y, *bias);
      return y;
    }
  }
  const Array xin = computed_in_float32(x), win = computed_in_float32(weight);
  const int64_t kg = weight.shape()[0] / p.groups, crs = g.c / p.groups * g.r * g.s;
  Array y = convolution_product(ops::reshape(win, {p.groups, kg, crs}), columns(padded(xin, g, 0), g))
                .reshape({g.n, weight.shape()[0], g.oh, g.ow});
  if (bias) add_bias(y, computed_in_float32(*bias));
  return in_layout_of(rounded_back(y, x.dtype()), x);
}

namespace {

// The gradients through the im2col matrix; dy is (N, G, K/G, OH * OW), float32 for the half types.
Array im2col_weight_gradient(const Array& dy, const Array& xin, const Array& weight, const Windows& g) {
  // (G, K/G, N * P) @ (G, N * P, C/G * R * S): the batch summed inside one product.
  const int64_t groups = g.p.groups, crs = g.c / groups * g.r * g.s;
  const Array cols = columns(padded(xin, g, 0), g);
  const Array dy_rows = ops::astype(transposed(dy, {1, 2, 0, 3}), dy.dtype()).reshape({groups, dy.shape()[2], -1});
  const Array cols_rows = ops::astype(transposed(cols, {1, 0, 3, 2}), cols.dtype()).reshape({groups, -1, crs});
  const Array dw = convolution_product(dy_rows, cols_rows).reshape(weight.shape());
  return in_layout_of(rounded_back(dw, weight.dtype()), weight);
}

Array im2col_input_gradient(const Array& dy, const Array& x, const Array& weight, const Windows& g) {
  const int64_t groups = g.p.groups, crs = g.c / groups * g.r * g.s;
  const Array wg = ops::reshape(computed_in_float32(weight), {groups, dy.shape()[2], crs});
  const Array dcols =
      convolution_product(transposed(wg, {0, 2, 1}), dy).reshape({g.n, groups, g.c / groups, g.r, g.s, g.oh, g.ow});
  const Array dxp = zeros({g.n, g.c, g.hp, g.wp}, dcols.dtype(), x.device());
  for (int64_t r = 0; r < g.r; ++r) {
    for (int64_t s = 0; s < g.s; ++s) {
      const Array target = dxp.view(window_position(dxp, g, r, s));
      std::vector<IndexItem> at(5);
      for (int i = 0; i < 3; ++i) at[i].kind = IndexItem::Slice;
      at[3].index = r;
      at[4].index = s;
      const Array part = dcols.index(at);
      const ops::Operand in[] = {math::operand(target), math::operand(part)};
      ops::apply(Ufunc::Add, in, 2, &target);
    }
  }
  const Array dx = g.hp == g.h && g.wp == g.w ? dxp : ops::astype(dxp.view(interior(dxp, g)), dxp.dtype());
  return in_layout_of(rounded_back(dx, x.dtype()), x);
}

}  // namespace

ConvGradients conv2d_backward(const Array& grad_y, const Array& x, const Array& weight, const ConvParams& p,
                              bool need_x, bool need_weight, bool need_bias) {
  const Windows g = geometry(x, weight, p, "conv2d_backward");
  const Shape y_shape = {g.n, weight.shape()[0], g.oh, g.ow};
  if (grad_y.shape() != y_shape)
    throw BadValue("jiasu.nn.conv2d_backward: grad_output has shape " + shape_string(grad_y.shape()) +
                   " but the output has shape " + shape_string(y_shape));
  require_like(grad_y, "grad_output", x, "input", "conv2d_backward");
  ConvGradients out;
  if (need_bias)
    out.bias = rounded_back(math::reduce(ops::ReduceOp::Sum, computed_in_float32(grad_y), {0, 2, 3}, false), x.dtype());
  if (need_weight) {
    const Array dw = empty_in_layout_of(weight.shape(), weight.dtype(), weight);
    if (pointwise_convolution(cudnn::Pass::WeightGradient, x, dw, grad_y, p) ||
        cudnn_convolution(cudnn::Pass::WeightGradient, x, dw, grad_y, p))
      out.weight = dw;
  }
  if (need_x) {
    const Array dx = empty_in_layout_of(x.shape(), x.dtype(), x);
    if (pointwise_convolution(cudnn::Pass::DataGradient, dx, weight, grad_y, p) ||
        cudnn_convolution(cudnn::Pass::DataGradient, dx, weight, grad_y, p))
      out.x = dx;
  }
  if ((need_weight && !out.weight) || (need_x && !out.x)) {
    const int64_t kg = weight.shape()[0] / p.groups;
    const Array dy = ops::reshape(computed_in_float32(grad_y), {g.n, p.groups, kg, g.oh * g.ow});
    if (need_weight && !out.weight) out.weight = im2col_weight_gradient(dy, computed_in_float32(x), weight, g);
    if (need_x && !out.x) out.x = im2col_input_gradient(dy, x, weight, g);
  }
  return out;
}

}  // namespace jiasu::dnn
