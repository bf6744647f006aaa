#include "dnn/pooling_cuda.hpp"

#include <algorithm>

#include "dnn/runtime/pool_params.h"
#include "dnn/windows.hpp"
#include "ops/elementwise_cuda.hpp"
#include "runtime/device.hpp"
#include "runtime/module.hpp"

namespace jiasu::embedded {
extern const char pool_cuda[];
extern const unsigned long long pool_cuda_size;
}  // namespace jiasu::embedded

namespace jiasu::dnn {
namespace {

constexpr unsigned kBlock = 256;
constexpr int kUnrolledWindow = 7;

void strides_of(const Array& a, long long* out) {
  for (int d = 0; d < 4; ++d) out[d] = a.strides()[d] / a.layout().itemsize;
}

// The largest element offset of a 4-D array with these extents and strides (none are negative here).
long long last_offset(const long long* extent, const long long* stride) {
  long long last = 0;
  for (int d = 0; d < 4; ++d) last += (extent[d] - 1) * stride[d];
  return last;
}

void launch(const pool::Params& p, DType dtype, bool max, bool backward, bool channels_last, int device) {
  activate(device);
  // forward: a thread per (n, c, output column) and pool::kBand output rows (blockIdx.y, band-stride beyond
  // 65535 bands); backward: a thread per input element (grid-stride beyond 65535 * 64 blocks).
  const long long band = pool::kBand, threads = backward ? p.n * p.c * p.h * p.w : p.n * p.c * p.ow;
  const long long blocks = std::min<long long>((threads + kBlock - 1) / kBlock, backward ? 65535LL * 64 : 1LL << 30);
  const long long bands = backward ? 1 : std::min<long long>((p.oh + band - 1) / band, 65535);
  // int indices when every index, offset and the grid walk stay below 2^31.
  const long long in[4] = {p.n, p.c, p.h, p.w}, out[4] = {p.n, p.c, p.oh, p.ow};
  const long long limit = (1LL << 31) - 1 - blocks * kBlock - bands * band;
  const bool wide = threads > limit || p.n * p.c * p.oh * p.ow > limit || last_offset(in, p.x_stride) > limit ||
                    last_offset(out, backward ? p.dy_stride : p.y_stride) > limit ||
                    (backward && last_offset(in, p.dx_stride) > limit);
  // Windows of up to kUnrolledWindow rows and columns (and, forward, row strides) are compiled in.
  const auto compiled = [](int v) { return v <= kUnrolledWindow ? v : 0; };
  const int kh = compiled(p.kh), kw = compiled(p.kw), sh = backward ? 0 : compiled(p.sh);
  const uint64_t key = (static_cast<uint64_t>(dtype) << 4 | uint64_t(wide) << 3 | uint64_t(max) << 2 |
                        uint64_t(backward) << 1 | uint64_t(channels_last)) << 12 |
                       uint64_t(kh) << 8 | uint64_t(kw) << 4 | uint64_t(sh);
  Kernel& kernel = ops::kernel_cache().get(key, device, "jiasu_pool", [&] {
    return pool_cuda_source(dtype, max, backward, channels_last, wide, kh, kw, sh);
  });
  LaunchArgs args;
  args.begin(kernel.param_layout());
  args.add(&p, sizeof(p), alignof(pool::Params), "pooling parameters");
  args.finish();
  kernel.launch(Dim3{static_cast<unsigned>(std::max<long long>(blocks, 1)), static_cast<unsigned>(bands), 1},
                Dim3{kBlock, 1, 1}, args, 0, nullptr);
}

pool::Params params_of(const Array& x, const PoolParams& pp, int64_t oh, int64_t ow) {
  pool::Params p{};
  p.n = x.shape()[0], p.c = x.shape()[1], p.h = x.shape()[2], p.w = x.shape()[3];
  p.oh = oh, p.ow = ow;
  p.kh = static_cast<int>(pp.kernel[0]), p.kw = static_cast<int>(pp.kernel[1]);
  p.sh = static_cast<int>(pp.stride[0]), p.sw = static_cast<int>(pp.stride[1]);
  p.ph = static_cast<int>(pp.padding[0]), p.pw = static_cast<int>(pp.padding[1]);
  p.count_include_pad = pp.count_include_pad;
  p.x = x.data();
  strides_of(x, p.x_stride);
  return p;
}

}  // namespace

std::string pool_cuda_source(DType dtype, bool max, bool backward, bool channels_last, bool wide, int kh, int kw,
                             int sh) {
  std::string source(embedded::pool_cuda, embedded::pool_cuda_size);
  const std::string t = info(dtype).c_type, a = dtype == DType::Float64 ? "double" : "float";
  source += "\nextern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) +
            ") jiasu_pool(const jiasu::pool::Params params) {\n  jiasu::pool::" + (backward ? "backward" : "forward") +
            "<" + t + ", " + a + ", " + (max ? "true" : "false") + ", " + (channels_last ? "true" : "false") +
            (wide ? ", long long" : ", int") + ", " + std::to_string(kh) + ", " + std::to_string(kw) +
            (backward ? "" : ", " + std::to_string(sh)) + ">(params);\n}\n";
  return source;
}

bool fused_pool_applies(const Array& a) {
  return !a.on_host() && info(a.dtype()).kind == DTypeKind::Float && a.ndim() == 4 && a.size() > 0 && (a.c_contiguous() || channels_last(a)) &&
         std::max(a.shape()[2], a.shape()[3]) < (int64_t(1) << 31);
}

Array fused_pool(const Array& x, const PoolParams& pp, bool max, int64_t oh, int64_t ow) {
  const Array y = empty_in_layout_of({x.shape()[0], x.shape()[1], oh, ow}, x.dtype(), x);
  pool::Params p = params_of(x, pp, oh, ow);
  p.y = y.data();
  strides_of(y, p.y_stride);
  const auto held = x.memory()->hold();
  launch(p, x.dtype(), max, false, channels_last(x), x.device());
  return y;
}

Array fused_pool_backward(const Array& dy, const Array& x, const PoolParams& pp, bool max) {
  const Array dx = empty_in_layout_of(x.shape(), x.dtype(), x);
  pool::Params p = params_of(x, pp, dy.shape()[2], dy.shape()[3]);
  p.dy = dy.data();
  p.dx = dx.data();
  strides_of(dy, p.dy_stride);
  strides_of(dx, p.dx_stride);
  const auto held_x = x.memory()->hold(), held_dy = dy.memory()->hold();
  launch(p, x.dtype(), max, true, channels_last(x), x.device());
  return dx;
}

}  // namespace jiasu::dnn
