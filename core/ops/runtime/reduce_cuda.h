// The CUDA kernels of jiasu's reductions, instantiated per (operation, types, case) by generated sources
// (ops/reduce_cuda.cpp) and compiled by NVRTC; embedded in the core as reduce_cuda. The accumulator
// operations are those of ops/runtime/reduce.h, which the CPU backend uses too.
//   rows_kernel     Rows with one run per result: the blocks of a run take its tiles in turn, with 16-byte
//                   loads, several
//                   accumulators per thread, then warp shuffles and shared memory. A run shared by several
//                   blocks (a full reduction, or few long rows) is finished in the same launch by the last
//                   of its blocks to arrive, which combines the blocks' partials in a fixed order
//                   (deterministic).
//   runs_kernel     Rows with several runs per result (an outer reduced dimension beside the contiguous one):
//                   the same, the runs dealt out to groups of blocks.
//   columns_kernel  Columns: a block per tile of 32 x kVector neighbouring results (a thread reads kVector
//                   neighbouring elements of a row in one load, up to 16 bytes, where the host found them
//                   aligned) times 8 groups of rows, 4 loads in flight per thread; a reduced dimension split
//                   between blocks is finished by the last of them, as for rows.
//   strided_kernel  Strided: a thread per result.
//   cumsum_kernel   a thread per kept position, summing along the reduced dimensions in C order.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "ops/runtime/reduce.h"

