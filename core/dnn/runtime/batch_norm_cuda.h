// The GPU kernels of jiasu.nn's batch normalisation, instantiated per (dtype, pass, layout, pack width, index
// type) by generated sources (dnn/batch_norm_cuda.cpp) and compiled by NVRTC; embedded in the core as
// batch_norm_cuda. Arithmetic in float (double for double); sums in double beyond a few elements (Sums).
//
// Two layouts. Planes: x is (N, C, S) C-contiguous with S > 1 (NCHW of any rank), read in packs of V elements
// (16 bytes) when S and the addresses allow. Rows: (R, C) with the channels contiguous (channels-last 4-D with
// R = N * H * W, or S = 1); a thread keeps to fixed channels, so no element needs a division to find its own.
//   inference_*    one elementwise pass: y = (x - running_mean) / sqrt(running_var + eps) * weight + bias;
//   cooperative_*  training and backward: every block is resident (a cooperative launch), so that blocks can
//                  wait for each other at a grid-wide barrier and x is read from DRAM once. Planes walk the
//                  channels in groups whose data fits L2: phase 1, each block sums its share of one channel
//                  into a zeroed per-channel accumulator (double atomics); the group's barrier; phase 2, the
//                  block re-reads the same share, now in L2, and writes the output. Rows make one group of all
//                  channels.
// Training sums x shifted by the channel's first element (a large mean then does not cancel the variance
// away), normalises by the biased variance and writes saved_mean, saved_invstd and the running statistics
// (unbiased variance). Backward sums dy and dy * (x - mean), then writes
// dx = weight * invstd * (dy - sum(dy) / M - x_hat * sum(dy * x_hat) / M), grad_weight and grad_bias.
#pragma once

#include "dnn/runtime/float_convert.h"
#include "dnn/runtime/batch_norm_params.h"
#include "emit/runtime/grid_barrier.h"

