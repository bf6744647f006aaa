// conv2d and its gradients as matrix products over an im2col matrix (on a GPU cuBLASLt's, on the CPU backend
// NumPy's BLAS): the input, zero-padded, is viewed without a copy as (N, G, C/G, R, S, OH, OW) through its
// strides, copied into columns (N, G, C/G*R*S, OH*OW), and multiplied by the weight (G, K/G, C/G*R*S).
// The input gradient scatters the columns' gradient back, one strided add per kernel position.
// float16 and bfloat16 are computed in float32 and rounded back.
#include <string>
#include <vector>

#include "array/layout.hpp"
#include "array/promotion.hpp"
#include "dnn/array_math.hpp"
#include "dnn/checks.hpp"
#include "dnn/nn.hpp"
#include "ops/join.hpp"
#include "ops/matmul.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using ops::Ufunc;

struct Geometry {
  int64_t n, c, h, w;      // input
  int64_t k, r, s;         // weight: K, R, S (its channels are c / groups)
  int64_t groups, oh, ow;  // output rows and columns
  int64_t hp, wp;          // padded input
};

// Whether `a` (N, C, H, W) is channels-last: C the fastest dimension (with C > 1, as PyTorch decides).
bool channels_last(const Array& a) {
  const Shape& st = a.strides();
  return a.ndim() == 4 && a.shape()[1] > 1 && !a.c_contiguous() && st[1] == a.layout().itemsize &&
         st[3] == st[1] * a.shape()[1] && st[2] == st[3] * a.shape()[3] && st[0] == st[2] * a.shape()[2];
}

// `a` (C-contiguous) copied into the layout of `like` (channels-last or C order).
Array in_layout_of(const Array& a, const Array& like) {
  if (!channels_last(like)) return a;
  const Shape& sh = a.shape();
  Array nhwc = Array::empty({sh[0], sh[2], sh[3], sh[1]}, a.dtype(), a.device());
  Array out = nhwc.view(transpose_layout(nhwc.layout(), {0, 3, 1, 2}));
  ops::assign(out, a);
  return out;
}

Geometry geometry(const Array& x, const Array& weight, const ConvParams& p, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  if (x.ndim() != 4) throw BadValue(prefix + "input must have shape (N, C, H, W), not " + shape_string(x.shape()));
  if (weight.ndim() != 4)
    throw BadValue(prefix + "weight must have shape (out_channels, in_channels / groups, kH, kW), not " +
                   shape_string(weight.shape()));
  require_float(x, function, "input");
  if (weight.dtype() != x.dtype())
    throw BadArgument(prefix + "input is " + info(x.dtype()).name + " but weight is " + info(weight.dtype()).name);
  if (weight.device() != x.device())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                            prefix + "input and weight live on different devices");
  Geometry g{};
  g.n = x.shape()[0], g.c = x.shape()[1], g.h = x.shape()[2], g.w = x.shape()[3];
  g.k = weight.shape()[0], g.r = weight.shape()[2], g.s = weight.shape()[3];
  g.groups = p.groups;
  if (weight.shape()[1] * p.groups != g.c)
    throw BadValue(prefix + "input of shape " + shape_string(x.shape()) + " has " + std::to_string(g.c) +
                   " channels, but weight of shape " + shape_string(weight.shape()) + " with groups=" +
                   std::to_string(p.groups) + " expects " + std::to_string(weight.shape()[1] * p.groups));
  if (g.k % p.groups != 0)
    throw BadValue(prefix + "out_channels (" + std::to_string(g.k) + ") must be divisible by groups (" +
                   std::to_string(p.groups) + ")");
  g.hp = g.h + p.pad_before[0] + p.pad_after[0];
  g.wp = g.w + p.pad_before[1] + p.pad_after[1];
  const int64_t span_h = p.dilation[0] * (g.r - 1) + 1, span_w = p.dilation[1] * (g.s - 1) + 1;
  if (span_h > g.hp || span_w > g.wp)
    throw BadValue(prefix + "the kernel (" + std::to_string(span_h) + " x " + std::to_string(span_w) +
                   " with dilation) is larger than the padded input (" + std::to_string(g.hp) + " x " +
                   std::to_string(g.wp) + ")");
  g.oh = (g.hp - span_h) / p.stride[0] + 1;
  g.ow = (g.wp - span_w) / p.stride[1] + 1;
  return g;
}