namespace jiasu {
namespace reduce {

template <typename A, typename B> struct same_kind { static constexpr bool value = false; };
template <typename A> struct same_kind<A, A> { static constexpr bool value = true; };

template <typename T> __device__ __forceinline__ T element_value(T x) { return x; }
__device__ __forceinline__ float element_value(__half x) { return __half2float(x); }
__device__ __forceinline__ float element_value(__nv_bfloat16 x) { return __bfloat162float(x); }

// An element as accumulator type A (bool: not zero).
template <typename A, typename T> __device__ __forceinline__ A widen(T x) {
  const auto v = element_value(x);
  if constexpr (same_kind<A, bool>::value) return v != decltype(v)(0);
  else return static_cast<A>(v);
}

template <typename Out, typename V> __device__ __forceinline__ Out narrow(V v) {
  if constexpr (same_kind<Out, __half>::value) return __float2half_rn(static_cast<float>(v));
  else if constexpr (same_kind<Out, __nv_bfloat16>::value) return __float2bfloat16_rn(static_cast<float>(v));
  else if constexpr (same_kind<Out, bool>::value) return v != V(0);
  else return static_cast<Out>(v);
}

template <typename Op, typename A> using Value = decltype(Op::template identity<A>());

// The input byte offset of position `linear` of `walk` (and the result's, in out).
__device__ __forceinline__ long long walk_offset(const Walk& walk, long long linear, long long* out = nullptr) {
  long long in_offset = 0, out_offset = 0;
  for (int d = walk.ndim - 1; d >= 0; --d) {
    const long long i = linear % walk.size[d];
    linear /= walk.size[d];
    in_offset += i * walk.stride[d];
    out_offset += i * walk.out_stride[d];
  }
  if (out) *out = out_offset;
  return in_offset;
}

// The input byte offset of position `linear` of the walk's first `dims` dimensions.
__device__ __forceinline__ long long outer_offset(const Walk& walk, int dims, long long linear) {
  long long offset = 0;
  for (int d = dims - 1; d >= 0; --d) {
    offset += (linear % walk.size[d]) * walk.stride[d];
    linear /= walk.size[d];
  }
  return offset;
}

template <typename A> __device__ __forceinline__ A shuffle_down(A v, int delta) {
  if constexpr (same_kind<A, bool>::value) return __shfl_down_sync(0xffffffffu, int(v), delta) != 0;
  else return __shfl_down_sync(0xffffffffu, v, delta);
}
template <typename A> __device__ __forceinline__ Indexed<A> shuffle_down(Indexed<A> v, int delta) {
  return Indexed<A>{shuffle_down(v.value, delta), shuffle_down(v.index, delta)};
}

// The block's combined value, in thread 0 (every thread of the block must call it).
template <typename Op, typename V> __device__ __forceinline__ V block_combine(V v) {
  __shared__ V warps[32];
  for (int delta = 16; delta > 0; delta >>= 1) v = Op::combine(v, shuffle_down(v, delta));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // warps[] may still be read by an earlier call
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warp_count = (blockDim.x + 31) / 32;
    v = lane < warp_count ? warps[lane] : v;
    for (int delta = 16; delta > 0; delta >>= 1) {
      const V other = shuffle_down(v, delta);
      if (lane + delta < warp_count) v = Op::combine(v, other);
    }
  }
  return v;
}

template <typename Op, typename A, int kElem, typename In>
__device__ __forceinline__ Value<Op, A> element(In x, long long index, A mean) {
  A value = widen<A>(x);
  if constexpr (kElem == kSquaredDeviation) value = squared_deviation(value, mean);
  if constexpr (same_kind<Value<Op, A>, A>::value) return value;
  else return Value<Op, A>{value, index};
}

template <typename Out, int kFinish, typename V> __device__ __forceinline__ void store(char* out, V v, double divisor) {
  if constexpr (kFinish == kIndex) {
    *reinterpret_cast<Out*>(out) = narrow<Out>(v.index);
  } else if constexpr (kFinish == kDivide) {
    *reinterpret_cast<Out*>(out) = narrow<Out>(v / static_cast<V>(divisor));
  } else if constexpr (kFinish == kSqrtDivide) {
    *reinterpret_cast<Out*>(out) = narrow<Out>(sqrt(v / static_cast<V>(divisor)));
  } else {
    *reinterpret_cast<Out*>(out) = narrow<Out>(v);
  }
}

template <typename Op, typename In, typename A, typename Out, int kFinish, int kElem, bool kRuns>
__device__ void rows_walk(const KernelParams& p) {
  using V = Value<Op, A>;
  constexpr int kVector = 16 / sizeof(In) > 0 ? 16 / sizeof(In) : 1;
  constexpr int kUnroll = 4;  // vectors in flight per thread
  const long long result = blockIdx.x / p.blocks_per_result, part = blockIdx.x % p.blocks_per_result;
  long long out_offset;
  const long long in_offset = walk_offset(p.kept, result, &out_offset);
  const A mean = kElem == kSquaredDeviation ? reinterpret_cast<const A*>(p.means)[result] : A(0);
  // The runs: the innermost reduced dimension (contiguous), at the positions of the outer reduced ones. (No
  // copy of the walk: a thread's copy of it, dynamically indexed, would live in local memory and cost every
  // block more than its share of the reduction.)
  // rows_kernel (one run per result) compiles without the runs' loop, and keeps its registers.
  const int outer_dims = p.reduced.ndim > 0 ? p.reduced.ndim - 1 : 0;
  const long long inner = kRuns ? p.run_length : p.count, runs = kRuns ? p.runs : 1;
  // 32-bit: a grid has fewer than 2^31 blocks (64-bit divisions would cost registers, and so occupancy).
  const unsigned slices = kRuns ? static_cast<unsigned>(p.slices) : 1, block_part = static_cast<unsigned>(part);
  const long long slice = kRuns ? block_part % slices : part;
  const long long run_step = kRuns ? static_cast<unsigned>(p.blocks_per_result) / slices : 1;
  // The blocks of one run take its tiles (kUnroll vectors per thread) in turn, so that the blocks running at
  // one time read neighbouring memory; each block's share is fixed, so the result is deterministic.
  const long long parts = kRuns ? p.slices : p.blocks_per_result;
  V acc[kVector];
  for (int k = 0; k < kVector; ++k) acc[k] = Op::template identity<A>();
  for (long long r = kRuns ? block_part / slices : 0; r < runs; r += run_step) {
    const In* run =
        reinterpret_cast<const In*>(p.in + in_offset + (kRuns && r ? outer_offset(p.reduced, outer_dims, r) : 0));
    const long long first = r * inner;  // the run's first element in the reduced index (argmax's answer)
    if (reinterpret_cast<unsigned long long>(run) % 16 == 0) {
      struct alignas(16) Vector { In x[kVector]; };
      const long long span = static_cast<long long>(blockDim.x) * kVector;  // one vector per thread
      for (long long tile = slice * kUnroll * span; tile < inner; tile += parts * kUnroll * span) {
        const long long i = tile + threadIdx.x * kVector;
        if (tile + kUnroll * span <= inner) {
          Vector v[kUnroll];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) v[u] = *reinterpret_cast<const Vector*>(run + i + u * span);
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int k = 0; k < kVector; ++k)
              acc[k] = Op::combine(acc[k], element<Op, A, kElem>(v[u].x[k], first + i + u * span + k, mean));
        } else {  // the run's last tile
          for (int u = 0; u < kUnroll; ++u)
            for (int k = 0; k < kVector; ++k) {
              const long long j = i + u * span + k;
              if (j < inner) acc[k] = Op::combine(acc[k], element<Op, A, kElem>(run[j], first + j, mean));
            }
        }
      }
    } else {
      for (long long j = slice * blockDim.x + threadIdx.x; j < inner; j += parts * blockDim.x)
        acc[0] = Op::combine(acc[0], element<Op, A, kElem>(run[j], first + j, mean));
    }
  }
  V v = acc[0];
  for (int k = 1; k < kVector; ++k) v = Op::combine(v, acc[k]);
  v = block_combine<Op>(v);
  char* out = reinterpret_cast<char*>(p.out) + out_offset;
  if (p.blocks_per_result == 1) {
    if (threadIdx.x == 0) store<Out, kFinish>(out, v, p.divisor);
    return;
  }
  // Several blocks per result: the last to finish combines their partials, in block order.
  V* partials = reinterpret_cast<V*>(p.partials) + result * p.blocks_per_result;
  unsigned* counter = reinterpret_cast<unsigned*>(p.counters) + result;
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[part] = v;
    __threadfence();
    last = atomicAdd(counter, 1u) == p.blocks_per_result - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  V total = Op::template identity<A>();
  for (long long b = threadIdx.x; b < p.blocks_per_result; b += blockDim.x)
    total = Op::combine(total, partials[b]);
  total = block_combine<Op>(total);
  if (threadIdx.x == 0) {
    store<Out, kFinish>(out, total, p.divisor);
    *counter = 0;  // ready for the next launch
  }
}