namespace jiasu {
namespace batch_norm {

__device__ __forceinline__ float square_root(float v) { return sqrtf(v); }
__device__ __forceinline__ double square_root(double v) { return sqrt(v); }

// V elements moved at once: one 16-byte access when V * sizeof(T) is 16.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Element c of a per-channel vector, whatever its dtype.
__device__ __forceinline__ double vector_at(const Vector& v, long long c) {
  const char* at = reinterpret_cast<const char*>(v.data) + c * v.stride;
  switch (v.type) {
    case kFloat16: return __half2float(*reinterpret_cast<const __half*>(at));
    case kBFloat16: return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(at));
    case kFloat32: return *reinterpret_cast<const float*>(at);
    default: return *reinterpret_cast<const double*>(at);
  }
}

__device__ __forceinline__ void set_vector(const Vector& v, long long c, double value) {
  char* at = reinterpret_cast<char*>(v.data) + c * v.stride;
  switch (v.type) {
    case kFloat16: *reinterpret_cast<__half*>(at) = __float2half_rn(static_cast<float>(value)); break;
    case kBFloat16: *reinterpret_cast<__nv_bfloat16*>(at) = __float2bfloat16_rn(static_cast<float>(value)); break;
    case kFloat32: *reinterpret_cast<float*>(at) = static_cast<float>(value); break;
    default: *reinterpret_cast<double*>(at) = value;
  }
}

// ---- Walks: a thread's units (packs) in order, blockDim (planes) or `slots` rows (rows) apart, each position
// found from the last by additions only. `u` counts the units, `off` is the unit's offset in the array.

// The units of one channel in planes: unit u = n * su + s of the channel's N planes of su units each lies at
// (n * C + c) * su + s. A step of blockDim = q * su + r units adds r to s, carrying into n.
template <typename I>
struct PlaneWalk {
  I u, off, s;
  I su, step, step_s, step_off, carry_off;
  __device__ __forceinline__ void next() {
    u += step, s += step_s, off += step_off;
    if (s >= su) s -= su, off += carry_off;
  }
};

template <typename I>
__device__ __forceinline__ PlaneWalk<I> plane_walk(I first, I c, I C, I su) {
  const I step = blockDim.x, q = step / su, r = step % su, n = first / su, s = first - n * su;
  return {first, (n * C + c) * su + s, s, su, step, r, q * C * su + r, (C - 1) * su};
}

// Every unit of planes with its channel: unit u lies in plane u / su, of channel (u / su) % C.
template <typename I>
struct ArrayWalk {
  I u, off, s, c;
  I su, channels, step, step_s, step_c;
  __device__ __forceinline__ void next() {
    u += step, off += step, s += step_s, c += step_c;
    if (s >= su) s -= su, ++c;
    if (c >= channels) c -= channels;  // c + step_c + 1 < 2 * channels
  }
};

template <typename I>
__device__ __forceinline__ ArrayWalk<I> array_walk(I first, I C, I su) {
  const I step = blockDim.x, plane = first / su;
  return {first, first, first - plane * su, plane % C, su, C, step, step % su, (step / su) % C};
}

// Rows: channel c of every `step`-th row from u.
template <typename I>
struct RowWalk {
  I u, off, step, step_off;
  __device__ __forceinline__ void next() { u += step, off += step_off; }
};

// The block's rows [begin, end) (a contiguous share) and the thread's place: `slots` rows at a time, `width`
// channels each; the thread takes channel `lane` + k * width of row slot + j * slots (threads past
// slots * width idle).
template <typename I>
struct RowShare {
  I width, slots, slot, lane, begin, end, rounds;
  bool active;
};

template <typename I>
__device__ __forceinline__ RowShare<I> row_share(const Params& p) {
  RowShare<I> g;
  const I C = static_cast<I>(p.c), threads = blockDim.x, thread = threadIdx.x;
  g.width = min(C, threads);
  g.slots = threads / g.width;
  g.slot = thread / g.width;
  g.lane = thread - g.slot * g.width;
  g.active = g.slot < g.slots;
  g.begin = static_cast<I>(p.n * blockIdx.x / gridDim.x);
  g.end = static_cast<I>(p.n * (blockIdx.x + 1) / gridDim.x);
  g.rounds = (C + g.width - 1) / g.width;
  return g;
}

template <typename I>
__device__ __forceinline__ RowWalk<I> row_walk(const RowShare<I>& g, I c, I C) {
  const I row = g.begin + g.slot;
  return {row, row * C + c, g.slots, g.slots * C};
}

// Calls use(units, position) for each unit of the walk below `end`, loading kUnroll of them before using any, and
// batch_done() after each such batch.
template <typename I, typename Walk, typename Load, typename Use, typename Done>
__device__ __forceinline__ void walk(Walk w, I end, const Load& load, const Use& use, const Done& batch_done) {
  while (w.u < end) {
    Walk at[kUnroll];
    decltype(load(w.off)) got[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      at[k] = w;
      if (w.u < end) got[k] = load(w.off);
      w.next();
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      if (at[k].u < end) use(got[k], at[k]);
    batch_done();
  }
}

template <typename I, typename Walk, typename Load, typename Use>
__device__ __forceinline__ void walk(Walk w, I end, const Load& load, const Use& use) {
  walk(w, end, load, use, [] {});
}

// A thread's sums: each batch of units is summed in A (float for 16- and 32-bit inputs, cheap), and the batch
// sums in double, so that a long walk loses no accuracy.
template <typename A>
struct Sums {
  A batch1 = 0, batch2 = 0;
  double s1 = 0, s2 = 0;
  __device__ __forceinline__ void batch_done() {
    s1 += batch1, s2 += batch2;
    batch1 = batch2 = 0;
  }
};

// ---- Reductions (the grid barrier between the phases is emit/runtime/grid_barrier.h).

template <typename A> __device__ __forceinline__ A warp_sum(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The block's totals of s1 and s2, in thread 0.
template <typename A>
__device__ __forceinline__ void block_sum(A& s1, A& s2) {
  __shared__ A firsts[32], seconds[32];
  s1 = warp_sum(s1);
  s2 = warp_sum(s2);
  if (threadIdx.x % 32 == 0) firsts[threadIdx.x / 32] = s1, seconds[threadIdx.x / 32] = s2;
  __syncthreads();
  if (threadIdx.x == 0)
    for (unsigned w = 1; w < blockDim.x / 32; ++w) s1 += firsts[w], s2 += seconds[w];
}

// Rows: the totals over the slots of each lane's s1 and s2, in the threads of slot 0.
template <typename A>
__device__ __forceinline__ void slot_sum(A& s1, A& s2, int width, int slots) {
  __shared__ A firsts[kBlock], seconds[kBlock];
  firsts[threadIdx.x] = s1, seconds[threadIdx.x] = s2;
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < width)
    for (int k = 1; k < slots; ++k) s1 += firsts[k * width + threadIdx.x], s2 += seconds[k * width + threadIdx.x];
  __syncthreads();  // before the next round writes the arrays again
}

// ---- The passes: what a kernel loads per unit, sums per channel, and writes from the channel's coefficients.

template <typename T, typename A_, int V_>
struct Training {
  using A = A_;
  static constexpr int V = V_;
  using Units = Pack<T, V>;
  struct Channel {
    A shift, weight, bias;
  };
  struct Coefficients {
    A mean, scale, bias;  // y = (x - mean) * scale + bias
  };
  const Params& p;

  template <typename I> __device__ __forceinline__ Units load(I off) const {
    return reinterpret_cast<const Units*>(p.x)[off];
  }
  // `first`: the element offset of the channel's first element.
  __device__ __forceinline__ Channel begin(long long c, long long first) const {
    return {to_acc<A>(reinterpret_cast<const T*>(p.x)[first]), p.weight.data ? A(vector_at(p.weight, c)) : A(1),
            p.bias.data ? A(vector_at(p.bias, c)) : A(0)};
  }
  // Adds a unit to a batch's sums (Sums).
  __device__ __forceinline__ void accumulate(const Channel& ch, const Units& x, A& s1, A& s2) const {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const A d = to_acc<A>(x.v[j]) - ch.shift;
      s1 += d;
      s2 += d * d;
    }
  }
  // From the channel's shifted sums over `count` elements; the one `writer` thread of the channel also stores
  // its statistics.
  __device__ __forceinline__ Coefficients coefficients(long long c, const Channel& ch, double s1, double s2,
                                                       double count, bool writer) const {
    const double shifted_mean = s1 / count, var = fmax(s2 / count - shifted_mean * shifted_mean, 0.0);
    const double mean = double(ch.shift) + shifted_mean, invstd = 1.0 / sqrt(var + p.eps);
    if (writer) {
      set_vector(p.saved_mean, c, mean);
      set_vector(p.saved_invstd, c, invstd);
      if (p.running_mean.data)
        set_vector(p.running_mean, c, (1 - p.momentum) * vector_at(p.running_mean, c) + p.momentum * mean);
      if (p.running_var.data)
        set_vector(p.running_var, c,
                   (1 - p.momentum) * vector_at(p.running_var, c) + p.momentum * var * count / (count - 1));
    }
    return {A(mean), A(invstd) * ch.weight, ch.bias};
  }
  // Inference's coefficients, from the running statistics (float32 arithmetic for float32, as the composition).
  __device__ __forceinline__ Coefficients running(long long c) const {
    const A invstd = A(1) / square_root(A(vector_at(p.running_var, c)) + A(p.eps));
    return {A(vector_at(p.running_mean, c)), p.weight.data ? invstd * A(vector_at(p.weight, c)) : invstd,
            p.bias.data ? A(vector_at(p.bias, c)) : A(0)};
  }
  template <typename I> __device__ __forceinline__ void write(I off, const Units& x, const Coefficients& k) const {
    Units y;
#pragma unroll
    for (int j = 0; j < V; ++j) y.v[j] = from_acc<T>((to_acc<A>(x.v[j]) - k.mean) * k.scale + k.bias);
    reinterpret_cast<Units*>(p.y)[off] = y;
  }
};

template <typename T, typename A_, int V_>
struct Backward {
  using A = A_;
  static constexpr int V = V_;
  struct Units {
    Pack<T, V> dy, x;
  };
  struct Channel {
    A mean, invstd, weight;
  };
  struct Coefficients {
    A mean, dy_scale, x_scale, shift;  // dx = dy * dy_scale + (x - mean) * x_scale + shift
  };
  const Params& p;

