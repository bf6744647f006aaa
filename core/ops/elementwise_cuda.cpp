// The GPU side of the elementwise engine: CUDA C++ generated per (operation, dtypes, layout class),
// compiled once and cached (elementwise_cuda.hpp), launched on the legacy default stream.
//   contiguous  every array operand C-contiguous with the output's shape (scalars are parameters): each
//               thread moves kElementwiseUnroll vectors of `vector` elements with aligned 16-byte loads
//               and stores (all loads first), the last partial vector element by element;
//   strided     the collapsed dimensions (ops/iteration.hpp), kElementwiseUnroll positions per thread, byte
//               offsets from the linear index in 32-bit arithmetic when every offset fits, else 64-bit. Where
//               the output and the inputs are contiguous or broadcast along the innermost dimension (a
//               broadcast such as (4096, 1) + (1, 65536)), a position is a vector of elements along it, moved
//               with aligned loads and stores as in the contiguous case;
//   tiled       an input contiguous along the second-innermost dimension and strided along the innermost
//               (a.T in a.T + b, the output contiguous): each block takes a 32 x 32 tile of the last two
//               dimensions and reads that input's part along its contiguous dimension into shared memory,
//               then every thread writes along the output's, so that both are coalesced; 64-bit offsets.
#include "ops/elementwise_cuda.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "emit/runtime/kernel_runtime.h"
#include "ops/engine.hpp"
#include "ops/runtime/elementwise_cuda.h"
#include "program/source_module.hpp"
#include "runtime/device.hpp"
#include "support/cuda_limits.hpp"

namespace jiasu::embedded {
extern const char ops_cuda[];
extern const unsigned long long ops_cuda_size;
}  // namespace jiasu::embedded