template <typename Op, typename In, typename A, typename Out, int kFinish, int kElem>
__device__ void rows_kernel(const KernelParams& p) {
  rows_walk<Op, In, A, Out, kFinish, kElem, false>(p);
}

template <typename Op, typename In, typename A, typename Out, int kFinish, int kElem>
__device__ void runs_kernel(const KernelParams& p) {
  rows_walk<Op, In, A, Out, kFinish, kElem, true>(p);
}

template <typename Op, typename In, typename A, typename Out, int kFinish, int kElem, int kVector>
__device__ void columns_kernel(const KernelParams& p) {
  using V = Value<Op, A>;
  constexpr int kLanes = 32, kGroups = 8, kUnroll = 4;  // blockDim.x == kLanes * kGroups
  constexpr int kWidth = kLanes * kVector;              // the columns of a tile
  static_assert(sizeof(V) * kGroups * kWidth <= 16384, "the host keeps the tile's shared memory within 16 KiB");
  struct alignas(sizeof(In) * kVector) Vector { In x[kVector]; };
  const long long inner = p.kept.size[p.kept.ndim - 1];
  const long long out_step = p.kept.out_stride[p.kept.ndim - 1];
  const long long tiles_per_row = (inner + kWidth - 1) / kWidth;
  // Part-major: the blocks running at one time take neighbouring tiles of the same rows.
  const long long tiles = gridDim.x / p.blocks_per_result;
  const long long tile = blockIdx.x % tiles, part = blockIdx.x / tiles;
  const int lane = threadIdx.x % kLanes, group = threadIdx.x / kLanes;
  // This thread's kVector neighbouring columns (inner is a multiple of kVector: all or none are there).
  const long long column = (tile % tiles_per_row) * kWidth + lane * kVector;
  const long long result = (tile / tiles_per_row) * inner + column;
  const bool active = column < inner;
  long long out_offset = 0;
  const char* base = reinterpret_cast<const char*>(p.in) + (active ? walk_offset(p.kept, result, &out_offset) : 0);
  const long long stride = p.reduced.stride[0];
  A mean[kVector];
  for (int k = 0; k < kVector; ++k)
    mean[k] = kElem == kSquaredDeviation && active ? reinterpret_cast<const A*>(p.means)[result + k] : A(0);
  const long long begin = part * p.chunk, end = begin + p.chunk < p.count ? begin + p.chunk : p.count;

  V acc[kVector];
  for (int k = 0; k < kVector; ++k) acc[k] = Op::template identity<A>();
  if (active) {
    long long r = begin + group;
    for (; r + (kUnroll - 1) * kGroups < end; r += kUnroll * kGroups) {
      Vector x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) x[u] = *reinterpret_cast<const Vector*>(base + (r + u * kGroups) * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kVector; ++k)
          acc[k] = Op::combine(acc[k], element<Op, A, kElem>(x[u].x[k], r + u * kGroups, mean[k]));
    }
    for (; r < end; r += kGroups) {
      const Vector x = *reinterpret_cast<const Vector*>(base + r * stride);
#pragma unroll
      for (int k = 0; k < kVector; ++k) acc[k] = Op::combine(acc[k], element<Op, A, kElem>(x.x[k], r, mean[k]));
    }
  }
  __shared__ V groups[kGroups][kWidth];  // [g][k * kLanes + lane]: a warp's stores fall in distinct banks
  for (int k = 0; k < kVector; ++k) groups[group][k * kLanes + lane] = acc[k];
  __syncthreads();
  if (group == 0)
    for (int k = 0; k < kVector; ++k)
      for (int g = 1; g < kGroups; ++g) acc[k] = Op::combine(acc[k], groups[g][k * kLanes + lane]);
  char* out = reinterpret_cast<char*>(p.out) + out_offset;
  if (p.blocks_per_result == 1) {
    if (group == 0 && active)
      for (int k = 0; k < kVector; ++k) store<Out, kFinish>(out + k * out_step, acc[k], p.divisor);
    return;
  }
  V* partials = reinterpret_cast<V*>(p.partials) + tile * p.blocks_per_result * kWidth + lane * kVector;
  unsigned* counter = reinterpret_cast<unsigned*>(p.counters) + tile;
  __shared__ bool last;
  if (group == 0)
    for (int k = 0; k < kVector; ++k) partials[part * kWidth + k] = acc[k];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == p.blocks_per_result - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (group == 0) {
    for (int k = 0; k < kVector; ++k) {
      V total = partials[k];
      for (long long b = 1; b < p.blocks_per_result; ++b) total = Op::combine(total, partials[b * kWidth + k]);
      if (active) store<Out, kFinish>(out + k * out_step, total, p.divisor);
    }
    if (lane == 0) *counter = 0;  // ready for the next launch
  }
}

