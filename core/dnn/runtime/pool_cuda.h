// The GPU kernels of jiasu.nn's 2-D pooling, instantiated per (dtype, max or average, pass, layout) by generated
// sources (dnn/pooling_cuda.cpp) and compiled by NVRTC; embedded in the core as pool_cuda. A thread per output
// (forward) or per input element (backward, gathering from the windows that hold it, so that no two threads
// write one element and no atomics are needed). Channels-last arrays walk C fastest, so that neighbouring
// threads read neighbouring memory. Arithmetic in float (double for double).
//   max: the window's first maximum in row-major order (a nan wins, the last one, as in PyTorch); its gradient
//        goes there;
//   avg: the window's sum over kh * kw, or over its elements inside the input without count_include_pad.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "dnn/runtime/pool_params.h"

namespace jiasu {
namespace pool {

template <typename A> __device__ __forceinline__ A to_acc(float v) { return v; }
template <typename A> __device__ __forceinline__ A to_acc(double v) { return static_cast<A>(v); }
template <typename A> __device__ __forceinline__ A to_acc(__half v) { return __half2float(v); }
template <typename A> __device__ __forceinline__ A to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_acc(float v);
template <> __device__ __forceinline__ float from_acc<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_acc<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <typename T> __device__ __forceinline__ T from_acc(double v) { return v; }

// Position i of a (N, C, H, W) walk: C fastest when channels-last, else W fastest.
template <bool ChannelsLast>
__device__ __forceinline__ void position(long long i, long long c, long long h, long long w, long long* at) {
  if (ChannelsLast) {
    at[1] = i % c, i /= c;
    at[3] = i % w, i /= w;
    at[2] = i % h, at[0] = i / h;
  } else {
    at[3] = i % w, i /= w;
    at[2] = i % h, i /= h;
    at[1] = i % c, at[0] = i / c;
  }
}

__device__ __forceinline__ long long offset(const long long* at, const long long* stride) {
  return at[0] * stride[0] + at[1] * stride[1] + at[2] * stride[2] + at[3] * stride[3];
}

// The maximum of the window of output (oh_i, ow_i) and its place (row, column) in the input; -1 when every
// element is padding.
template <typename T, typename A>
__device__ __forceinline__ void window_max(const Params& p, const T* x, long long n_i, long long c_i, long long oh_i,
                                           long long ow_i, A* best, long long* best_h, long long* best_w) {
  *best_h = *best_w = -1;
  const long long h0 = oh_i * p.sh - p.ph, w0 = ow_i * p.sw - p.pw;
  for (int r = 0; r < p.kh; ++r) {
    const long long ih = h0 + r;
    if (ih < 0 || ih >= p.h) continue;
    for (int s = 0; s < p.kw; ++s) {
      const long long iw = w0 + s;
      if (iw < 0 || iw >= p.w) continue;
      const long long at[4] = {n_i, c_i, ih, iw};
      const A v = to_acc<A>(x[offset(at, p.x_stride)]);
      if (*best_h < 0 || v > *best || v != v) *best = v, *best_h = ih, *best_w = iw;
    }
  }
}

template <typename A>
__device__ __forceinline__ A divisor(const Params& p, long long oh_i, long long ow_i) {
  if (p.count_include_pad) return A(p.kh * p.kw);
  const long long h0 = oh_i * p.sh - p.ph, w0 = ow_i * p.sw - p.pw;
  const long long rows = min(h0 + p.kh, p.h) - max(h0, 0ll), cols = min(w0 + p.kw, p.w) - max(w0, 0ll);
  return A(rows * cols);
}

template <typename T, typename A, bool Max, bool ChannelsLast>
__device__ void forward(const Params& p) {
  const T* x = reinterpret_cast<const T*>(p.x);
  T* y = reinterpret_cast<T*>(p.y);
  const long long total = p.n * p.c * p.oh * p.ow;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long at[4];
    position<ChannelsLast>(i, p.c, p.oh, p.ow, at);
    A result;
    if (Max) {
      long long bh, bw;
      window_max<T, A>(p, x, at[0], at[1], at[2], at[3], &result, &bh, &bw);
    } else {
      A sum = 0;
      const long long h0 = at[2] * p.sh - p.ph, w0 = at[3] * p.sw - p.pw;
      for (int r = 0; r < p.kh; ++r) {
        const long long ih = h0 + r;
        if (ih < 0 || ih >= p.h) continue;
        for (int s = 0; s < p.kw; ++s) {
          const long long iw = w0 + s;
          if (iw < 0 || iw >= p.w) continue;
          const long long in[4] = {at[0], at[1], ih, iw};
          sum += to_acc<A>(x[offset(in, p.x_stride)]);
        }
      }
      result = sum / divisor<A>(p, at[2], at[3]);
    }
    y[offset(at, p.y_stride)] = from_acc<T>(result);
  }
}

template <typename T, typename A, bool Max, bool ChannelsLast>
__device__ void backward(const Params& p) {
  const T* x = reinterpret_cast<const T*>(p.x);
  const T* dy = reinterpret_cast<const T*>(p.dy);
  T* dx = reinterpret_cast<T*>(p.dx);
  const long long total = p.n * p.c * p.h * p.w;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long at[4];
    position<ChannelsLast>(i, p.c, p.h, p.w, at);
    // The outputs whose windows hold (ih, iw): oh in [ceil((ih + ph - kh + 1) / sh), (ih + ph) / sh].
    const long long ih = at[2], iw = at[3];
    const long long oh_first = max(0ll, (ih + p.ph - p.kh + p.sh) / p.sh), oh_last = min(p.oh - 1, (ih + p.ph) / p.sh);
    const long long ow_first = max(0ll, (iw + p.pw - p.kw + p.sw) / p.sw), ow_last = min(p.ow - 1, (iw + p.pw) / p.sw);
    A grad = 0;
    for (long long oh_i = oh_first; oh_i <= oh_last; ++oh_i) {
      for (long long ow_i = ow_first; ow_i <= ow_last; ++ow_i) {
        const long long out[4] = {at[0], at[1], oh_i, ow_i};
        const A g = to_acc<A>(dy[offset(out, p.dy_stride)]);
        if (Max) {
          A best;
          long long bh, bw;
          window_max<T, A>(p, x, at[0], at[1], oh_i, ow_i, &best, &bh, &bw);
          if (bh == ih && bw == iw) grad += g;
        } else {
          grad += g / divisor<A>(p, oh_i, ow_i);
        }
      }
    }
    dx[offset(at, p.dx_stride)] = from_acc<T>(grad);
  }
}

}  // namespace pool
}  // namespace jiasu