// The views of a padded input (N, C, Hp, Wp), C-contiguous, that the convolution reads and writes.
// Its interior: the unpadded input's place.
Layout interior(const Array& xp, const Geometry& g, const ConvParams& p) {
  Layout l = xp.layout();
  l.shape = {g.n, g.c, g.h, g.w};
  l.offset += p.pad_before[0] * l.strides[2] + p.pad_before[1] * l.strides[3];
  return l;
}
// The elements kernel position (r, s) meets, for every output position: (N, G, C/G, OH, OW).
Layout kernel_position(const Array& xp, const Geometry& g, const ConvParams& p, int64_t r, int64_t s) {
  const Shape st = xp.strides();
  Layout l = xp.layout();
  const int64_t cg = g.c / g.groups;
  l.shape = {g.n, g.groups, cg, g.oh, g.ow};
  l.strides = {st[0], cg * st[1], st[1], p.stride[0] * st[2], p.stride[1] * st[3]};
  l.offset += r * p.dilation[0] * st[2] + s * p.dilation[1] * st[3];
  return l;
}
// Every kernel position at once: (N, G, C/G, R, S, OH, OW), the im2col matrix without a copy.
Layout windows(const Array& xp, const Geometry& g, const ConvParams& p) {
  const Shape st = xp.strides();
  Layout l = kernel_position(xp, g, p, 0, 0);
  l.shape.insert(l.shape.begin() + 3, {g.r, g.s});
  l.strides.insert(l.strides.begin() + 3, {p.dilation[0] * st[2], p.dilation[1] * st[3]});
  return l;
}

// x zero-padded, C-contiguous (x itself when it is so and needs no padding).
Array padded(const Array& x, const Geometry& g, const ConvParams& p) {
  const bool no_padding = g.hp == g.h && g.wp == g.w;
  if (no_padding && x.c_contiguous()) return x;
  Array out = Array::empty({g.n, g.c, g.hp, g.wp}, x.dtype(), x.device());
  if (!no_padding) out.fill(std::string(out.layout().itemsize, '\0').data());
  ops::assign(out.view(interior(out, g, p)), x);
  return out;
}

// The im2col matrix: (N, G, C/G * R * S, OH * OW), C-contiguous.
Array columns(const Array& xp, const Geometry& g, const ConvParams& p) {
  const Array copy = ops::astype(xp.view(windows(xp, g, p)), xp.dtype());
  return copy.reshape({g.n, g.groups, g.c / g.groups * g.r * g.s, g.oh * g.ow});
}

Array transposed(const Array& a, const std::vector<int64_t>& axes) { return a.view(transpose_layout(a.layout(), axes)); }

void require_vector(const Array* bias, const Array& x, int64_t k, const char* function) {
  if (!bias) return;
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  if (bias->shape() != Shape{k})
    throw BadValue(prefix + "bias must have shape (" + std::to_string(k) + ",), not " + shape_string(bias->shape()));
  if (bias->dtype() != x.dtype())
    throw BadArgument(prefix + "input is " + info(x.dtype()).name + " but bias is " + info(bias->dtype()).name);
  if (bias->device() != x.device())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                            prefix + "input and bias live on different devices");
}