template <typename Op, typename In, typename A, typename Out, int kFinish, int kElem>
__device__ void strided_kernel(const KernelParams& p) {
  using V = Value<Op, A>;
  for (long long result = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; result < p.results;
       result += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long out_offset;
    const char* base = reinterpret_cast<const char*>(p.in) + walk_offset(p.kept, result, &out_offset);
    const A mean = kElem == kSquaredDeviation ? reinterpret_cast<const A*>(p.means)[result] : A(0);
    const int inner_dim = p.reduced.ndim - 1;
    const long long inner = inner_dim >= 0 ? p.reduced.size[inner_dim] : 1;
    const long long inner_stride = inner_dim >= 0 ? p.reduced.stride[inner_dim] : 0;
    V acc = Op::template identity<A>();
    for (long long run = 0; run * inner < p.count; ++run) {
      long long offset = 0, linear = run;
      for (int d = inner_dim - 1; d >= 0; --d) {
        offset += (linear % p.reduced.size[d]) * p.reduced.stride[d];
        linear /= p.reduced.size[d];
      }
      const char* row = base + offset;
      for (long long j = 0; j < inner; ++j)
        acc = Op::combine(acc, element<Op, A, kElem>(*reinterpret_cast<const In*>(row + j * inner_stride),
                                                     run * inner + j, mean));
    }
    store<Out, kFinish>(reinterpret_cast<char*>(p.out) + out_offset, acc, p.divisor);
  }
}

template <typename In, typename A, typename Out>
__device__ void cumsum_kernel(const KernelParams& p) {
  for (long long result = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; result < p.results;
       result += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long out_base;
    const long long in_base = walk_offset(p.kept, result, &out_base);
    A acc = A(0);
    for (long long i = 0; i < p.count; ++i) {
      long long out_at;
      const long long in_at = in_base + walk_offset(p.reduced, i, &out_at);
      acc += widen<A>(*reinterpret_cast<const In*>(reinterpret_cast<const char*>(p.in) + in_at));
      *reinterpret_cast<Out*>(reinterpret_cast<char*>(p.out) + out_base + out_at) = narrow<Out>(acc);
    }
  }
}

}  // namespace reduce
}  // namespace jiasu