  template <typename I> __device__ __forceinline__ Units load(I off) const {
    return {reinterpret_cast<const Pack<T, V>*>(p.dy)[off], reinterpret_cast<const Pack<T, V>*>(p.x)[off]};
  }
  __device__ __forceinline__ Channel begin(long long c, long long) const {
    return {A(vector_at(p.saved_mean, c)), A(vector_at(p.saved_invstd, c)),
            p.weight.data ? A(vector_at(p.weight, c)) : A(1)};
  }
  __device__ __forceinline__ void accumulate(const Channel& ch, const Units& u, A& s1, A& s2) const {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const A g = to_acc<A>(u.dy.v[j]);
      s1 += g;
      s2 += g * (to_acc<A>(u.x.v[j]) - ch.mean);
    }
  }
  // s1 = sum(dy) = grad_bias, s2 = sum(dy * (x - mean)) = grad_weight / invstd.
  __device__ __forceinline__ Coefficients coefficients(long long c, const Channel& ch, double s1, double s2,
                                                       double count, bool writer) const {
    const double invstd = ch.invstd, grad_weight = s2 * invstd, scale = double(ch.weight) * invstd;
    if (writer) {
      set_vector(p.grad_weight, c, grad_weight);
      set_vector(p.grad_bias, c, s1);
    }
    return {ch.mean, A(scale), A(-scale * invstd * grad_weight / count), A(-scale * s1 / count)};
  }
  template <typename I> __device__ __forceinline__ void write(I off, const Units& u, const Coefficients& k) const {
    Pack<T, V> dx;
#pragma unroll
    for (int j = 0; j < V; ++j)
      dx.v[j] = from_acc<T>(to_acc<A>(u.dy.v[j]) * k.dy_scale + (to_acc<A>(u.x.v[j]) - k.mean) * k.x_scale + k.shift);
    reinterpret_cast<Pack<T, V>*>(p.dx)[off] = dx;
  }
};