namespace jiasu::ops {
namespace {

const char* functor_name(Ufunc op) {
  static const char* const kNames[kUfuncCount] = {
#define JIASU_UFUNC(id, name, arity, rule, loops, functor) #functor,
#include "ops/ufuncs.def"
#undef JIASU_UFUNC
  };
  return kNames[static_cast<int>(op)];
}

const char* ctype(DType d) { return info(d).c_type; }

int log2_of(int power) {
  int bits = 0;
  while ((1 << bits) < power) ++bits;
  return bits;
}

}  // namespace

const std::string& ops_cuda_header() {
  static const std::string text(embedded::ops_cuda, embedded::ops_cuda_size);
  return text;
}

uint64_t ElementwiseSpec::key() const {
  static_assert(kUfuncCount <= 128 && kDTypeCount <= 15, "the key's field widths below");
  uint64_t k = static_cast<uint64_t>(op);
  k = k << 4 | static_cast<uint64_t>(out);
  for (int i = 0; i < 3; ++i) {
    const bool used = i < inputs;
    k = k << 4 | (!used ? 0 : scalar[i] ? 15 : static_cast<uint64_t>(in[i]));  // 15: no dtype, a scalar
    k = k << 4 | (used ? static_cast<uint64_t>(loop[i]) : 0);
  }
  k = k << 2 | static_cast<uint64_t>(inputs);
  k = k << 2 | static_cast<uint64_t>(layout);
  k = k << 3 | static_cast<uint64_t>(log2_of(vector));
  if (layout != LayoutClass::Contiguous) {
    const bool* flags = layout == LayoutClass::Tiled ? tiled : broadcast_inner;
    k = k << 3 | static_cast<uint64_t>(ndim - 1);
    k = k << 1 | wide_index;
    for (int i = 0; i < 3; ++i) k = k << 1 | (i < inputs && flags[i]);
  } else {
    k <<= 7;
  }
  // 7 + 4 + 24 + 2 + 2 + 3 + 7 = 49 bits, then a custom loop's id
  static_assert(49 + kCustomLoopIdBits <= 64, "a custom loop's id fits above the fields");
  return k | (custom ? custom->id << 49 : 0);
}

std::string elementwise_cuda_source(const ElementwiseSpec& s) {
  std::string src = ops_cuda_header();
  if (s.custom) src += "\n" + s.custom->cuda_definitions;
  src += "\nusing namespace jiasu;\nusing namespace jiasu::ufunc;\n";
  src += "using Out = " + std::string(ctype(s.out)) + ";\n";
  for (int i = 0; i < s.inputs; ++i) {
    const std::string n = std::to_string(i);
    src += "using L" + n + " = " + ctype(s.loop[i]) + ";\n";
    if (!s.scalar[i]) src += "using In" + n + " = " + ctype(s.in[i]) + ";\n";
  }
  // The parameters: out, then each input (a pointer, or a value in its loop type), then the sizes.
  std::string params = "Out* __restrict__ out";
  for (int i = 0; i < s.inputs; ++i) {
    const std::string n = std::to_string(i);
    params += s.scalar[i] ? ", L" + n + " s" + n : ", const In" + n + "* __restrict__ in" + n;
  }
  auto call = [&](const std::function<std::string(int)>& element) {
    std::string args;
    for (int i = 0; i < s.inputs; ++i) {
      const std::string n = std::to_string(i);
      args += (i ? ", " : "") + (s.scalar[i] ? "s" + n : "cast<L" + n + ">(" + element(i) + ")");
    }
    const std::string callee = s.custom ? s.custom->cuda_function : functor_name(s.op) + std::string("{}");
    return "cast<Out>(" + callee + "(" + args + "))";
  };
  const std::string block = std::to_string(kElementwiseBlock);
  src += "\nextern \"C\" __global__ void __launch_bounds__(" + block + ") " + kElementwiseKernelName + "(" + params;
  const std::string v = std::to_string(s.vector), u = std::to_string(kElementwiseUnroll);
  if (s.layout == LayoutClass::Contiguous) {
    src += ", long long n) {\n";
    src += "  constexpr int V = " + v + ", U = " + u + ";\n";
    src += "  const long long first = (static_cast<long long>(blockIdx.x) * (" + block + " * U) + threadIdx.x) * V;\n";
    for (int i = 0; i < s.inputs; ++i) {
      if (s.scalar[i]) continue;
      const std::string n = std::to_string(i);
      src += "  Vec<In" + n + ", V> a" + n + "[U];\n";
    }
    src += "#pragma unroll\n  for (int u = 0; u < U; ++u) {\n";
    src += "    const long long i = first + static_cast<long long>(u) * " + block + " * V;\n";
    src += "    if (i + V <= n) {\n";
    for (int i = 0; i < s.inputs; ++i) {
      if (s.scalar[i]) continue;
      const std::string n = std::to_string(i);
      src += "      a" + n + "[u] = *reinterpret_cast<const Vec<In" + n + ", V>*>(in" + n + " + i);\n";
    }
    src += "    }\n  }\n";
    src += "#pragma unroll\n  for (int u = 0; u < U; ++u) {\n";
    src += "    const long long i = first + static_cast<long long>(u) * " + block + " * V;\n";
    src += "    if (i + V <= n) {\n      Vec<Out, V> r;\n#pragma unroll\n      for (int k = 0; k < V; ++k) r.v[k] = " +
           call([](int i) { return "a" + std::to_string(i) + "[u].v[k]"; }) + ";\n";
    src += "      *reinterpret_cast<Vec<Out, V>*>(out + i) = r;\n";
    src += "    } else {\n      for (long long j = i; j < n && j < i + V; ++j) out[j] = " +
           call([](int i) { return "in" + std::to_string(i) + "[j]"; }) + ";\n    }\n  }\n}\n";
    return src;
  }
  int arrays = 1;
  std::vector<int> slot(3, 0);
  for (int i = 0; i < s.inputs; ++i)
    if (!s.scalar[i]) slot[i] = arrays++;
  if (s.layout == LayoutClass::Tiled) {
    const std::string dims = std::to_string(s.ndim), tile = std::to_string(kElementwiseTile);
    src += ", StridedParams64<" + dims + ", " + std::to_string(arrays) + "> p) {\n";
    src += "  constexpr int N = " + dims + ", T = " + tile + ", R = " + block + " / T;\n";
    src += "  const long long rows = p.shape[N - 2], cols = p.shape[N - 1];\n";
    src += "  const long long col_tiles = (cols + T - 1) / T, row_tiles = (rows + T - 1) / T;\n";
    src += "  long long b = blockIdx.x;\n";
    src += "  const long long c0 = b % col_tiles * T;\n  b /= col_tiles;\n";
    src += "  const long long r0 = b % row_tiles * T;\n  b /= row_tiles;\n";
    // The tile's first element of matrix b: its row and column offsets are added per element.
    src += "  long long base[" + std::to_string(arrays) + "];\n  offsets_of(b * rows * cols, p, base);\n";
    src += "  const int tx = threadIdx.x % T, ty = threadIdx.x / T;\n";
    const auto at = [&](int i, const std::string& r, const std::string& c) {
      const std::string k = std::to_string(slot[i]), n = std::to_string(i);
      return "at_offset(in" + n + ", base[" + k + "] + " + r + " * p.strides[" + k + "][N - 2] + " + c + " * p.strides[" + k +
             "][N - 1])";
    };
    for (int i = 0; i < s.inputs; ++i) {
      if (s.scalar[i] || !s.tiled[i]) continue;
      const std::string n = std::to_string(i);
      // Raw storage: an element type need not be trivially constructible for __shared__.
      src += "  __shared__ alignas(16) unsigned char bytes" + n + "[T * (T + 1) * sizeof(In" + n + ")];\n";
      src += "  In" + n + " (&t" + n + ")[T][T + 1] = *reinterpret_cast<In" + n + " (*)[T][T + 1]>(bytes" + n + ");\n";
      src += "  for (int j = ty; j < T; j += R) {\n";
      src += "    const long long r = r0 + tx, c = c0 + j;\n";
      src += "    if (r < rows && c < cols) t" + n + "[j][tx] = " + at(i, "r", "c") + ";\n  }\n";
    }
    src += "  __syncthreads();\n";
    src += "  for (int j = ty; j < T; j += R) {\n";
    src += "    const long long r = r0 + j, c = c0 + tx;\n";
    src += "    if (r < rows && c < cols)\n";
    src += "      at_offset(out, base[0] + r * p.strides[0][N - 2] + c * p.strides[0][N - 1]) = " +
           call([&](int i) { return s.tiled[i] ? "t" + std::to_string(i) + "[tx][j]" : at(i, "r", "c"); }) + ";\n";
    src += "  }\n}\n";
    return src;
  }
  // Strided: each thread takes U positions a block apart, each of V elements along the innermost dimension
  // (n is a multiple of V): their offsets and loads first, then the results. An input broadcast along the
  // innermost dimension is one element per position.
  const std::string index = s.wide_index ? "long long" : "int";
  src += ", StridedParams" + std::string(s.wide_index ? "64<" : "32<") + std::to_string(s.ndim) + ", " +
         std::to_string(arrays) + "> p, " + index + " n) {\n";
  src += "  using I = " + index + ";\n";
  src += "  constexpr int V = " + v + ", U = " + u + ";\n";
  src += "  const I positions = n / V;\n";
  src += "  const I first = static_cast<I>(blockIdx.x) * (" + block + " * U) + static_cast<I>(threadIdx.x);\n";
  src += "  I offset[U][" + std::to_string(arrays) + "];\n";
  const auto broadcast = [&](int i) { return s.vector > 1 && s.broadcast_inner[i]; };
  for (int i = 0; i < s.inputs; ++i) {
    if (s.scalar[i]) continue;
    const std::string n = std::to_string(i);
    src += broadcast(i) ? "  In" + n + " a" + n + "[U];\n" : "  Vec<In" + n + ", V> a" + n + "[U];\n";
  }
  src += "#pragma unroll\n  for (int u = 0; u < U; ++u) {\n";
  src += "    const I at = first + static_cast<I>(u) * " + block + ";\n";
  src += "    if (at < positions) {\n      offsets_of(at * V, p, offset[u]);\n";
  for (int i = 0; i < s.inputs; ++i) {
    if (s.scalar[i]) continue;
    const std::string n = std::to_string(i), where = "offset[u][" + std::to_string(slot[i]) + "]";
    const std::string base = broadcast(i) ? "in" + n : "reinterpret_cast<const Vec<In" + n + ", V>*>(in" + n + ")";
    src += "      a" + n + "[u] = at_offset(" + base + ", " + where + ");\n";
  }
  src += "    }\n  }\n";
  src += "#pragma unroll\n  for (int u = 0; u < U; ++u) {\n";
  src += "    if (first + static_cast<I>(u) * " + block + " < positions) {\n      Vec<Out, V> r;\n";
  src += "#pragma unroll\n      for (int k = 0; k < V; ++k) r.v[k] = " +
         call([&](int i) { return "a" + std::to_string(i) + (broadcast(i) ? "[u]" : "[u].v[k]"); }) + ";\n";
  src += "      at_offset(reinterpret_cast<Vec<Out, V>*>(out), offset[u][0]) = r;\n    }\n  }\n}\n";
  return src;
}

namespace {

struct CachedKernel {
  std::unique_ptr<SourceModule> module;
  std::mutex mutex;
  std::unordered_map<int, std::shared_ptr<Kernel>> by_device;
};

}  // namespace

Kernel& KernelCache::get(uint64_t key, int device, const char* name, const std::function<std::string()>& make_source,
                         const std::function<std::string()>& file_name) {
  static std::mutex mutex;
  // By kernel name and key: each kind of generated kernel keys its own; lives to the exit.
  static auto* kernels = new std::map<std::pair<std::string_view, uint64_t>, std::unique_ptr<CachedKernel>>();
  CachedKernel* entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<CachedKernel>& slot = (*kernels)[{name, key}];
    if (!slot) {
      slot = std::make_unique<CachedKernel>();
      slot->module = std::make_unique<SourceModule>(make_source(), std::vector<std::string>{},
                                                    file_name ? file_name() : std::string(name) + ".cu");
    }
    entry = slot.get();
  }
  std::lock_guard<std::mutex> lock(entry->mutex);
  auto found = entry->by_device.find(device);
  if (found != entry->by_device.end()) return *found->second;
  std::shared_ptr<Kernel> kernel = entry->module->kernel(name, device);
  entry->by_device.emplace(device, kernel);
  return *kernel;
}

