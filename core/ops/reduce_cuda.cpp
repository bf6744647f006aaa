// Reductions on the GPU: a CUDA C++ source per (operation, types, case), generated from the kernels of
// ops/runtime/reduce_cuda.h, compiled once by NVRTC (through the disk cache) and kept in the elementwise
// engine's kernel cache (ops/elementwise_cuda.hpp).
#include "ops/reduce_cuda.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "ops/elementwise_cuda.hpp"
#include "ops/runtime/reduce.h"
#include "runtime/device.hpp"
#include "runtime/module.hpp"

namespace jiasu::embedded {
extern const char reduce_cuda[];
extern const unsigned long long reduce_cuda_size;
}  // namespace jiasu::embedded

namespace jiasu::ops {
namespace {

constexpr unsigned kBlock = 256;

const char* op_type(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std: return "jiasu::reduce::Sum";
    case ReduceOp::Prod: return "jiasu::reduce::Prod";
    case ReduceOp::Max: return "jiasu::reduce::Max";
    case ReduceOp::Min: return "jiasu::reduce::Min";
    case ReduceOp::ArgMax: return "jiasu::reduce::ArgMax";
    case ReduceOp::ArgMin: return "jiasu::reduce::ArgMin";
    case ReduceOp::Any: return "jiasu::reduce::Any";
    case ReduceOp::All: return "jiasu::reduce::All";
  }
  return "";
}

const char* acc_type(AccType acc) {
  switch (acc) {
    case AccType::Bool: return "bool";
    case AccType::Int64: return "long long";
    case AccType::UInt64: return "unsigned long long";
    case AccType::Float32: return "float";
    case AccType::Float64: return "double";
  }
  return "";
}

size_t acc_size(AccType acc) { return acc == AccType::Bool ? 1 : acc == AccType::Float32 ? 4 : 8; }

reduce::Walk walk_of(const std::vector<ReduceDim>& dims, const char* what) {
  reduce::Walk walk{};
  if (dims.size() > static_cast<size_t>(reduce::kMaxWalkDims))
    throw BadValue(std::string("jiasu: a GPU reduction takes at most ") + std::to_string(reduce::kMaxWalkDims) +
                   " " + what + " dimensions that do not merge");
  walk.ndim = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    walk.size[d] = dims[d].size;
    walk.stride[d] = dims[d].stride;
    walk.out_stride[d] = dims[d].out_stride;
  }
  return walk;
}

// The kernel cache's key: every field in a few bits (the kernel's name keeps it apart from elementwise keys).
uint64_t cache_key(const ReduceKernelKey& key) {
  uint64_t k = static_cast<uint64_t>(key.op);
  k = k << 5 | static_cast<uint64_t>(key.in);
  k = k << 4 | static_cast<uint64_t>(key.acc);
  k = k << 5 | static_cast<uint64_t>(key.out);
  k = k << 3 | static_cast<uint64_t>(key.kind);
  k = k << 4 | static_cast<uint64_t>(key.finish);
  k = k << 4 | static_cast<uint64_t>(key.elem);
  k = k << 5 | static_cast<uint64_t>(key.vector);
  return k;
}

Kernel& kernel_for(const ReduceKernelKey& key, int device) {
  return kernel_cache().get(cache_key(key), device, "jiasu_reduce", [&] { return reduce_cuda_source(key); },
                            [&] { return reduce_kernel_name(key) + ".cu"; });
}

void run_kernel(const ReduceKernelKey& key, const reduce::KernelParams& params, unsigned blocks, int device) {
  Kernel& kernel = kernel_for(key, device);
  LaunchArgs args;
  args.begin(kernel.param_layout());
  args.add(&params, sizeof(params), alignof(reduce::KernelParams), "reduction parameters");
  args.finish();
  kernel.launch(Dim3{blocks, 1, 1}, Dim3{kBlock, 1, 1}, args, 0, nullptr);
}

unsigned grid_for(int64_t threads) {
  const int64_t blocks = (threads + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);  // grid-stride loops do the rest
}

reduce::KernelParams params_of(const ReduceLaunch& launch) {
  const ReducePlan& plan = *launch.plan;
  reduce::KernelParams p{};
  p.in = reinterpret_cast<unsigned long long>(launch.in_data);
  p.out = reinterpret_cast<unsigned long long>(launch.out_data);
  p.kept = walk_of(plan.kept, "kept");
  p.reduced = walk_of(plan.reduced, "reduced");
  p.results = plan.kept_count;
  p.count = plan.reduced_count;
  p.blocks_per_result = 1;
  p.slices = 1;
  p.run_length = plan.reduced.empty() ? plan.reduced_count : plan.reduced.back().size;
  p.runs = p.run_length ? plan.reduced_count / p.run_length : 0;
  p.chunk = plan.reduced_count;
  p.divisor = 1.0;
  return p;
}

