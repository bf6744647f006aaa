#include "dnn/softmax_cuda.hpp"

#include "dnn/runtime/softmax_params.h"
#include "ops/elementwise_cuda.hpp"
#include "runtime/device.hpp"
#include "runtime/module.hpp"

namespace jiasu::embedded {
extern const char softmax_cuda[];
extern const unsigned long long softmax_cuda_size;
}  // namespace jiasu::embedded

namespace jiasu::dnn {
namespace {

constexpr unsigned kBlock = 256;
constexpr int kMaxRegisters = 32;  // rows of up to 32 * 32 = 1024 elements stay in registers

// Registers per lane for rows of n elements: the smallest power of two with 32 * K >= n; 0 beyond 1024.
int registers_for(int64_t n) {
  int k = 1;
  while (32 * k < n && k < kMaxRegisters) k *= 2;
  return 32 * k >= n ? k : 0;
}

Kernel& kernel_for(DType dtype, bool log, bool backward, int registers, int device) {
  const uint64_t key = static_cast<uint64_t>(dtype) << 8 | uint64_t(log) << 7 | uint64_t(backward) << 6 |
                       static_cast<uint64_t>(registers);
  return ops::kernel_cache().get(key, device, "jiasu_softmax",
                                 [&] { return softmax_cuda_source(dtype, log, backward, registers); });
}

void launch(const softmax::Params& p, DType dtype, bool log, bool backward, int device) {
  activate(device);
  const int registers = registers_for(p.n);
  Kernel& kernel = kernel_for(dtype, log, backward, registers, device);
  LaunchArgs args;
  args.begin(kernel.param_layout());
  args.add(&p, sizeof(p), alignof(softmax::Params), "softmax parameters");
  args.finish();
  const long long rows_per_block = registers ? kBlock / 32 : 1;
  const unsigned blocks = static_cast<unsigned>((p.rows + rows_per_block - 1) / rows_per_block);
  kernel.launch(Dim3{blocks, 1, 1}, Dim3{kBlock, 1, 1}, args, 0, nullptr);
}

}  // namespace

std::string softmax_cuda_source(DType dtype, bool log, bool backward, int registers) {
  std::string source(embedded::softmax_cuda, embedded::softmax_cuda_size);
  const std::string t = info(dtype).c_type, a = dtype == DType::Float64 ? "double" : "float";
  const std::string function = std::string(registers ? "rows_" : "long_") + (backward ? "backward" : "forward");
  source += "\nextern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) +
            ") jiasu_softmax(const jiasu::softmax::Params params) {\n  jiasu::softmax::" + function + "<" + t + ", " +
            a + ", " + (log ? "true" : "false") + (registers ? ", " + std::to_string(registers) : std::string()) +
            ">(params);\n}\n";
  return source;
}

bool fused_softmax_applies(const Array& a, int64_t axis) {
  // Rows and their count must fit the kernels' int lengths and a grid's 2^31 - 1 blocks.
  return !a.on_host() && info(a.dtype()).kind == DTypeKind::Float && a.c_contiguous() && a.ndim() >= 1 && axis == a.ndim() - 1 &&
         a.size() > 0 && a.shape()[axis] < (int64_t(1) << 31) && a.size() / a.shape()[axis] < (int64_t(1) << 31) / 8;
}

Array fused_softmax(const Array& x, bool log) {
  const Array y = Array::empty(x.shape(), x.dtype(), x.device());
  softmax::Params p{};
  p.x = x.data();
  p.y = y.data();
  p.n = static_cast<int>(x.shape().back());
  p.rows = x.size() / p.n;
  p.x_stride = p.y_stride = p.n;
  const auto held = x.memory()->hold();
  launch(p, x.dtype(), log, false, x.device());
  return y;
}

Array fused_softmax_backward(const Array& dy, const Array& y, bool log) {
  const Array dx = Array::empty(y.shape(), y.dtype(), y.device());
  softmax::Params p{};
  p.dy = dy.data();
  p.y = y.data();
  p.dx = dx.data();
  p.n = static_cast<int>(y.shape().back());
  p.rows = y.size() / p.n;
  p.dy_stride = p.y_stride = p.dx_stride = p.n;
  const auto held_dy = dy.memory()->hold(), held_y = y.memory()->hold();
  launch(p, y.dtype(), log, true, y.device());
  return dx;
}

}  // namespace jiasu::dnn