KernelCache& kernel_cache() {
  static KernelCache cache;
  return cache;
}

namespace detail {
namespace {

bool aligned(cu::CUdeviceptr p, int bytes) { return p % static_cast<unsigned>(bytes) == 0; }

// The largest byte offset any element of the iteration reaches from its operand's base, in magnitude.
int64_t max_offset(const Iteration& it) {
  int64_t worst = 0;
  for (int k = 0; k < it.operands; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < it.ndim; ++d) reach += (it.shape[d] - 1) * (it.strides[k][d] < 0 ? -it.strides[k][d] : it.strides[k][d]);
    worst = std::max(worst, reach);
  }
  return worst;
}

constexpr int kMaxStridedDims = 8;

// The strided kernel's elements per position: as many (up to 16 bytes of the largest item) as the innermost
// dimension's extent and the alignment of the data and the outer strides allow, where the output is
// contiguous along it and every array input contiguous or broadcast (stride 0) there; else 1. When above
// 1, sets broadcast[i] for the inputs broadcast along it.
int inner_vector(const Iteration& it, const cu::CUdeviceptr* pointers, const ElementwiseSpec& spec, int count,
                 bool* broadcast) {
  if (it.ndim == 0) return 1;
  bool along[3] = {};
  const int inner = it.ndim - 1;
  int64_t item[kMaxOperands];  // 0: a scalar or an input broadcast along the innermost dimension
  item[0] = static_cast<int64_t>(itemsize(spec.out));
  int64_t largest = item[0];
  if (it.strides[0][inner] != item[0]) return 1;
  for (int k = 1; k <= count; ++k) {
    item[k] = spec.scalar[k - 1] ? 0 : static_cast<int64_t>(itemsize(spec.in[k - 1]));
    if (item[k] == 0) continue;
    if (it.strides[k][inner] == 0) {
      along[k - 1] = true;
      item[k] = 0;
    } else if (it.strides[k][inner] != item[k]) {
      return 1;
    }
    largest = std::max(largest, item[k]);
  }
  const auto fits = [&](int64_t vector) {
    if (it.shape[inner] % vector != 0) return false;
    for (int k = 0; k <= count; ++k) {
      if (item[k] == 0) continue;
      const int64_t bytes = vector * item[k];
      if (pointers[k] % bytes != 0) return false;
      for (int d = 0; d < inner; ++d)
        if (it.strides[k][d] % bytes != 0) return false;
    }
    return true;
  };
  int64_t vector = 16 / largest;
  while (vector > 1 && !fits(vector)) vector /= 2;
  if (vector > 1) std::copy(along, along + 3, broadcast);
  return static_cast<int>(vector);
}

// The tiled kernel's blocks: one per tile of the last two dimensions, for each position of the others.
int64_t tile_count(const Iteration& it) {
  const int64_t cols = it.shape[it.ndim - 1], rows = it.shape[it.ndim - 2];
  const int64_t per_matrix = (cols + kElementwiseTile - 1) / kElementwiseTile * ((rows + kElementwiseTile - 1) / kElementwiseTile);
  return per_matrix * (it.size / (cols * rows));
}

// The tiled path's inputs: where the output is contiguous along the innermost dimension and an array input
// is contiguous along the second-innermost but strided along the innermost (a transposed operand), sets
// tiled[i] for each such input and returns true. Both of the tile's dimensions must fill at least half a
// tile (else the strided kernel wastes fewer threads), and the inputs' tiles must fit in a block's static
// shared memory.
bool tiled_inputs(const Iteration& it, const ElementwiseSpec& spec, int count, bool* tiled) {
  if (it.ndim < 2) return false;
  const int inner = it.ndim - 1, second = it.ndim - 2;
  if (it.shape[inner] < kElementwiseTile / 2 || it.shape[second] < kElementwiseTile / 2) return false;
  if (it.strides[0][inner] != static_cast<int64_t>(itemsize(spec.out))) return false;
  bool found[3] = {};
  int64_t shared = 0;
  for (int i = 0; i < count; ++i) {
    if (spec.scalar[i]) continue;
    const int64_t item = static_cast<int64_t>(itemsize(spec.in[i]));
    const int64_t along = it.strides[i + 1][inner];
    if (it.strides[i + 1][second] == item && along != item && along != 0) {
      found[i] = true;
      shared += item * kElementwiseTile * (kElementwiseTile + 1);
    }
  }
  if (shared == 0 || shared > kStaticSharedBytesPerBlock || tile_count(it) > INT32_MAX) return false;
  std::copy(found, found + 3, tiled);
  return true;
}

}  // namespace