// Blocks per result (or per tile of columns): when there are fewer groups than blocks the GPU holds at once
// (`resident`, from the kernel's occupancy), as many as fill it in one wave, each with at least min_chunk
// elements; a second, partial wave would leave most multiprocessors idle while it runs. chunk (used by Columns:
// reduced rows per block) is a multiple of `multiple`.
void split(int64_t groups, int64_t count, int64_t min_chunk, int64_t multiple, int64_t resident,
           reduce::KernelParams& p) {
  int64_t per_group = groups >= resident ? 1 : resident / groups;
  if (per_group > 1 && count / per_group < min_chunk) per_group = count / min_chunk;
  if (per_group < 1) per_group = 1;
  int64_t chunk = (count + per_group - 1) / per_group;
  chunk = (chunk + multiple - 1) / multiple * multiple;
  p.blocks_per_result = (count + chunk - 1) / chunk;
  p.chunk = chunk;
}

// Columns: how many neighbouring results a thread takes, read in one load of up to 16 bytes: as many as the
// alignment of the data, the row stride and the kept strides allows, and the tile's shared memory (16 KiB for
// 8 groups of rows, at most 16 bytes a value) holds.
int columns_vector(const ReduceLaunch& launch) {
  const ReducePlan& plan = *launch.plan;
  const int64_t size = static_cast<int64_t>(itemsize(launch.in_dtype));
  const int64_t value_bytes = launch.op == ReduceOp::ArgMax || launch.op == ReduceOp::ArgMin ? 16 : 8;
  const auto fits = [&](int64_t vector) {
    const int64_t bytes = vector * size;
    if (8 * 32 * vector * value_bytes > 16384 || plan.kept.back().size % vector != 0) return false;
    if (reinterpret_cast<uintptr_t>(launch.in_data) % bytes != 0 || plan.reduced[0].stride % bytes != 0) return false;
    for (size_t d = 0; d + 1 < plan.kept.size(); ++d)
      if (plan.kept[d].stride % bytes != 0) return false;
    return true;
  };
  int64_t vector = 16 / size;
  while (vector > 1 && !fits(vector)) vector /= 2;
  return static_cast<int>(vector);
}

// One pass over the elements into out (of out_dtype), finishing with `finish`.
void reduce_pass(const ReduceLaunch& launch, reduce::KernelParams p, DType out_dtype, int finish, int elem,
                 int device) {
  const ReducePlan& plan = *launch.plan;
  const bool rows = plan.kind == ReduceCase::Rows;
  const KernelKind kind = rows && plan.reduced.size() > 1     ? KernelKind::Runs
                          : rows                              ? KernelKind::Rows
                          : plan.kind == ReduceCase::Columns ? KernelKind::Columns
                                                             : KernelKind::Strided;
  const int columns = kind == KernelKind::Columns ? columns_vector(launch) : 1;
  const ReduceKernelKey key{launch.op, launch.in_dtype, launch.acc, out_dtype, kind, finish, elem, columns};
  if (kind == KernelKind::Strided) {
    run_kernel(key, p, grid_for(p.results), device);
    return;
  }
  // Rows: a group is one result's run; Columns: a tile of `width` neighbouring results.
  const int64_t width = rows ? 1 : 32 * columns;
  const int64_t groups = rows
                             ? plan.kept_count
                             : plan.kept_count / plan.kept.back().size * ((plan.kept.back().size + width - 1) / width);
  const int64_t vector = 16 / static_cast<int64_t>(itemsize(launch.in_dtype));  // Rows: elements per load
  const int64_t min_chunk = rows ? 16 * kBlock * vector : 64;
  int64_t resident = 1;  // only asked for when the elements are enough to split
  if (plan.reduced_count >= 2 * min_chunk)
    resident = int64_t(kernel_for(key, device).max_active_blocks_per_multiprocessor(kBlock, 0)) *
               device_properties(device).multiprocessor_count;
  // Rows: blocks_per_result only (the blocks of a run take its tiles in turn); Columns: rows per block too.
  split(groups, plan.reduced_count, min_chunk, rows ? vector : 1, resident, p);
  if (kind == KernelKind::Runs) {
    // Several runs per result: the blocks split into groups that take every few runs, each group's blocks
    // sharing a run only when it is long enough to split.
    const int64_t inner = plan.reduced.back().size, runs = plan.reduced_count / inner;
    const int64_t slices = std::max<int64_t>(1, std::min<int64_t>((p.blocks_per_result + runs - 1) / runs, inner / min_chunk));
    p.slices = slices;
    p.blocks_per_result = slices * std::min<int64_t>(runs, (p.blocks_per_result + slices - 1) / slices);
  }
  std::optional<Array> scratch;  // held until the launch is queued; freed in stream order after it
  if (p.blocks_per_result > 1) {
    const int64_t value_bytes = launch.op == ReduceOp::ArgMax || launch.op == ReduceOp::ArgMin ? 16 : 8;
    const int64_t partial_bytes = groups * p.blocks_per_result * value_bytes * width;
    scratch = Array::empty({partial_bytes + groups * 4}, DType::UInt8, device);
    const unsigned char zero = 0;
    scratch->view(Layout{{groups * 4}, {1}, partial_bytes, 1}).fill(&zero);
    p.partials = scratch->data();
    p.counters = scratch->data() + partial_bytes;
  }
  const int64_t blocks = groups * p.blocks_per_result;
  if (blocks > 0x7fffffff) throw BadValue("jiasu: a GPU reduction with more than 2**31-1 blocks");
  run_kernel(key, p, static_cast<unsigned>(blocks), device);
}

}  // namespace

