// Products on the GPU through cuBLASLt: row-major operands read as column-major transposes (D^T = B^T A^T),
// transposed views passed as TRANSA/TRANSB, batches as strided batches (stride 0 for a broadcast operand),
// one algorithm per problem from cuBLASLt's heuristic, cached, a workspace per device from the memory pool.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "ops/matmul_cublaslt.hpp"

#include "ops/elementwise.hpp"
#include "runtime/cublaslt.hpp"
#include "runtime/device.hpp"
#include "runtime/graph.hpp"
#include "runtime/profiler.hpp"
#include "support/error.hpp"

namespace jiasu::ops {
namespace {

using namespace blaslt;

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // what cuBLAS advises for Hopper

}  // namespace

GemmTypes gemm_types(DType dtype, bool tf32, const char* op) {
  GemmTypes t;
  auto set_one = [&](auto value) { std::memcpy(t.one.data(), &value, sizeof(value)); };
  switch (dtype) {
    case DType::Float16:
    case DType::BFloat16:  // fp32 accumulation, as torch
      t = {dtype == DType::Float16 ? kR16F : kR16BF, kCompute32F, kR32F};
      set_one(1.0f);
      break;
    case DType::Float32:
      t = {kR32F, tf32 ? kCompute32FFastTF32 : kCompute32F, kR32F};
      set_one(1.0f);
      break;
    case DType::Float64:
      t = {kR64F, kCompute64F, kR64F};
      set_one(1.0);
      break;
    case DType::Complex64:  // the scale is complex too: (1, 0)
      t = {kC32F, kCompute32F, kC32F};
      set_one(1.0f);
      break;
    case DType::Complex128:
      t = {kC64F, kCompute64F, kC64F};
      set_one(1.0);
      break;
    default:
      throw BadArgument(std::string(op) + " of " + info(dtype).name +
                        " arrays is not supported on the GPU (cuBLASLt has no general integer or bool product); "
                        "convert them with astype to a float type, or use the CPU backend");
  }
  return t;
}

GemmDescriptors::~GemmDescriptors() {
  const Api& lt = api();
  if (preference) lt.cublasLtMatmulPreferenceDestroy(preference);
  for (CublasLtMatrixLayout layout : {first, second, out})
    if (layout) lt.cublasLtMatrixLayoutDestroy(layout);
  if (desc) lt.cublasLtMatmulDescDestroy(desc);
}

namespace {

// One cuBLASLt handle and one workspace per device, made on first use and kept for the process's life.
struct DeviceState {
  CublasLtHandle handle = nullptr;
  std::shared_ptr<Allocation> workspace;
};

DeviceState& device_state(int device) {
  static std::mutex mutex;
  static auto* states = new std::map<int, DeviceState>();  // never freed: destructors would run late
  std::lock_guard<std::mutex> lock(mutex);
  DeviceState& state = (*states)[device];
  if (!state.handle) {
    activate(device);
    CublasLtHandle handle = nullptr;
    check(api().cublasLtCreate(&handle), "cublasLtCreate");
    state.workspace = allocate_device(device, kWorkspaceBytes);
    state.handle = handle;
  }
  return state;
}

// The descriptors of one problem and the algorithm the heuristic chose for it.
struct GemmAlgorithm {
  std::unique_ptr<GemmDescriptors> descriptors;
  CublasLtAlgo algo{};
  size_t workspace_bytes = 0;
};

using GemmKey = std::tuple<int, int, int, int64_t, int64_t, int64_t, std::array<int64_t, 9>, int64_t,
                           std::array<int64_t, 3>, std::array<uint32_t, 3>>;

uint32_t alignment_of(cu::CUdeviceptr ptr, const Shape& outer_strides) {
  uint64_t bits = ptr;
  for (int64_t s : outer_strides) bits |= uint64_t(s);
  uint32_t alignment = 1;
  while (alignment < 256 && !(bits & alignment)) alignment <<= 1;
  return alignment;
}

CublasLtMatrixLayout make_layout(int data_type, const StoredMatrix& m, int64_t batch_count, int64_t batch_stride) {
  const Api& lt = api();
  CublasLtMatrixLayout layout = nullptr;
  check(lt.cublasLtMatrixLayoutCreate(&layout, data_type, uint64_t(m.rows), uint64_t(m.cols), m.ld),
        "cublasLtMatrixLayoutCreate");
  if (batch_count > 1) {
    const int32_t count = int32_t(batch_count);
    check(lt.cublasLtMatrixLayoutSetAttribute(layout, kLayoutBatchCount, &count, sizeof(count)),
          "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    check(lt.cublasLtMatrixLayoutSetAttribute(layout, kLayoutStridedBatchOffset, &batch_stride, sizeof(batch_stride)),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return layout;
}

}  // namespace

std::unique_ptr<GemmDescriptors> make_gemm_descriptors(const GemmTypes& types, const GemmPlan& plan,
                                                       const std::array<uint32_t, 3>& alignments) {
  const Api& lt = api();
  auto d = std::make_unique<GemmDescriptors>();
  check(lt.cublasLtMatmulDescCreate(&d->desc, types.compute, types.scale), "cublasLtMatmulDescCreate");
  const int32_t trans_a = plan.first.transposed ? kOpT : kOpN, trans_b = plan.second.transposed ? kOpT : kOpN;
  check(lt.cublasLtMatmulDescSetAttribute(d->desc, kDescTransA, &trans_a, sizeof(trans_a)),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(lt.cublasLtMatmulDescSetAttribute(d->desc, kDescTransB, &trans_b, sizeof(trans_b)),
        "cublasLtMatmulDescSetAttribute(TRANSB)");
  d->first = make_layout(types.data, plan.first, plan.batch_count, plan.b_batch_stride);
  d->second = make_layout(types.data, plan.second, plan.batch_count, plan.a_batch_stride);
  d->out = make_layout(types.data, plan.out, plan.batch_count, plan.out_batch_stride);

  check(lt.cublasLtMatmulPreferenceCreate(&d->preference), "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = kWorkspaceBytes;
  check(lt.cublasLtMatmulPreferenceSetAttribute(d->preference, kPrefMaxWorkspaceBytes, &workspace, sizeof(workspace)),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  // alignments: cuBLASLt's A (our b), B (our a), and C = D (our result).
  const int attributes[4] = {kPrefMinAlignmentA, kPrefMinAlignmentB, kPrefMinAlignmentC, kPrefMinAlignmentD};
  const uint32_t values[4] = {alignments[0], alignments[1], alignments[2], alignments[2]};
  for (int i = 0; i < 4; ++i)
    check(lt.cublasLtMatmulPreferenceSetAttribute(d->preference, attributes[i], &values[i], sizeof(values[i])),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  return d;
}

void GemmDescriptors::drop_preference() {
  if (preference) api().cublasLtMatmulPreferenceDestroy(preference);
  preference = nullptr;
}

namespace {

std::shared_ptr<const GemmAlgorithm> find_algorithm(int device, const GemmTypes& types, const GemmPlan& plan,
                                                    const std::array<uint32_t, 3>& alignments) {
  const GemmKey key{device, types.data, types.compute, plan.m, plan.n, plan.k,
                    {plan.first.transposed, plan.first.rows, plan.first.ld, plan.second.transposed,
                     plan.second.rows, plan.second.ld, plan.out.rows, plan.out.cols, plan.out.ld},
                    plan.batch_count, {plan.b_batch_stride, plan.a_batch_stride, plan.out_batch_stride}, alignments};
  static std::mutex mutex;
  static auto* cache = new std::map<GemmKey, std::shared_ptr<const GemmAlgorithm>>();  // never freed
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }

  auto found = std::make_shared<GemmAlgorithm>();
  found->descriptors = make_gemm_descriptors(types, plan, alignments);
  const GemmDescriptors& d = *found->descriptors;
  CublasLtHeuristicResult result{};
  int returned = 0;
  activate(device);
  check(api().cublasLtMatmulAlgoGetHeuristic(device_state(device).handle, d.desc, d.first, d.second, d.out, d.out,
                                             d.preference, 1, &result, &returned),
        "cublasLtMatmulAlgoGetHeuristic");
  if (returned < 1 || result.state != kStatusSuccess)
    throw CudaError(kStatusNotSupported, "CUBLAS_STATUS_NOT_SUPPORTED",
                    "cuBLASLt has no algorithm for this product (m=" + std::to_string(plan.m) +
                        ", n=" + std::to_string(plan.n) + ", k=" + std::to_string(plan.k) +
                        ", batch=" + std::to_string(plan.batch_count) + ")");
  found->algo = result.algo;
  found->workspace_bytes = result.workspace_bytes;

  found->descriptors->drop_preference();
  std::lock_guard<std::mutex> lock(mutex);
  // Descriptors are kept with their entry for the process's life (a few hundred bytes each).
  return cache->emplace(key, std::move(found)).first->second;
}

// A view of `x` whose last two dimensions cuBLASLt can read (copied to C-contiguous when they are neither
// row- nor column-major), broadcast to `batch`.
Array readable_operand(Array x, const Shape& batch, bool vector, bool on_left) {
  Layout layout = matrix_operand_layout(x.layout(), batch, vector, on_left);
  const size_t nd = layout.shape.size();
  MatrixStorage s = classify_matrix(layout.shape[nd - 2], layout.shape[nd - 1], layout.strides[nd - 2],
                                    layout.strides[nd - 1], layout.itemsize);
  if (!s.row_major && !s.column_major) {
    x = astype(x, x.dtype());
    layout = matrix_operand_layout(x.layout(), batch, vector, on_left);
  }
  return x.view(std::move(layout));
}

bool overlap(const Array& x, const Array& y) {
  if (x.memory() != y.memory() || x.size() == 0 || y.size() == 0) return false;
  return x.layout().span_begin() < y.layout().span_end() && y.layout().span_begin() < x.layout().span_end();
}

// out (batch..., M, N) = a (batch..., M, K) @ b (batch..., K, N), every layout of the full batch.
void gemm(const Array& a, const Array& b, const Array& out, bool tf32, const char* op) {
  const int device = out.device();
  const GemmTypes types = gemm_types(out.dtype(), tf32, op);
  const GemmPlan plan = plan_gemm(a.layout(), b.layout(), out.layout());
  const std::array<uint32_t, 3> alignments = {alignment_of(b.data(), plan.b_outer_strides),
                                              alignment_of(a.data(), plan.a_outer_strides),
                                              alignment_of(out.data(), plan.out_outer_strides)};
  std::shared_ptr<const GemmAlgorithm> algorithm = find_algorithm(device, types, plan, alignments);
  DeviceState& state = device_state(device);
  activate(device);
  const Api& lt = api();
  if (profiling()) [[unlikely]] {
    auto bytes = [](const Array& x) { return x.size() * static_cast<int64_t>(itemsize(x.dtype())); };
    LaunchNote note;
    note.bytes_read = bytes(a) + bytes(b);
    note.bytes_written = bytes(out);
    note.flops = 2 * out.size() * a.shape().back();
    note_next_launch(std::move(note));
  }
  const ProfiledCall timed(std::string(op) + " (cuBLASLt)", device, work_stream(nullptr));
  // One call per index of the outer batch (usually one call in all).
  Shape index(plan.outer_shape.size(), 0);
  while (true) {
    int64_t a_offset = 0, b_offset = 0, out_offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      a_offset += index[d] * plan.a_outer_strides[d];
      b_offset += index[d] * plan.b_outer_strides[d];
      out_offset += index[d] * plan.out_outer_strides[d];
    }
    void* d_ptr = reinterpret_cast<void*>(out.data() + out_offset);
    const GemmDescriptors& desc = *algorithm->descriptors;
    check(lt.cublasLtMatmul(state.handle, desc.desc, types.one.data(),
                            reinterpret_cast<const void*>(b.data() + b_offset), desc.first,
                            reinterpret_cast<const void*>(a.data() + a_offset), desc.second, types.zero.data(),
                            d_ptr, desc.out, d_ptr, desc.out, &algorithm->algo,
                            reinterpret_cast<void*>(state.workspace->ptr()), algorithm->workspace_bytes,
                            work_stream(nullptr)),
          "cublasLtMatmul");
    size_t d = index.size();
    while (d > 0 && ++index[d - 1] == plan.outer_shape[d - 1]) index[--d] = 0;
    if (d == 0) break;
  }
}

// Copies a C-contiguous array of result's elements (in its order) into `result`.
void copy_into(const Array& result, const Array& temporary) {
  assign(result, temporary.reshape(result.shape()));
}

// The product into `result` (seen as the matrices `result_matrices`, the same elements in the same order),
// through a C-contiguous temporary when cuBLASLt cannot write `result` in place or it shares memory with an
// operand.
void gemm_into(const Array& a, const Array& b, const Array& result, const Layout& result_matrices, bool tf32,
               const char* op) {
  const GemmPlan plan = plan_gemm(a.layout(), b.layout(), result_matrices);
  if (!plan.use_temporary_out && !overlap(result, a) && !overlap(result, b)) {
    gemm(a, b, result.view(result_matrices), tf32, op);
    return;
  }
  Array temporary = Array::empty(result_matrices.shape, result.dtype(), result.device());
  gemm(a, b, temporary, tf32, op);
  copy_into(result, temporary);
}

void require_one_dtype(const Product& p, const char* op) {
  if (p.a.dtype() != p.b.dtype())
    throw BadArgument(std::string(op) + " of " + info(p.a.dtype()).name + " and " + info(p.b.dtype()).name +
                      " arrays on the GPU: cuBLASLt multiplies operands of one dtype; convert one with astype");
}

}  // namespace

void run_on_gpu(const Product& p) {
  const char* op = p.dot ? "dot" : "matmul";
  gemm_types(p.result.dtype(), p.allow_tf32, op);  // the dtype check comes before any other work
  require_one_dtype(p, op);
  const auto holds = std::make_tuple(p.a.memory()->hold(), p.b.memory()->hold(), p.result.memory()->hold());
  if (p.result.size() == 0) return;
  if (p.dot && (p.a.ndim() == 0 || p.b.ndim() == 0))
    throw BadArgument("dot with a 0-d operand is not supported on the GPU; use jiasu.multiply");

  const MatmulShapes shapes = p.dot && p.a.ndim() >= 2 && p.b.ndim() >= 3
                                  ? matmul_shapes({p.a.size() / p.a.shape().back(), p.a.shape().back()},
                                                  p.b.shape())
                                  : matmul_shapes(p.a.shape(), p.b.shape());
  if (shapes.k == 0) {  // an empty sum: zeros, as NumPy
    const std::array<unsigned char, 16> zero{};
    p.result.fill(zero.data());
    return;
  }
  const bool dot_nd = p.dot && p.a.ndim() >= 2 && p.b.ndim() >= 3;
  if (!dot_nd) {
    // matmul, and dot where it agrees with matmul (operands of at most 2 dimensions, or b of at most 2).
    Array a = readable_operand(p.a, shapes.batch, shapes.a_vector, true);
    Array b = readable_operand(p.b, shapes.batch, shapes.b_vector, false);
    Layout out = p.result.layout();  // with the dimensions of 1-D operands put back, of size 1
    if (shapes.a_vector) {
      out.shape.insert(out.shape.end() - (shapes.b_vector ? 0 : 1), 1);
      out.strides.insert(out.strides.end() - (shapes.b_vector ? 0 : 1), 0);
    }
    if (shapes.b_vector) {
      out.shape.push_back(1);
      out.strides.push_back(0);
    }
    gemm_into(a, b, p.result, out, p.allow_tf32, op);
    return;
  }
  // np.dot of a (P..., K) with b (B..., K, N): a as one (P, K) matrix, broadcast over b's batch B; a
  // C-contiguous result (P..., B..., N) seen as a batch B of (P, N) matrices whose rows are prod(B) * N
  // elements apart.
  const Array a_flat = (p.a.c_contiguous() ? p.a : astype(p.a, p.a.dtype())).reshape({shapes.m, shapes.k});
  const Array a = readable_operand(a_flat, shapes.batch, false, true);
  const Array b = readable_operand(p.b, shapes.batch, false, false);
  const bool in_place = p.result.c_contiguous() && !overlap(p.result, p.a) && !overlap(p.result, p.b);
  const Array target = in_place ? p.result : Array::empty(p.result.shape(), p.result.dtype(), p.result.device());
  const Layout& r = target.layout();
  const size_t p_dims = p.a.ndim() - 1;
  Layout out;
  out.offset = r.offset;
  out.itemsize = r.itemsize;
  out.shape = shapes.batch;
  out.strides.assign(r.strides.begin() + p_dims, r.strides.end() - 1);
  out.shape.push_back(shapes.m);
  out.strides.push_back(r.strides[p_dims - 1]);
  out.shape.push_back(shapes.n);
  out.strides.push_back(r.strides.back());
  gemm(a, b, target.view(out), p.allow_tf32, op);
  if (!in_place) copy_into(p.result, target);
}

}  // namespace jiasu::ops
