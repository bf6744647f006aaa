// The CPU backend's reduction loops, instantiated by reduce_cpu_part.cpp for each part of the input dtypes.
// Loops over the planned walk (ops/reduce.hpp), combining elements with the accumulator operations of
// ops/runtime/reduce.h, on a pool of threads for large inputs.
//   Rows and Strided: each result reduces its elements pairwise (NumPy's scheme: runs of up to 128 with
//     8 accumulators, halves above that), so float sums keep NumPy's accuracy; few results with many
//     elements each split their outermost reduced dimension between threads.
//   Columns: a tile of neighbouring results is accumulated together, one input row at a time, so every
//     load is contiguous (NumPy's order for axis=0 of a C array); few tiles split their rows between threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "ops/reduce.hpp"
#include "ops/reduce_elements.hpp"
#include "ops/runtime/reduce.h"
#include "support/work_pool.hpp"

namespace jiasu::ops::cpu_reduce {

using reduce::Indexed;

WorkPool& reduce_pool();  // the threads of every reduction (reduce_cpu.cpp)

// Every reduction (and cumsum) of the input dtypes of one part (reduce_cpu_part.cpp, compiled once per part).
template <int Part> void reduce_part(const ReduceLaunch& launch);
template <int Part> void cumsum_part(const ReduceLaunch& launch);

constexpr int64_t kParallelElements = 1 << 16;  // below this one thread does it all
constexpr int64_t kColumnTile = 1024;    // results a column tile accumulates at most
constexpr int64_t kMinColumnRows = 256;  // rows of a column tile's part, when rows are split

template <typename Op, typename A> using Value = decltype(Op::template identity<A>());

template <typename Op, typename A> Value<Op, A> identity() { return Op::template identity<A>(); }

// Combines run(begin, count) over the runs of at most 128 elements that halving [first, first + n) gives
// (each first half a multiple of 8), pairwise: NumPy's grouping. The first half is done before the second
// explicitly, not left to argument order (GCC evaluates right to left): a walk backwards through memory
// escapes the hardware prefetchers and halves the bandwidth from DRAM.
template <typename Op, typename V, typename Run>
V pairwise_runs(const Run& run, int64_t first, int64_t n) {
  if (n <= 128) return run(first, n);
  int64_t half = n / 2;
  half -= half % 8;
  const V low = pairwise_runs<Op, V>(run, first, half);
  return Op::combine(low, pairwise_runs<Op, V>(run, first + half, n - half));
}

// Elements [first, first + n) through get(i), pairwise, each run with 8 accumulators.
template <typename Op, typename A, typename Get>
Value<Op, A> pairwise(const Get& get, int64_t first, int64_t n) {
  using V = Value<Op, A>;
  const auto run = [&get](int64_t begin, int64_t count) {
    V r[8];
    for (V& x : r) x = identity<Op, A>();
    int64_t i = 0;
    for (; i + 8 <= count; i += 8)
      for (int k = 0; k < 8; ++k) r[k] = Op::combine(r[k], get(begin + i + k));
    V s = Op::combine(Op::combine(Op::combine(r[0], r[1]), Op::combine(r[2], r[3])),
                      Op::combine(Op::combine(r[4], r[5]), Op::combine(r[6], r[7])));
    for (; i < count; ++i) s = Op::combine(s, get(begin + i));
    return s;
  };
  return pairwise_runs<Op, V>(run, first, n);
}

// Sums, products, max and min of contiguous floats of the accumulator type keep pairwise()'s 8
// accumulators in one vector (GCC's vector extension, which clang reads too): the same operations on the
// same elements in the same order, in SIMD.
template <typename A> struct lanes_of;
// 16-byte vectors, which every x86-64 CPU has: wider ones are split, and their conditions done lane by lane.
template <> struct lanes_of<float> { typedef float type __attribute__((vector_size(16))); };
template <> struct lanes_of<double> { typedef double type __attribute__((vector_size(16))); };
template <typename Op, typename A>
constexpr bool kLaneOp = (std::is_same_v<Op, reduce::Sum> || std::is_same_v<Op, reduce::Prod> ||
                          std::is_same_v<Op, reduce::Max> || std::is_same_v<Op, reduce::Min>) &&
                         std::is_floating_point_v<A>;

// Op::combine lane by lane (vector conditions need | where the scalar code has ||).
template <typename Op, typename L> L combine_lanes(L a, L b) {
  if constexpr (std::is_same_v<Op, reduce::Max>) return ((a != a) | (a >= b)) ? a : b;
  else if constexpr (std::is_same_v<Op, reduce::Min>) return ((a != a) | (a <= b)) ? a : b;
  else return Op::combine(a, b);
}

template <typename Op, typename A>
A pairwise_lanes(const A* x, int64_t n) {
  const auto run = [x](int64_t begin, int64_t count) {
    using Lanes = typename lanes_of<A>::type;
    constexpr int kWidth = sizeof(Lanes) / sizeof(A), kVectors = 8 / kWidth;
    const A* p = x + begin;
    Lanes r[kVectors];  // accumulator k is lane k % kWidth of r[k / kWidth]
    for (Lanes& v : r)
      for (int k = 0; k < kWidth; ++k) v[k] = identity<Op, A>();
    int64_t i = 0;
    for (; i + 8 <= count; i += 8)
      for (int k = 0; k < kVectors; ++k) {
        Lanes v;
        std::memcpy(&v, p + i + k * kWidth, sizeof v);
        r[k] = combine_lanes<Op>(r[k], v);
      }
    A a[8];
    for (int k = 0; k < 8; ++k) a[k] = r[k / kWidth][k % kWidth];
    A s = Op::combine(Op::combine(Op::combine(a[0], a[1]), Op::combine(a[2], a[3])),
                      Op::combine(Op::combine(a[4], a[5]), Op::combine(a[6], a[7])));
    for (; i < count; ++i) s = Op::combine(s, p[i]);
    return s;
  };
  return pairwise_runs<Op, A>(run, 0, n);
}

template <typename Op> struct extreme_of;  // the value operation of argmax and argmin
template <> struct extreme_of<reduce::ArgMax> { using type = reduce::Max; };
template <> struct extreme_of<reduce::ArgMin> { using type = reduce::Min; };
template <typename Op, typename A>
constexpr bool kArgLaneOp = (std::is_same_v<Op, reduce::ArgMax> || std::is_same_v<Op, reduce::ArgMin>) &&
                            std::is_floating_point_v<A>;

// The index of the first of x[0..n) for which hit() holds, which one does: looked for 64 elements at a time,
// in a loop the compiler vectorises.
template <typename A, typename Hit> int64_t first_hit(const A* x, int64_t n, const Hit& hit) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    int any = 0;
    for (int k = 0; k < 64; ++k) any |= hit(x[i + k]);
    if (any) break;
  }
  while (!hit(x[i])) ++i;
  return i;
}

