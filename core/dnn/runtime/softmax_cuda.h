// The GPU kernels of jiasu.nn's softmax family, instantiated per (dtype, log or not, pass, row length class) by
// generated sources (dnn/softmax_cuda.cpp) and compiled by NVRTC; embedded in the core as softmax_cuda. Rows are
// contiguous (the softmax dimension is innermost) and `*_stride` elements apart. Arithmetic is in float (double
// for double), as PyTorch's.
//   rows_kernel  a warp per row of at most 32 * K elements, held in registers: the row is read once and written
//                once (max and sum by warp shuffles);
//   long_kernel  a block per longer row: an online max-and-sum pass, then the writing pass.
// The forward pass writes y = softmax(x) or log_softmax(x); the backward pass writes dx from dy and y:
// y * (dy - sum(dy * y)), or dy - exp(y) * sum(dy) for log_softmax.
#pragma once

#include "dnn/runtime/float_convert.h"
#include "dnn/runtime/softmax_params.h"

namespace jiasu {
namespace softmax {

template <typename A> __device__ __forceinline__ A minus_infinity();
template <> __device__ __forceinline__ float minus_infinity<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double minus_infinity<double>() {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}

__device__ __forceinline__ float exp_(float v) { return expf(v); }
__device__ __forceinline__ double exp_(double v) { return exp(v); }
__device__ __forceinline__ float log_(float v) { return logf(v); }
__device__ __forceinline__ double log_(double v) { return log(v); }

template <typename A> __device__ __forceinline__ A warp_max(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
template <typename A> __device__ __forceinline__ A warp_sum(A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The warp's row, or -1 past the last row (the whole warp returns).
__device__ __forceinline__ long long warp_row(long long rows) {
  const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  return row < rows ? row : -1;
}

template <typename T, typename A, bool Log, int K>
__device__ void rows_forward(const Params& p) {
  const long long row = warp_row(p.rows);
  if (row < 0) return;
  const int lane = threadIdx.x % 32;
  const T* x = reinterpret_cast<const T*>(p.x) + row * p.x_stride;
  T* y = reinterpret_cast<T*>(p.y) + row * p.y_stride;
  A v[K];
  A top = minus_infinity<A>();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = lane + 32 * k;
    v[k] = i < p.n ? to_acc<A>(x[i]) : minus_infinity<A>();
    top = fmax(top, v[k]);
  }
  top = warp_max(top);
  // Each exponential once (softmax keeps them in v): the arithmetic, not memory, would bound the kernel otherwise.
  A sum = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const A e = lane + 32 * k < p.n ? exp_(v[k] - top) : A(0);
    sum += e;
    if (!Log) v[k] = e;
  }
  sum = warp_sum(sum);
  const A log_sum = log_(sum), scale = A(1) / sum;  // (v - top) first: it is exact, top + log_sum is not
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = lane + 32 * k;
    if (i < p.n) y[i] = from_acc<T>(Log ? (v[k] - top) - log_sum : v[k] * scale);
  }
}

template <typename T, typename A, bool Log, int K>
__device__ void rows_backward(const Params& p) {
  const long long row = warp_row(p.rows);
  if (row < 0) return;
  const int lane = threadIdx.x % 32;
  const T* dy = reinterpret_cast<const T*>(p.dy) + row * p.dy_stride;
  const T* y = reinterpret_cast<const T*>(p.y) + row * p.y_stride;
  T* dx = reinterpret_cast<T*>(p.dx) + row * p.dx_stride;
  A g[K], out[K];
  A dot = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = lane + 32 * k;
    g[k] = i < p.n ? to_acc<A>(dy[i]) : A(0);
    out[k] = i < p.n ? to_acc<A>(y[i]) : A(0);
    dot += Log ? g[k] : g[k] * out[k];
  }
  dot = warp_sum(dot);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = lane + 32 * k;
    if (i < p.n) dx[i] = from_acc<T>(Log ? g[k] - exp_(out[k]) * dot : out[k] * (g[k] - dot));
  }
}

// The block's combined (max, sum of exp(v - max)) over every thread's pair, or its plain total of `sum` when
// `sums_only`; every thread gets the result.
template <typename A>
__device__ void block_combine(A& top, A& sum, bool sums_only) {
  __shared__ A tops[32], sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (sums_only) {
    sum = warp_sum(sum);
  } else {
    const A m = warp_max(top);
    sum = warp_sum(top == minus_infinity<A>() ? A(0) : sum * exp_(top - m));
    top = m;
  }
  if (lane == 0) tops[warp] = top, sums[warp] = sum;
  __syncthreads();
  A m = sums_only ? A(0) : minus_infinity<A>();
  if (!sums_only)
    for (int w = 0; w < warps; ++w) m = fmax(m, tops[w]);
  A s = 0;
  for (int w = 0; w < warps; ++w) s += sums_only ? sums[w] : (tops[w] == minus_infinity<A>() ? A(0) : sums[w] * exp_(tops[w] - m));
  top = m;
  sum = s;
}

template <typename T, typename A, bool Log>
__device__ void long_forward(const Params& p) {
  const long long row = blockIdx.x;
  const T* x = reinterpret_cast<const T*>(p.x) + row * p.x_stride;
  T* y = reinterpret_cast<T*>(p.y) + row * p.y_stride;
  A top = minus_infinity<A>(), sum = 0;  // online: sum of exp(v - top) over this thread's elements
  for (int i = threadIdx.x; i < p.n; i += blockDim.x) {
    const A v = to_acc<A>(x[i]);
    if (v > top) {
      sum = (top == minus_infinity<A>() ? A(0) : sum * exp_(top - v)) + A(1);
      top = v;
    } else {
      sum += exp_(v - top);
    }
  }
  block_combine(top, sum, false);
  const A log_sum = log_(sum);
  for (int i = threadIdx.x; i < p.n; i += blockDim.x) {
    const A v = to_acc<A>(x[i]);
    y[i] = from_acc<T>(Log ? v - top - log_sum : exp_(v - top) / sum);
  }
}

template <typename T, typename A, bool Log>
__device__ void long_backward(const Params& p) {
  const long long row = blockIdx.x;
  const T* dy = reinterpret_cast<const T*>(p.dy) + row * p.dy_stride;
  const T* y = reinterpret_cast<const T*>(p.y) + row * p.y_stride;
  T* dx = reinterpret_cast<T*>(p.dx) + row * p.dx_stride;
  A unused = 0, dot = 0;
  for (int i = threadIdx.x; i < p.n; i += blockDim.x)
    dot += Log ? to_acc<A>(dy[i]) : to_acc<A>(dy[i]) * to_acc<A>(y[i]);
  block_combine(unused, dot, true);
  for (int i = threadIdx.x; i < p.n; i += blockDim.x) {
    const A g = to_acc<A>(dy[i]), out = to_acc<A>(y[i]);
    dx[i] = from_acc<T>(Log ? g - exp_(out) * dot : out * (g - dot));
  }
}

}  // namespace softmax
}  // namespace jiasu