const char* kernel_function(KernelKind kind) {
  switch (kind) {
    case KernelKind::Rows: return "rows_kernel";
    case KernelKind::Runs: return "runs_kernel";
    case KernelKind::Columns: return "columns_kernel";
    case KernelKind::Strided: return "strided_kernel";
    case KernelKind::Cumsum: return "cumsum_kernel";
  }
  return "";
}

std::string reduce_kernel_name(const ReduceKernelKey& key) {
  std::string acc = acc_type(key.acc);
  for (char& c : acc) c = c == ' ' ? '_' : c;
  return std::string(kernel_function(key.kind)) + "_" + reduce_op_name(key.op) + "_" + info(key.in).name + "_" +
         acc + "_" + info(key.out).name + "_f" + std::to_string(key.finish) + "_e" + std::to_string(key.elem) +
         "_v" + std::to_string(key.vector);
}

std::string reduce_cuda_source(const ReduceKernelKey& key) {
  std::string source(embedded::reduce_cuda, embedded::reduce_cuda_size);
  const std::string in = info(key.in).c_type, out = info(key.out).c_type, acc = acc_type(key.acc);
  source += "\nextern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) +
            ") jiasu_reduce(const jiasu::reduce::KernelParams params) {\n  ";
  source += std::string("jiasu::reduce::") + kernel_function(key.kind) + "<";
  if (key.kind == KernelKind::Cumsum)
    source += in + ", " + acc + ", " + out + ">(params);\n}\n";
  else
    source += std::string(op_type(key.op)) + ", " + in + ", " + acc + ", " + out + ", " + std::to_string(key.finish) +
              ", " + std::to_string(key.elem) +
              (key.kind == KernelKind::Columns ? ", " + std::to_string(key.vector) : std::string()) + ">(params);\n}\n";
  return source;
}

void reduce_on_gpu(const ReduceLaunch& launch, int device) {
  activate(device);
  reduce::KernelParams p = params_of(launch);
  const bool arg = launch.op == ReduceOp::ArgMax || launch.op == ReduceOp::ArgMin;
  const double count = static_cast<double>(launch.plan->reduced_count);
  switch (launch.op) {
    case ReduceOp::Mean:
      p.divisor = count;
      return reduce_pass(launch, p, launch.out_dtype, reduce::kDivide, reduce::kPlain, device);
    case ReduceOp::Var:
    case ReduceOp::Std: {
      // The means first, as the accumulator type, then the squared deviations from them.
      const DType mean_dtype = launch.acc == AccType::Float32 ? DType::Float32 : DType::Float64;
      Array means = Array::empty({launch.plan->kept_count}, mean_dtype, device);
      reduce::KernelParams first = p;
      first.divisor = count;
      first.out = means.data();
      int64_t stride = static_cast<int64_t>(acc_size(launch.acc));  // the means are contiguous
      for (int d = first.kept.ndim - 1; d >= 0; --d) {
        first.kept.out_stride[d] = stride;
        stride *= first.kept.size[d];
      }
      reduce_pass(launch, first, mean_dtype, reduce::kDivide, reduce::kPlain, device);
      p.means = means.data();
      p.divisor = reduce::var_divisor(launch.plan->reduced_count, launch.ddof);
      return reduce_pass(launch, p, launch.out_dtype, launch.op == ReduceOp::Std ? reduce::kSqrtDivide : reduce::kDivide,
                         reduce::kSquaredDeviation, device);
    }
    default:
      return reduce_pass(launch, p, launch.out_dtype, arg ? reduce::kIndex : reduce::kValue, reduce::kPlain, device);
  }
}

void cumsum_on_gpu(const ReduceLaunch& launch, int device) {
  activate(device);
  const reduce::KernelParams p = params_of(launch);
  const ReduceKernelKey key{ReduceOp::Sum, launch.in_dtype, launch.acc, launch.out_dtype, KernelKind::Cumsum};
  run_kernel(key, p, grid_for(p.results), device);
}

}  // namespace jiasu::ops