// argmax or argmin of n >= 1 contiguous floats whose first has index `first`: the extreme by pairwise_lanes
// (SIMD), then the first element equal to it, or the first NaN when it is NaN (NumPy's first occurrence;
// -0.0 and 0.0 are equal, as for NumPy). Two fast passes, the second stopping early, instead of one slow
// pass of (value, index) pairs.
template <typename Op, typename A>
Indexed<A> arg_lanes(const A* x, int64_t n, int64_t first) {
  const A m = pairwise_lanes<typename extreme_of<Op>::type, A>(x, n);
  const int64_t i = m != m ? first_hit(x, n, [](A v) { return v != v; }) : first_hit(x, n, [m](A v) { return v == m; });
  return Indexed<A>{m, first + i};
}

// The input byte offset (and the result's, in out_offset) of kept position `o`.
inline int64_t kept_offset(const std::vector<ReduceDim>& kept, int64_t o, int64_t* out_offset = nullptr) {
  int64_t in = 0, out = 0;
  for (size_t d = kept.size(); d-- > 0;) {
    const int64_t i = o % kept[d].size;
    o /= kept[d].size;
    in += i * kept[d].stride;
    out += i * kept[d].out_stride;
  }
  if (out_offset) *out_offset = out;
  return in;
}

// One result's elements whose outermost reduced index lies in [begin0, end0); elem(ptr, index) gives an
// element's value from its address and its C-order index over the reduced dimensions.
// kDirect: the elements are the accumulator type itself, loaded as they are (for argmax and argmin too).
template <typename Op, typename A, int64_t kItem, bool kDirect, typename Elem>
Value<Op, A> reduce_span(const char* p, const std::vector<ReduceDim>& dims, int64_t begin0, int64_t end0,
                         const Elem& elem) {
  if (dims.empty()) return elem(p, 0);
  const ReduceDim& inner = dims.back();
  if (dims.size() == 1) {
    if constexpr (kDirect && kLaneOp<Op, A>)
      if (inner.stride == kItem) return pairwise_lanes<Op, A>(reinterpret_cast<const A*>(p) + begin0, end0 - begin0);
    if constexpr (kDirect && kArgLaneOp<Op, A>)
      if (inner.stride == kItem) return arg_lanes<Op, A>(reinterpret_cast<const A*>(p) + begin0, end0 - begin0, begin0);
    if (inner.stride == kItem)  // a compile-time stride: the loads vectorise
      return pairwise<Op, A>([&](int64_t i) { return elem(p + i * kItem, i); }, begin0, end0 - begin0);
    return pairwise<Op, A>([&](int64_t i) { return elem(p + i * inner.stride, i); }, begin0, end0 - begin0);
  }
  int64_t per_outer0 = 1;  // runs per index of the outermost dimension
  for (size_t d = 1; d + 1 < dims.size(); ++d) per_outer0 *= dims[d].size;
  Value<Op, A> acc = identity<Op, A>();
  for (int64_t run = begin0 * per_outer0; run < end0 * per_outer0; ++run) {
    int64_t offset = 0;
    for (size_t d = dims.size() - 1, rest = run; d-- > 0;) {
      offset += static_cast<int64_t>(rest % dims[d].size) * dims[d].stride;
      rest /= dims[d].size;
    }
    const char* row = p + offset;
    const int64_t base = run * inner.size;
    if constexpr (kDirect && kLaneOp<Op, A>) {
      if (inner.stride == kItem) {
        acc = Op::combine(acc, pairwise_lanes<Op, A>(reinterpret_cast<const A*>(row), inner.size));
        continue;
      }
    }
    if constexpr (kDirect && kArgLaneOp<Op, A>) {
      if (inner.stride == kItem) {
        acc = Op::combine(acc, arg_lanes<Op, A>(reinterpret_cast<const A*>(row), inner.size, base));
        continue;
      }
    }
    if (inner.stride == kItem)
      acc = Op::combine(acc, pairwise<Op, A>([&](int64_t i) { return elem(row + i * kItem, base + i); }, 0, inner.size));
    else
      acc = Op::combine(acc, pairwise<Op, A>([&](int64_t i) { return elem(row + i * inner.stride, base + i); }, 0,
                                             inner.size));
  }
  return acc;
}

