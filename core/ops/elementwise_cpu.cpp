// The CPU backend's elementwise loops, compiled into the core from the functors of ops/runtime/ufuncs.h:
// one inner loop per (operation, loop dtype), NumPy's way (pointers and byte strides along the innermost
// dimension, with contiguous and scalar-operand cases the compiler vectorises), run over the collapsed
// outer dimensions in chunks spread over a work pool.
#include "ops/cpu_types.hpp"  // first: the kernel runtime's host part

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "ops/engine.hpp"
#include "ops/runtime/ufuncs.h"
#include "support/work_pool.hpp"

namespace jiasu::ops::detail {
namespace {

// data[0] is the output, data[1..] the inputs; strides in bytes; n elements.
using CpuLoop = void (*)(char* const* data, const int64_t* strides, int64_t n);

template <typename F, typename R, typename A>
void unary_loop(char* const* data, const int64_t* strides, int64_t n) {
  R* out = reinterpret_cast<R*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const F f{};
  if (strides[0] == sizeof(R) && strides[1] == sizeof(A)) {
    for (int64_t i = 0; i < n; ++i) out[i] = cast<R>(f(a[i]));
    return;
  }
  const char* pa = data[1];
  char* po = data[0];
  for (int64_t i = 0; i < n; ++i, po += strides[0], pa += strides[1])
    *reinterpret_cast<R*>(po) = cast<R>(f(*reinterpret_cast<const A*>(pa)));
}

template <typename F, typename R, typename A, typename B>
void binary_loop(char* const* data, const int64_t* strides, int64_t n) {
  R* out = reinterpret_cast<R*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const B* b = reinterpret_cast<const B*>(data[2]);
  const F f{};
  if (strides[0] == sizeof(R)) {
    if (strides[1] == sizeof(A) && strides[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) out[i] = cast<R>(f(a[i], b[i]));
      return;
    }
    if (strides[1] == sizeof(A) && strides[2] == 0) {
      const B y = *b;
      for (int64_t i = 0; i < n; ++i) out[i] = cast<R>(f(a[i], y));
      return;
    }
    if (strides[1] == 0 && strides[2] == sizeof(B)) {
      const A x = *a;
      for (int64_t i = 0; i < n; ++i) out[i] = cast<R>(f(x, b[i]));
      return;
    }
  }
  const char *pa = data[1], *pb = data[2];
  char* po = data[0];
  for (int64_t i = 0; i < n; ++i, po += strides[0], pa += strides[1], pb += strides[2])
    *reinterpret_cast<R*>(po) = cast<R>(f(*reinterpret_cast<const A*>(pa), *reinterpret_cast<const B*>(pb)));
}

template <typename F, typename R, typename A, typename B, typename C>
void ternary_loop(char* const* data, const int64_t* strides, int64_t n) {
  const char *pa = data[1], *pb = data[2], *pc = data[3];
  char* po = data[0];
  const F f{};
  for (int64_t i = 0; i < n; ++i, po += strides[0], pa += strides[1], pb += strides[2], pc += strides[3])
    *reinterpret_cast<R*>(po) = cast<R>(f(*reinterpret_cast<const A*>(pa), *reinterpret_cast<const B*>(pb),
                                          *reinterpret_cast<const C*>(pc)));
}

template <Ufunc U> struct Row;
#define JIASU_UFUNC(id, name, arity_, rule_, loops_, functor)                 \
  template <> struct Row<Ufunc::id> {                                          \
    using F = ufunc::functor;                                                  \
    static constexpr int arity = arity_;                                       \
    static constexpr TypeRule rule = TypeRule::rule_;                          \
    static constexpr uint32_t loops = loops_;                                  \
  };
#include "ops/ufuncs.def"
#undef JIASU_UFUNC

// The loop of operation U at loop dtype D (null where U has none), its operands all of D's type but
// where's condition (bool).
template <Ufunc U, DType D>
constexpr CpuLoop loop_for() {
  using Op = Row<U>;
  using T = ctype_t<D>;
  if constexpr (!(Op::loops & bit(D)) || Op::rule == TypeRule::Cast) {
    return nullptr;
  } else if constexpr (Op::arity == 1) {
    using R = decltype(typename Op::F{}(T{}));
    return &unary_loop<typename Op::F, R, T>;
  } else if constexpr (Op::arity == 2) {
    using R = decltype(typename Op::F{}(T{}, T{}));
    return &binary_loop<typename Op::F, R, T, T>;
  } else {
    using A = std::conditional_t<Op::rule == TypeRule::Where, bool, T>;
    using R = decltype(typename Op::F{}(A{}, T{}, T{}));
    return &ternary_loop<typename Op::F, R, A, T, T>;
  }
}


template <Ufunc U, size_t... D>
constexpr std::array<CpuLoop, kDTypeCount> loops_of(std::index_sequence<D...>) {
  return {loop_for<U, static_cast<DType>(D)>()...};
}

template <size_t... U>
constexpr std::array<std::array<CpuLoop, kDTypeCount>, kUfuncCount> make_table(std::index_sequence<U...>) {
  return {loops_of<static_cast<Ufunc>(U)>(std::make_index_sequence<kDTypeCount>{})...};
}

constexpr auto kLoops = make_table(std::make_index_sequence<kUfuncCount>{});

// Conversions: cast_loop[from][to].
template <size_t From, size_t... To>
constexpr std::array<CpuLoop, kDTypeCount> casts_from(std::index_sequence<To...>) {
  return {&unary_loop<ufunc::Copy, ctype_t<static_cast<DType>(To)>, ctype_t<static_cast<DType>(From)>>...};
}
template <size_t... From>
constexpr std::array<std::array<CpuLoop, kDTypeCount>, kDTypeCount> make_casts(std::index_sequence<From...>) {
  return {casts_from<From>(std::make_index_sequence<kDTypeCount>{})...};
}
constexpr auto kCasts = make_casts(std::make_index_sequence<kDTypeCount>{});

WorkPool& pool() {
  static WorkPool* workers = new WorkPool(static_cast<unsigned>(host_thread_count()));  // lives to the exit
  return *workers;
}

// Elements per task: small enough to balance the threads, large enough that a task costs far more
// than claiming it.
constexpr int64_t kChunk = 1 << 16;

// Runs `loop` over the elements [begin, end) of the iteration (in C order), from the base pointers.
void run_range(const Iteration& it, char* const* base, CpuLoop loop, int64_t begin, int64_t end) {
  const int ndim = it.ndim, inner = ndim - 1;
  char* data[kMaxOperands];
  int64_t inner_strides[kMaxOperands];
  if (ndim == 0) {
    for (int k = 0; k < it.operands; ++k) data[k] = base[k], inner_strides[k] = 0;
    loop(data, inner_strides, 1);
    return;
  }
  int64_t index[kMaxDims];
  int64_t rest = begin;
  for (int d = ndim - 1; d >= 0; --d) {
    index[d] = rest % it.shape[d];
    rest /= it.shape[d];
  }
  for (int k = 0; k < it.operands; ++k) {
    data[k] = base[k];
    for (int d = 0; d < ndim; ++d) data[k] += index[d] * it.strides[k][d];
    inner_strides[k] = it.strides[k][inner];
  }
  int64_t position = begin;
  while (position < end) {
    const int64_t n = std::min(it.shape[inner] - index[inner], end - position);
    loop(data, inner_strides, n);
    position += n;
    if (position >= end) break;
    // Next row: the inner index is back at 0, the outer ones count like an odometer.
    for (int k = 0; k < it.operands; ++k) data[k] -= index[inner] * it.strides[k][inner];
    index[inner] = 0;
    for (int d = inner - 1; d >= 0; --d) {
      for (int k = 0; k < it.operands; ++k) data[k] += it.strides[k][d];
      if (++index[d] < it.shape[d]) break;
      for (int k = 0; k < it.operands; ++k) data[k] -= it.strides[k][d] * it.shape[d];
      index[d] = 0;
    }
  }
}

void run_loop(const Iteration& it, char* const* base, CpuLoop loop) {
  if (it.size == 0) return;
  const int64_t tasks = (it.size + kChunk - 1) / kChunk;
  if (tasks == 1) return run_range(it, base, loop, 0, it.size);
  pool().run(static_cast<size_t>(tasks), [&](size_t task) {
    const int64_t begin = static_cast<int64_t>(task) * kChunk;
    run_range(it, base, loop, begin, std::min(it.size, begin + kChunk));
  });
}

char* host_pointer(const Array& a) { return reinterpret_cast<char*>(a.data()); }

}  // namespace

void scalar_bytes(const Scalar& s, DType to, void* bytes) {
  dispatch_dtype(to, [&](auto d) {
    using T = ctype_t<decltype(d)::value>;
    T value = cast<T>(complex128(s.f, s.imag));  // Category::Complex
    switch (category(s.dtype)) {
      case Category::Bool: value = cast<T>(s.b); break;
      case Category::Integer:
        value = s.beyond_uint64 ? cast<T>(s.f) : s.beyond_int64 || info(s.dtype).kind == DTypeKind::Unsigned
                                                     ? cast<T>(static_cast<unsigned long long>(s.u))
                                                     : cast<T>(static_cast<long long>(s.i));
        break;
      case Category::Float: value = cast<T>(s.f); break;
      case Category::Complex: break;
    }
    std::memcpy(bytes, &value, sizeof(T));
  });
}

void run_cpu(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out, const CustomLoop* custom) {
  if (out.size() == 0) return;
  // Inputs of another dtype than their loop's are converted first (NumPy buffers them the same way), as
  // is a result of another dtype than out's.
  const bool conversion = op == Ufunc::Copy && !custom;
  std::vector<Array> converted;
  converted.reserve(count + 1);
  const Layout* layouts[kMaxOperands] = {};
  char* base[kMaxOperands] = {};
  alignas(16) unsigned char scalars[kMaxOperands][16];
  const Array* result = &out;
  if (!conversion && out.dtype() != r.result) {
    converted.push_back(Array::empty(out.shape(), r.result, kCpuDevice));
    result = &converted.back();
  }
  layouts[0] = &result->layout();
  base[0] = host_pointer(*result);
  for (int i = 0; i < count; ++i) {
    const Operand& in = inputs[i];
    if (!in.array) {
      scalar_bytes(in.scalar, r.loop[i], scalars[i + 1]);
      base[i + 1] = reinterpret_cast<char*>(scalars[i + 1]);
      continue;
    }
    const Array* source = in.array;
    if (!conversion && source->dtype() != r.loop[i]) {
      converted.push_back(astype(*source, r.loop[i]));
      source = &converted.back();
    }
    layouts[i + 1] = &source->layout();
    base[i + 1] = host_pointer(*source);
  }
  const DType from = inputs[0].array ? inputs[0].array->dtype() : r.loop[0];
  const CpuLoop loop = custom       ? custom->cpu_loop
                       : conversion ? kCasts[static_cast<int>(from)][static_cast<int>(out.dtype())]
                                    : kLoops[static_cast<int>(op)][static_cast<int>(r.loop[count - 1])];
  if (!loop) throw BadArgument(std::string("no CPU loop for jiasu.") + info(op).name);  // the type rules prevent it
  run_loop(make_iteration(out.shape(), layouts, count + 1), base, loop);
  if (result != &out) assign(out, *result);
}

}  // namespace jiasu::ops::detail
