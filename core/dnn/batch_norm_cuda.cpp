#include "dnn/batch_norm_cuda.hpp"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <memory>
#include <vector>

#include "dnn/runtime/batch_norm_params.h"
#include "dnn/windows.hpp"
#include "ops/elementwise_cuda.hpp"
#include "runtime/device.hpp"
#include "runtime/module.hpp"

namespace jiasu::embedded {
extern const char batch_norm_cuda[];
extern const unsigned long long batch_norm_cuda_size;
}  // namespace jiasu::embedded

namespace jiasu::dnn {
namespace {

using batch_norm::kBlock;
using batch_norm::kUnroll;

// A channel group's data in the cooperative kernels: small enough that phase 2 still finds it in L2 (50 MB on
// an H200) beside the output being written and the next group being read.
constexpr int64_t kGroupBytes = int64_t(16) << 20;

batch_norm::Vector vector_of(const Array* v) {
  batch_norm::Vector out{};
  if (!v) return out;
  out.data = v->data();
  out.stride = v->strides()[0];
  switch (v->dtype()) {
    case DType::Float16: out.type = batch_norm::kFloat16; break;
    case DType::BFloat16: out.type = batch_norm::kBFloat16; break;
    case DType::Float32: out.type = batch_norm::kFloat32; break;
    default: out.type = batch_norm::kFloat64;
  }
  return out;
}

// What a launch needs beyond the arrays: how the kernels see x, and the variant.
struct Plan {
  batch_norm::Params p{};
  bool rows = false, packed = false, wide = false;
};

// x as planes (N, C, S) or rows (R, C); `arrays` are the element arrays the kernel reads or writes, all in x's
// layout, whose addresses decide the 16-byte packs.
Plan plan_for(const Array& x, std::initializer_list<const Array*> arrays) {
  Plan plan;
  batch_norm::Params& p = plan.p;
  const int64_t n = x.shape()[0], c = x.shape()[1], s = x.size() / (n * c);
  plan.rows = channels_last(x) || s == 1;
  p.n = plan.rows ? n * s : n;
  p.c = c;
  p.s = plan.rows ? 1 : s;
  plan.packed = !plan.rows && p.s % (16 / int64_t(itemsize(x.dtype()))) == 0;
  for (const Array* a : arrays) plan.packed = plan.packed && a->data() % 16 == 0;
  // int indices when every offset a walk reaches, up to kUnroll steps of a block past its share (at most
  // that many planes, or rows, beyond the array), stays below 2^31.
  plan.wide = x.size() + (int64_t(kBlock) * kUnroll + 1) * c * p.s > INT_MAX;
  return plan;
}

std::vector<std::shared_ptr<const void>> hold(std::initializer_list<const Array*> arrays) {
  std::vector<std::shared_ptr<const void>> held;
  for (const Array* a : arrays)
    if (a) held.push_back(a->memory()->hold());
  return held;
}

// Launches `pass` over the plan's arrays: one block per resident slot at most (the cooperative passes need every
// block resident; the inference pass needs no more). False when the cooperative launch is unavailable or its
// grid does not fit, with nothing launched.
bool launch(Plan& plan, DType dtype, BatchNormPass pass, int device) {
  activate(device);
  const uint64_t key = static_cast<uint64_t>(dtype) << 5 | static_cast<uint64_t>(pass) << 3 |
                       uint64_t(plan.rows) << 2 | uint64_t(plan.packed) << 1 | uint64_t(plan.wide);
  Kernel& kernel = ops::kernel_cache().get(key, device, "jiasu_batch_norm", [&] {
    return batch_norm_cuda_source(dtype, pass, plan.rows, plan.packed, plan.wide);
  });
  const bool cooperative = pass != BatchNormPass::Inference;
  const int64_t resident = kernel.max_cooperative_blocks(kBlock, 0);
  if (cooperative && resident < 1) return false;
  batch_norm::Params& p = plan.p;
  const int64_t units = p.n * p.c * p.s / (plan.packed ? 16 / int64_t(itemsize(dtype)) : 1);
  int64_t blocks = (units + int64_t(kBlock) * kUnroll - 1) / (int64_t(kBlock) * kUnroll);
  // Planes: a block per channel at least, where the device holds that many, so that few groups need a barrier.
  if (cooperative && !plan.rows) blocks = std::max<int64_t>(blocks, p.c);
  blocks = std::max<int64_t>(1, std::min(blocks, resident));
  std::optional<Array> workspace;  // held until the launch is queued; freed in stream order after it
  if (cooperative) {
    const int64_t channel_bytes = p.n * p.s * int64_t(itemsize(dtype)) * (pass == BatchNormPass::Backward ? 2 : 1);
    p.group_channels =
        plan.rows ? p.c : std::clamp<int64_t>(kGroupBytes / channel_bytes, 1, std::min<int64_t>(p.c, blocks));
    const int64_t groups = (p.c + p.group_channels - 1) / p.group_channels;
    workspace = Array::empty({p.c * 2 * int64_t(sizeof(double)) + groups * int64_t(sizeof(unsigned))}, DType::UInt8,
                             device);
    const unsigned char zero = 0;
    workspace->fill(&zero);  // on the launch's stream, before it
    p.sums = workspace->data();
    p.arrivals = p.sums + p.c * 2 * sizeof(double);
  }
  LaunchArgs args;
  args.begin(kernel.param_layout());
  args.add(&p, sizeof(p), alignof(batch_norm::Params), "batch-norm parameters");
  args.finish();
  const Dim3 grid{static_cast<unsigned>(blocks), 1, 1}, block{static_cast<unsigned>(kBlock), 1, 1};
  if (cooperative) return kernel.launch_cooperative(grid, block, args, 0, nullptr);
  kernel.launch(grid, block, args, 0, nullptr);
  return true;
}

}  // namespace

std::string batch_norm_cuda_source(DType dtype, BatchNormPass pass, bool rows, bool packed, bool wide) {
  std::string source(embedded::batch_norm_cuda, embedded::batch_norm_cuda_size);
  const std::string t = info(dtype).c_type, a = dtype == DType::Float64 ? "double" : "float";
  const int pack = packed && !rows ? 16 / static_cast<int>(itemsize(dtype)) : 1;
  const std::string kernel =
      std::string(pass == BatchNormPass::Inference ? "inference_" : "cooperative_") + (rows ? "rows" : "planes");
  const std::string pass_type = std::string(pass == BatchNormPass::Backward ? "Backward" : "Training") + "<" + t +
                                ", " + a + ", " + std::to_string(pack) + ">";
  source += "\nextern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) +
            ") jiasu_batch_norm(const jiasu::batch_norm::Params params) {\n  jiasu::batch_norm::" + kernel +
            "<jiasu::batch_norm::" + pass_type + (wide ? ", long long" : ", int") + ">(params);\n}\n";
  return source;
}

bool fused_batch_norm_applies(const Array& x) {
  return !x.on_host() && info(x.dtype()).kind == DTypeKind::Float && x.ndim() >= 2 && x.size() > 0 && (x.c_contiguous() || channels_last(x));
}

bool fused_batch_norm_backward_applies(const Array& grad_y, const Array& x) {
  return fused_batch_norm_applies(x) && (x.c_contiguous() ? grad_y.c_contiguous() : channels_last(grad_y));
}

Array fused_batch_norm_inference(const Array& x, const Array& running_mean, const Array& running_var,
                                 const Array* weight, const Array* bias, double eps) {
  const Array y = empty_in_layout_of(x.shape(), x.dtype(), x);
  Plan plan = plan_for(x, {&x, &y});
  batch_norm::Params& p = plan.p;
  p.x = x.data();
  p.y = y.data();
  p.weight = vector_of(weight);
  p.bias = vector_of(bias);
  p.running_mean = vector_of(&running_mean);
  p.running_var = vector_of(&running_var);
  p.eps = eps;
  const auto held = hold({&x, &running_mean, &running_var, weight, bias});
  launch(plan, x.dtype(), BatchNormPass::Inference, x.device());
  return y;
}

std::optional<BatchNormTraining> fused_batch_norm_training(const Array& x, const Array* weight, const Array* bias,
                                                           const Array* running_mean, const Array* running_var,
                                                           double momentum, double eps) {
  const DType stats = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const int64_t c = x.shape()[1];
  BatchNormTraining out{empty_in_layout_of(x.shape(), x.dtype(), x), Array::empty({c}, stats, x.device()),
                        Array::empty({c}, stats, x.device())};
  Plan plan = plan_for(x, {&x, &out.y});
  batch_norm::Params& p = plan.p;
  p.x = x.data();
  p.y = out.y.data();
  p.weight = vector_of(weight);
  p.bias = vector_of(bias);
  p.running_mean = vector_of(running_mean);
  p.running_var = vector_of(running_var);
  p.saved_mean = vector_of(&out.saved_mean);
  p.saved_invstd = vector_of(&out.saved_invstd);
  p.momentum = momentum;
  p.eps = eps;
  const auto held = hold({&x, weight, bias, running_mean, running_var});
  if (!launch(plan, x.dtype(), BatchNormPass::Training, x.device())) return std::nullopt;
  return out;
}

std::optional<BatchNormGradients> fused_batch_norm_backward(const Array& grad_y, const Array& x, const Array* weight,
                                                            const Array& saved_mean, const Array& saved_invstd) {
  const DType vector_dtype = weight ? weight->dtype() : x.dtype();  // as the composition returns them
  const int64_t c = x.shape()[1];
  BatchNormGradients out{empty_in_layout_of(x.shape(), x.dtype(), x), Array::empty({c}, vector_dtype, x.device()),
                         Array::empty({c}, vector_dtype, x.device())};
  Plan plan = plan_for(x, {&grad_y, &x, &out.x});
  batch_norm::Params& p = plan.p;
  p.dy = grad_y.data();
  p.x = x.data();
  p.dx = out.x.data();
  p.weight = vector_of(weight);
  p.saved_mean = vector_of(&saved_mean);
  p.saved_invstd = vector_of(&saved_invstd);
  p.grad_weight = vector_of(&out.weight);
  p.grad_bias = vector_of(&out.bias);
  const auto held = hold({&grad_y, &x, weight, &saved_mean, &saved_invstd});
  if (!launch(plan, x.dtype(), BatchNormPass::Backward, x.device())) return std::nullopt;
  return out;
}

}  // namespace jiasu::dnn