Array zeros(const Shape& shape, DType dtype, int device) {
  Array a = Array::empty(shape, dtype, device);
  if (a.size() > 0) a.fill(std::string(a.layout().itemsize, '\0').data());
  return a;
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
  const Geometry g = geometry(x, weight, p, "conv2d");
  require_vector(bias, x, g.k, "conv2d");
  const Array xin = computed_in_float32(x), win = computed_in_float32(weight);
  const int64_t kg = g.k / g.groups, crs = g.c / g.groups * g.r * g.s;
  Array y = ops::matmul(ops::reshape(win, {g.groups, kg, crs}), columns(padded(xin, g, p), g, p))
                .reshape({g.n, g.k, g.oh, g.ow});
  if (bias) {
    const Array b = computed_in_float32(*bias).reshape({1, g.k, 1, 1});
    const ops::Operand in[] = {math::operand(y), math::operand(b)};
    ops::apply(Ufunc::Add, in, 2, &y);
  }
  return in_layout_of(rounded_back(y, x.dtype()), x);
}

ConvGradients conv2d_backward(const Array& grad_y, const Array& x, const Array& weight, const ConvParams& p,
                              bool need_x, bool need_weight, bool need_bias) {
  const Geometry g = geometry(x, weight, p, "conv2d_backward");
  const Shape y_shape = {g.n, g.k, g.oh, g.ow};
  if (grad_y.shape() != y_shape)
    throw BadValue("jiasu.nn.conv2d_backward: grad_output has shape " + shape_string(grad_y.shape()) +
                   " but the output has shape " + shape_string(y_shape));
  require_like(grad_y, "grad_output", x, "input", "conv2d_backward");
  const int64_t kg = g.k / g.groups, crs = g.c / g.groups * g.r * g.s;
  const Array dy = ops::reshape(computed_in_float32(grad_y), {g.n, g.groups, kg, g.oh * g.ow});
  const Array xin = computed_in_float32(x);
  ConvGradients out;
  if (need_bias)
    out.bias = rounded_back(math::reduce(ops::ReduceOp::Sum, computed_in_float32(grad_y), {0, 2, 3}, false), x.dtype());
  if (need_weight) {
    // (G, K/G, N * P) @ (G, N * P, C/G * R * S): the batch summed inside one product.
    const Array cols = columns(padded(xin, g, p), g, p);
    const Array dy_rows = ops::astype(transposed(dy, {1, 2, 0, 3}), dy.dtype()).reshape({g.groups, kg, -1});
    const Array cols_rows = ops::astype(transposed(cols, {1, 0, 3, 2}), cols.dtype()).reshape({g.groups, -1, crs});
    const Array dw = ops::matmul(dy_rows, cols_rows).reshape(weight.shape());
    out.weight = in_layout_of(rounded_back(dw, x.dtype()), weight);
  }
  if (need_x) {
    const Array wg = ops::reshape(computed_in_float32(weight), {g.groups, kg, crs});
    const Array dcols = ops::matmul(transposed(wg, {0, 2, 1}), dy)
                            .reshape({g.n, g.groups, g.c / g.groups, g.r, g.s, g.oh, g.ow});
    const Array dxp = zeros({g.n, g.c, g.hp, g.wp}, dcols.dtype(), x.device());
    for (int64_t r = 0; r < g.r; ++r) {
      for (int64_t s = 0; s < g.s; ++s) {
        const Array target = dxp.view(kernel_position(dxp, g, p, r, s));
        std::vector<IndexItem> at(5);
        for (int i = 0; i < 3; ++i) at[i].kind = IndexItem::Slice;
        at[3].index = r;
        at[4].index = s;
        const Array part = dcols.index(at);
        const ops::Operand in[] = {math::operand(target), math::operand(part)};
        ops::apply(Ufunc::Add, in, 2, &target);
      }
    }
    const Array dx = g.hp == g.h && g.wp == g.w ? dxp : ops::astype(dxp.view(interior(dxp, g, p)), dxp.dtype());
    out.x = in_layout_of(rounded_back(dx, x.dtype()), x);
  }
  return out;
}

}  // namespace jiasu::dnn
