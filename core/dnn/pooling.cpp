// max_pool2d and avg_pool2d and their gradients: on a GPU through fused kernels (dnn/pooling_cuda.hpp) for
// NCHW-contiguous and channels-last inputs; otherwise composed of engine calls over views of the padded input
// (dnn/windows.hpp): a window reduction over all window positions at once, and for the gradients one
// strided add per window position (each adds to distinct elements, so none needs atomics or ordering).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "array/layout.hpp"
#include "dnn/array_math.hpp"
#include "dnn/checks.hpp"
#include "dnn/nn.hpp"
#include "dnn/pooling_cuda.hpp"
#include "dnn/windows.hpp"
#include "ops/join.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {
namespace {

using math::apply;
using ops::ReduceOp;
using ops::Ufunc;

Windows geometry(const Array& x, const PoolParams& p, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  if (x.ndim() != 4) throw BadValue(prefix + "input must have shape (N, C, H, W), not " + shape_string(x.shape()));
  require_float(x, function, "input");
  ConvParams walk;
  walk.stride = p.stride;
  walk.pad_before = walk.pad_after = p.padding;
  return windows_over(x.shape(), p.kernel[0], p.kernel[1], walk, prefix);
}

void require_output_gradient(const Array& grad_y, const Array& x, const Windows& g, const char* function) {
  const Shape y_shape = {g.n, g.c, g.oh, g.ow};
  if (grad_y.shape() != y_shape)
    throw BadValue(std::string("jiasu.nn.") + function + ": grad_output has shape " + shape_string(grad_y.shape()) +
                   " but the output has shape " + shape_string(y_shape));
  require_like(grad_y, "grad_output", x, "input", function);
}

// The window reduction of x padded with `fill`: (N, C, OH, OW).
Array window_reduction(ReduceOp op, const Array& x, const Windows& g, double fill) {
  const Array xp = padded(x, g, fill);
  return math::reduce(op, xp.view(all_windows(xp, g)), {3, 4}, false).reshape({g.n, g.c, g.oh, g.ow});
}

// Each output's divisor when the padding does not count: the window's elements inside the input, (1, 1, OH, OW).
Array inside_counts(const Windows& g, DType dtype, int device) {
  auto inside = [](int64_t start, int64_t size, int64_t extent) {
    return std::max<int64_t>(0, std::min(start + size, extent) - std::max<int64_t>(start, 0));
  };
  std::vector<double> counts(g.oh * g.ow);
  for (int64_t i = 0; i < g.oh; ++i)
    for (int64_t j = 0; j < g.ow; ++j)
      counts[i * g.ow + j] = double(inside(i * g.p.stride[0] - g.p.pad_before[0], g.r, g.h) *
                                    inside(j * g.p.stride[1] - g.p.pad_before[1], g.s, g.w));
  Array host = Array::empty({1, 1, g.oh, g.ow}, DType::Float64, device);
  if (!counts.empty()) host.copy_from_host(counts.data());
  return ops::astype(host, dtype);
}

// The gradient of the padded input from each window position's share: dxp[window (i, j)] += share(i, j), then
// the interior, in x's dtype and layout.
template <typename Share>
Array scattered(const Array& x, const Windows& g, DType dtype, const Share& share) {
  const Array dxp = zeros({g.n, g.c, g.hp, g.wp}, dtype, x.device());
  for (int64_t i = 0; i < g.r; ++i) {
    for (int64_t j = 0; j < g.s; ++j) {
      const Array target = dxp.view(window_position(dxp, g, i, j)).reshape({g.n, g.c, g.oh, g.ow});
      const Array part = share(i, j);
      const ops::Operand in[] = {math::operand(target), math::operand(part)};
      ops::apply(Ufunc::Add, in, 2, &target);
    }
  }
  const Array dx = g.hp == g.h && g.wp == g.w ? dxp : ops::astype(dxp.view(interior(dxp, g)), dtype);
  return in_layout_of(rounded_back(dx, x.dtype()), x);
}

}  // namespace