// Every result of `plan` into results[o] (kept positions in order). elem(ptr, reduced index, result index).
template <typename Op, typename A, int64_t kItem, bool kDirect, typename Elem>
void reduce_all(const ReducePlan& plan, const char* in, Value<Op, A>* results, const Elem& elem) {
  using V = Value<Op, A>;
  WorkPool& pool = reduce_pool();
  const int64_t threads = pool.threads();
  const int64_t elements = plan.kept_count * plan.reduced_count;
  const std::vector<ReduceDim>& kept = plan.kept;
  const std::vector<ReduceDim>& dims = plan.reduced;
  if (plan.reduced_count == 0) {
    for (int64_t o = 0; o < plan.kept_count; ++o) results[o] = identity<Op, A>();
    return;
  }

  if (plan.kind == ReduceCase::Columns) {
    const ReduceDim& inner = kept.back();
    const ReduceDim& along = dims[0];
    // A tile reads at most 4 KiB of each row (within a page, which the hardware prefetchers follow); when
    // the tiles alone would leave threads idle, the rows are split between tasks too, each part's results
    // combined afterwards in row order.
    constexpr int64_t kTile = 4096 / kItem < kColumnTile ? 4096 / kItem : kColumnTile;
    const int64_t tiles_per_row = (inner.size + kTile - 1) / kTile;
    const int64_t tiles = plan.kept_count / inner.size * tiles_per_row;
    int64_t per_part = along.size;
    if (elements >= kParallelElements && tiles < threads * 4) {
      const int64_t wanted = (threads * 4 + tiles - 1) / tiles;  // parts that keep every thread busy
      per_part = std::max((along.size + wanted - 1) / wanted, kMinColumnRows);
    }
    const int64_t parts = (along.size + per_part - 1) / per_part;
    std::unique_ptr<V[]> partial(parts > 1 ? new V[plan.kept_count * parts] : nullptr);
    auto tile_task = [&](size_t task) {
      const int64_t t = static_cast<int64_t>(task) % tiles, part = static_cast<int64_t>(task) / tiles;
      const int64_t row = t / tiles_per_row;
      const int64_t j0 = t % tiles_per_row * kTile;
      const int64_t width = inner.size - j0 < kTile ? inner.size - j0 : kTile;
      const int64_t first = row * inner.size + j0;  // the tile's first result
      const int64_t begin = part * per_part, end = begin + per_part < along.size ? begin + per_part : along.size;
      const char* p = in + kept_offset(kept, first);
      V acc[kTile];
      for (int64_t j = 0; j < width; ++j) acc[j] = identity<Op, A>();
      for (int64_t r = begin; r < end; ++r) {
        const char* line = p + r * along.stride;
        for (int64_t j = 0; j < width; ++j) acc[j] = Op::combine(acc[j], elem(line + j * kItem, r, first + j));
      }
      V* into = parts > 1 ? partial.get() + part * plan.kept_count : results;
      std::memcpy(static_cast<void*>(into + first), acc, sizeof(V) * width);
    };
    if (elements < kParallelElements) {
      for (int64_t t = 0; t < tiles; ++t) tile_task(t);
    } else {
      pool.run(tiles * parts, tile_task);
    }
    if (parts > 1)
      for (int64_t o = 0; o < plan.kept_count; ++o) {
        V acc = partial[o];
        for (int64_t part = 1; part < parts; ++part) acc = Op::combine(acc, partial[part * plan.kept_count + o]);
        results[o] = acc;
      }
    return;
  }

  const int64_t outer = dims.empty() ? 1 : dims[0].size;
  if (elements < kParallelElements || plan.kept_count >= threads || outer < 2) {
    const int64_t tasks = elements < kParallelElements ? 1 : threads * 8 < plan.kept_count ? threads * 8 : plan.kept_count;
    const int64_t per_task = (plan.kept_count + tasks - 1) / tasks;
    pool.run(tasks, [&](size_t t) {
      const int64_t first = static_cast<int64_t>(t) * per_task;
      const int64_t end = first + per_task < plan.kept_count ? first + per_task : plan.kept_count;
      for (int64_t o = first; o < end; ++o)
        results[o] = reduce_span<Op, A, kItem, kDirect>(in + kept_offset(kept, o), dims, 0, outer,
                                        [&](const char* x, int64_t i) { return elem(x, i, o); });
    });
    return;
  }
  // Few results, many elements each: the outermost reduced dimension is split into chunks.
  int64_t chunks = (threads * 4 + plan.kept_count - 1) / plan.kept_count;
  if (chunks > outer) chunks = outer;
  const int64_t per_chunk = (outer + chunks - 1) / chunks;
  std::unique_ptr<V[]> partial(new V[plan.kept_count * chunks]);
  pool.run(plan.kept_count * chunks, [&](size_t t) {
    const int64_t o = static_cast<int64_t>(t) / chunks, c = static_cast<int64_t>(t) % chunks;
    const int64_t begin = c * per_chunk, end = begin + per_chunk < outer ? begin + per_chunk : outer;
    partial[t] = begin < end ? reduce_span<Op, A, kItem, kDirect>(in + kept_offset(kept, o), dims, begin, end,
                                                  [&](const char* x, int64_t i) { return elem(x, i, o); })
                             : identity<Op, A>();
  });
  for (int64_t o = 0; o < plan.kept_count; ++o) {
    V acc = partial[o * chunks];
    for (int64_t c = 1; c < chunks; ++c) acc = Op::combine(acc, partial[o * chunks + c]);
    results[o] = acc;
  }
}