// ---- The kernels. I is the index type: int where every offset fits (the host checks), as 64-bit division and
// multiplication cost GPUs far more.

template <typename Pass, typename I>
__device__ void inference_planes(const Params& p) {
  const Pass pass{p};
  const I su = static_cast<I>(p.s / Pass::V);
  const long long units = p.n * p.c * (p.s / Pass::V);
  const I begin = static_cast<I>(units * blockIdx.x / gridDim.x);
  const I end = static_cast<I>(units * (blockIdx.x + 1) / gridDim.x);
  // A block's share is contiguous, so a thread's channel changes rarely: its coefficients are kept till then.
  I cached = -1;
  typename Pass::Coefficients k{};
  walk(array_walk(begin + I(threadIdx.x), static_cast<I>(p.c), su), end, [&](I off) { return pass.load(off); },
       [&](const typename Pass::Units& x, const ArrayWalk<I>& at) {
         if (at.c != cached) cached = at.c, k = pass.running(at.c);
         pass.write(at.off, x, k);
       });
}

template <typename Pass, typename I>
__device__ void inference_rows(const Params& p) {
  const Pass pass{p};
  const RowShare<I> g = row_share<I>(p);
  const I C = static_cast<I>(p.c);
  if (!g.active) return;
  for (I c = g.lane; c < C; c += g.width) {
    const typename Pass::Coefficients k = pass.running(c);
    walk(row_walk(g, c, C), g.end, [&](I off) { return pass.load(off); },
         [&](const typename Pass::Units& x, const RowWalk<I>& at) { pass.write(at.off, x, k); });
  }
}