void run_cuda(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out, const CustomLoop* custom) {
  const int64_t n = out.size();
  if (n == 0) return;
  ElementwiseSpec spec;
  spec.op = op;
  spec.custom = custom;
  spec.inputs = count;
  spec.out = out.dtype();
  bool contiguous = out.c_contiguous();
  int largest = static_cast<int>(itemsize(out.dtype()));
  for (int i = 0; i < count; ++i) {
    spec.loop[i] = r.loop[i];
    spec.scalar[i] = inputs[i].array == nullptr;
    spec.in[i] = spec.scalar[i] ? r.loop[i] : inputs[i].array->dtype();
    if (spec.scalar[i]) continue;
    const Array& a = *inputs[i].array;
    contiguous = contiguous && a.c_contiguous() && a.shape() == out.shape();
    largest = std::max(largest, static_cast<int>(itemsize(a.dtype())));
  }
  const Layout* layouts[kMaxOperands] = {&out.layout()};
  cu::CUdeviceptr pointers[kMaxOperands] = {out.data()};
  for (int i = 0; i < count; ++i) {
    layouts[i + 1] = inputs[i].array ? &inputs[i].array->layout() : nullptr;
    pointers[i + 1] = inputs[i].array ? inputs[i].array->data() : 0;
  }
  Iteration it;
  if (contiguous) {
    spec.layout = LayoutClass::Contiguous;
    spec.vector = 16 / largest;
    for (int k = 0; k <= count; ++k) {
      if (!layouts[k]) continue;
      const int item = static_cast<int>(k == 0 ? itemsize(out.dtype()) : itemsize(inputs[k - 1].array->dtype()));
      if (!aligned(pointers[k], item * spec.vector)) spec.vector = 1;
    }
  } else {
    it = make_iteration(out.shape(), layouts, count + 1);
    if (it.ndim > kMaxStridedDims)
      throw BadValue("jiasu's GPU loops take at most 8 dimensions that do not merge; this call has " +
                     std::to_string(it.ndim));
    spec.ndim = std::max(it.ndim, 1);
    if (tiled_inputs(it, spec, count, spec.tiled)) {
      spec.layout = LayoutClass::Tiled;
    } else {
      spec.layout = LayoutClass::Strided;
      spec.vector = inner_vector(it, pointers, spec, count, spec.broadcast_inner);
      // The thread's first position and those a block apart stay below 2^31 - 1 as well as the offsets.
      spec.wide_index = n > INT32_MAX - int64_t(kElementwiseBlock) * kElementwiseUnroll || max_offset(it) > INT32_MAX;
    }
  }
  const int device = out.device();
  Kernel& kernel = kernel_cache().get(spec.key(), device, kElementwiseKernelName,
                                      [&] { return elementwise_cuda_source(spec); });

  thread_local LaunchArgs args;
  args.begin(kernel.param_layout());
  args.add(&pointers[0], sizeof(cu::CUdeviceptr), alignof(cu::CUdeviceptr), "out");
  alignas(16) unsigned char scalar[3][16];
  for (int i = 0; i < count; ++i) {
    if (inputs[i].array) {
      args.add(&pointers[i + 1], sizeof(cu::CUdeviceptr), alignof(cu::CUdeviceptr), "an input");
    } else {
      scalar_bytes(inputs[i].scalar, r.loop[i], scalar[i]);
      const size_t size = itemsize(r.loop[i]);
      args.add(scalar[i], size, size, "a scalar");
    }
  }
  Dim3 grid, block;
  block.x = kElementwiseBlock;
  if (spec.layout == LayoutClass::Contiguous) {
    const long long size = n;
    args.add(&size, sizeof size, alignof(long long), "the size");
    const int64_t per_block = int64_t(kElementwiseBlock) * kElementwiseUnroll * spec.vector;
    grid.x = static_cast<unsigned>((n + per_block - 1) / per_block);
  } else {
    // StridedParams32/64<N, K> (ops/runtime/elementwise_cuda.h; tiled: 64, without the size): the extents (as
    // dividers in 32-bit), then each array operand's byte strides.
    const int dims = spec.ndim;
    int64_t strides[kMaxStridedDims * (kMaxOperands + 1)];
    int at = 0;
    for (int k = 0; k < it.operands; ++k) {
      if (k > 0 && !inputs[k - 1].array) continue;
      for (int d = 0; d < dims; ++d) strides[at++] = it.ndim ? it.strides[k][d] : 0;
    }
    if (spec.wide_index || spec.layout == LayoutClass::Tiled) {
      int64_t packed[kMaxStridedDims * (kMaxOperands + 2)];
      for (int d = 0; d < dims; ++d) packed[d] = it.ndim ? it.shape[d] : 1;
      for (int j = 0; j < at; ++j) packed[dims + j] = strides[j];
      args.add(packed, (dims + at) * sizeof(int64_t), alignof(int64_t), "the strides");
      const long long size = n;
      if (spec.layout == LayoutClass::Strided) args.add(&size, sizeof size, alignof(long long), "the size");
    } else {
      struct {
        ufunc::FastDivider shape[kMaxStridedDims];
        int32_t strides[kMaxStridedDims * (kMaxOperands + 1)];
      } p{};
      for (int d = 0; d < dims; ++d) p.shape[d] = ufunc::make_divider(static_cast<unsigned>(it.ndim ? it.shape[d] : 1));
      for (int j = 0; j < at; ++j) p.strides[j] = static_cast<int32_t>(strides[j]);
      // The kernel's struct holds dims dividers then the strides, with no gap (all 4-byte fields).
      unsigned char bytes[sizeof(p)];
      std::memcpy(bytes, p.shape, dims * sizeof(ufunc::FastDivider));
      std::memcpy(bytes + dims * sizeof(ufunc::FastDivider), p.strides, at * sizeof(int32_t));
      args.add(bytes, dims * sizeof(ufunc::FastDivider) + at * sizeof(int32_t), alignof(int32_t), "the strides");
      const int32_t size = static_cast<int32_t>(n);
      args.add(&size, sizeof size, alignof(int32_t), "the size");
    }
    if (spec.layout == LayoutClass::Tiled) {
      grid.x = static_cast<unsigned>(tile_count(it));
    } else {
      const int64_t per_block = int64_t(kElementwiseBlock) * kElementwiseUnroll * spec.vector;  // n % vector == 0
      grid.x = static_cast<unsigned>((n + per_block - 1) / per_block);
    }
  }
  args.finish();
  kernel.launch(grid, block, args, 0, nullptr);
}

}  // namespace detail
}  // namespace jiasu::ops