PoolParams pool_params(std::array<int64_t, 2> kernel, std::optional<std::array<int64_t, 2>> stride,
                       std::array<int64_t, 2> padding, bool count_include_pad, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  PoolParams p;
  p.kernel = kernel;
  p.stride = stride ? *stride : kernel;
  p.padding = padding;
  p.count_include_pad = count_include_pad;
  for (int i = 0; i < 2; ++i) {
    if (p.kernel[i] < 1) throw BadValue(prefix + "kernel_size must be at least 1, not " + std::to_string(p.kernel[i]));
    if (p.stride[i] < 1) throw BadValue(prefix + "stride must be at least 1, not " + std::to_string(p.stride[i]));
    if (p.padding[i] < 0 || 2 * p.padding[i] > p.kernel[i])
      throw BadValue(prefix + "padding should be at least 0 and at most half of the kernel size, but got padding=" +
                     std::to_string(p.padding[i]) + " and kernel_size=" + std::to_string(p.kernel[i]));
  }
  return p;
}

Array max_pool2d(const Array& x, const PoolParams& p) {
  const Windows g = geometry(x, p, "max_pool2d");
  if (fused_pool_applies(x)) return fused_pool(x, p, true, g.oh, g.ow);
  return in_layout_of(window_reduction(ReduceOp::Max, x, g, -HUGE_VAL), x);
}

Array max_pool2d_backward(const Array& grad_y, const Array& x, const PoolParams& p) {
  const Windows g = geometry(x, p, "max_pool2d_backward");
  require_output_gradient(grad_y, x, g, "max_pool2d_backward");
  if (fused_pool_applies(x)) return fused_pool_backward(grad_y, x, p, true);
  // Each window's first maximum, as its index i * S + j: the windows copied so that (R, S) merge into one axis.
  const Array xp = padded(x, g, -HUGE_VAL);
  const Array copies = ops::astype(xp.view(all_windows(xp, g)), x.dtype()).reshape({g.n, g.c, g.r * g.s, g.oh, g.ow});
  const Array argmax = math::reduce(ReduceOp::ArgMax, copies, {2}, false);
  const Array dy = computed_in_float32(grad_y);
  return scattered(x, g, dy.dtype(), [&](int64_t i, int64_t j) {
    ops::Operand index;
    index.scalar.dtype = DType::Int64;
    index.scalar.weak = true;
    index.scalar.i = i * g.s + j;
    const ops::Operand in[] = {math::operand(argmax), index};
    return math::where_else_zero(ops::apply(Ufunc::Equal, in, 2), dy);
  });
}

Array avg_pool2d(const Array& x, const PoolParams& p) {
  const Windows g = geometry(x, p, "avg_pool2d");
  if (fused_pool_applies(x)) return fused_pool(x, p, false, g.oh, g.ow);
  const Array sums = window_reduction(ReduceOp::Sum, computed_in_float32(x), g, 0);
  const Array y = p.count_include_pad ? apply(Ufunc::Divide, sums, double(g.r * g.s))
                                      : apply(Ufunc::Divide, sums, inside_counts(g, sums.dtype(), x.device()));
  return in_layout_of(rounded_back(y, x.dtype()), x);
}

Array avg_pool2d_backward(const Array& grad_y, const Array& x, const PoolParams& p) {
  const Windows g = geometry(x, p, "avg_pool2d_backward");
  require_output_gradient(grad_y, x, g, "avg_pool2d_backward");
  if (fused_pool_applies(x)) return fused_pool_backward(grad_y, x, p, false);
  const Array dy = computed_in_float32(grad_y);
  const Array share = p.count_include_pad ? apply(Ufunc::Divide, dy, double(g.r * g.s))
                                          : apply(Ufunc::Divide, dy, inside_counts(g, dy.dtype(), x.device()));
  return scattered(x, g, dy.dtype(), [&](int64_t, int64_t) { return share; });
}

}  // namespace jiasu::dnn