// Stores a value of type V at an address as the output dtype. Chosen once per call, so that the loops are
// instantiated per accumulator type and not once more for each output dtype.
template <typename V> using StoreFn = void (*)(char*, V);
template <typename V> StoreFn<V> store_as(DType out_dtype) {
  StoreFn<V> store = nullptr;
  with_element_type(out_dtype, [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    store = [](char* at, V value) {
      const Out stored = narrow<Out>(value);
      std::memcpy(at, &stored, sizeof(Out));
    };
  });
  return store;
}

// Writes results[o], turned into the output type by finish(), at the kept positions of the result.
template <typename V, typename Finish>
void store_results(const ReduceLaunch& launch, const V* results, const Finish& finish) {
  const auto store = store_as<decltype(finish(results[0]))>(launch.out_dtype);
  char* out = static_cast<char*>(launch.out_data);
  for (int64_t o = 0; o < launch.plan->kept_count; ++o) {
    int64_t offset;
    kept_offset(launch.plan->kept, o, &offset);
    store(out + offset, finish(results[o]));
  }
}

template <typename Op, typename In, typename A>
void reduce_values(const ReduceLaunch& launch) {
  std::unique_ptr<Value<Op, A>[]> results(new Value<Op, A>[launch.plan->kept_count]);
  const char* in = static_cast<const char*>(launch.in_data);
  if constexpr (std::is_same_v<Value<Op, A>, A>) {
    reduce_all<Op, A, sizeof(In), std::is_same_v<In, A>>(
        *launch.plan, in, results.get(), [](const char* x, int64_t, int64_t) { return widen<A>(load<In>(x)); });
    store_results(launch, results.get(), [](A v) { return v; });
  } else {
    const auto elem = [](const char* x, int64_t i, int64_t) { return Indexed<A>{widen<A>(load<In>(x)), i}; };
    reduce_all<Op, A, sizeof(In), std::is_same_v<In, A>>(*launch.plan, in, results.get(), elem);
    store_results(launch, results.get(), [](Indexed<A> v) { return v.index; });
  }
}

}  // namespace jiasu::ops::cpu_reduce