// Planes, channel group by group: the group's channels split the grid, blocks_per_channel = gridDim / channels
// blocks a channel (the host keeps channels <= gridDim), each taking one contiguous share of its N * S
// elements; the blocks left over skip the group. The counters are per group, so a block that is done with
// one group's phase 2 goes on to the next group's phase 1 without waiting.
template <typename Pass, typename I>
__device__ void cooperative_planes(const Params& p) {
  using A = typename Pass::A;
  const Pass pass{p};
  const I C = static_cast<I>(p.c), su = static_cast<I>(p.s / Pass::V), units = static_cast<I>(p.n) * su;
  const double count = double(p.n) * double(p.s);
  double* sums = reinterpret_cast<double*>(p.sums);
  unsigned* arrivals = reinterpret_cast<unsigned*>(p.arrivals);
  const auto load = [&](I off) { return pass.load(off); };
  I group = 0;
  for (I first = 0; first < C; first += static_cast<I>(p.group_channels), ++group) {
    const I channels = min(static_cast<I>(p.group_channels), C - first);
    const I blocks_per_channel = static_cast<I>(gridDim.x) / channels;
    if (static_cast<I>(blockIdx.x) >= channels * blocks_per_channel) continue;
    const I c = first + static_cast<I>(blockIdx.x) / blocks_per_channel;
    const I part = static_cast<I>(blockIdx.x) - (c - first) * blocks_per_channel;
    const I begin = static_cast<I>(static_cast<long long>(units) * part / blocks_per_channel);
    const I end = static_cast<I>(static_cast<long long>(units) * (part + 1) / blocks_per_channel);
    const PlaneWalk<I> share = plane_walk(begin + static_cast<I>(threadIdx.x), c, C, su);
    const typename Pass::Channel channel = pass.begin(c, static_cast<long long>(c) * p.s);
    Sums<A> mine;
    const auto add = [&](const typename Pass::Units& u, const PlaneWalk<I>&) {
      pass.accumulate(channel, u, mine.batch1, mine.batch2);
    };
    walk(share, end, load, add, [&] { mine.batch_done(); });
    block_sum(mine.s1, mine.s2);
    if (threadIdx.x == 0) atomicAdd(&sums[2 * c], mine.s1), atomicAdd(&sums[2 * c + 1], mine.s2);
    grid_barrier(&arrivals[group], static_cast<unsigned>(channels * blocks_per_channel));
    const typename Pass::Coefficients k =
        pass.coefficients(c, channel, __ldcg(&sums[2 * c]), __ldcg(&sums[2 * c + 1]), count,
                          part == 0 && threadIdx.x == 0);
    walk(share, end, load, [&](const typename Pass::Units& u, const PlaneWalk<I>& at) { pass.write(at.off, u, k); });
  }
}

// Rows: one group of every channel; the rounds of a thread's channels (lane + k * width) are block-uniform,
// as the slot sums synchronise the block.
template <typename Pass, typename I>
__device__ void cooperative_rows(const Params& p) {
  using A = typename Pass::A;
  const Pass pass{p};
  const RowShare<I> g = row_share<I>(p);
  const I C = static_cast<I>(p.c);
  const double count = double(p.n);
  double* sums = reinterpret_cast<double*>(p.sums);
  const auto load = [&](I off) { return pass.load(off); };
  for (I round = 0; round < g.rounds; ++round) {
    const I c = round * g.width + g.lane;
    const bool has_channel = g.active && c < C;
    Sums<A> mine;
    if (has_channel) {
      const typename Pass::Channel channel = pass.begin(c, c);
      const auto add = [&](const typename Pass::Units& u, const RowWalk<I>&) {
        pass.accumulate(channel, u, mine.batch1, mine.batch2);
      };
      walk(row_walk(g, c, C), g.end, load, add, [&] { mine.batch_done(); });
    }
    slot_sum(mine.s1, mine.s2, static_cast<int>(g.width), static_cast<int>(g.slots));
    if (has_channel && g.slot == 0) atomicAdd(&sums[2 * c], mine.s1), atomicAdd(&sums[2 * c + 1], mine.s2);
  }
  grid_barrier(reinterpret_cast<unsigned*>(p.arrivals), gridDim.x);
  if (!g.active) return;
  for (I c = g.lane; c < C; c += g.width) {
    const typename Pass::Channel channel = pass.begin(c, c);
    const typename Pass::Coefficients k = pass.coefficients(c, channel, __ldcg(&sums[2 * c]),
                                                            __ldcg(&sums[2 * c + 1]), count,
                                                            blockIdx.x == 0 && g.slot == 0);
    walk(row_walk(g, c, C), g.end, load, [&](const typename Pass::Units& u, const RowWalk<I>& at) {
      pass.write(at.off, u, k);
    });
  }
}

}  // namespace batch_norm
}  // namespace jiasu
