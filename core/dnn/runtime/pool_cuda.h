// The GPU kernels of jiasu.nn's 2-D pooling, instantiated per (dtype, max or average, pass, layout) by generated
// sources (dnn/pooling_cuda.cpp) and compiled by NVRTC; embedded in the core as pool_cuda. Arithmetic in float
// (double for double).
//   forward: a thread per output column of one plane and a band of kBand output rows, walking down the band: each
//            input row's part of the window (its kw columns) is reduced once and kept while windows share the row
//            (kh - sh rows of consecutive windows), so a 3x3 stride-2 window costs 6 loads, not 9, and no index
//            division per output. Channels-last arrays have C fastest across threads, so that neighbouring
//            threads read neighbouring memory.
//   backward: a thread per input element, gathering from the windows that hold it, so that no two threads write
//            one element and no atomics are needed.
//   max: the window's first maximum in row-major order (a nan wins, the last one, as in PyTorch); its gradient
//        goes there;
//   avg: the window's sum over kh * kw, or over its elements inside the input without count_include_pad.
#pragma once

#include "dnn/runtime/float_convert.h"
#include "dnn/runtime/pool_params.h"

namespace jiasu {
namespace pool {

// Position i of a (N, C, H, W) walk: C fastest when channels-last, else W fastest. I is the index type: int when
// every index and offset fits (the host checks), as 64-bit division costs GPUs far more than the loads.
template <bool ChannelsLast, typename I>
__device__ __forceinline__ void position(I i, I c, I h, I w, I* at) {
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

// The kernels' view of the parameters in index type I.
template <typename I>
struct Geometry {
  I n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  I x_stride[4], y_stride[4], dy_stride[4], dx_stride[4];
  __device__ __forceinline__ explicit Geometry(const Params& p)
      : n(p.n), c(p.c), h(p.h), w(p.w), oh(p.oh), ow(p.ow), kh(p.kh), kw(p.kw), sh(p.sh), sw(p.sw), ph(p.ph),
        pw(p.pw) {
    for (int d = 0; d < 4; ++d)
      x_stride[d] = p.x_stride[d], y_stride[d] = p.y_stride[d], dy_stride[d] = p.dy_stride[d],
      dx_stride[d] = p.dx_stride[d];
  }
};

template <typename I>
__device__ __forceinline__ I offset(I n_i, I c_i, I h_i, I w_i, const I* stride) {
  return n_i * stride[0] + c_i * stride[1] + h_i * stride[2] + w_i * stride[3];
}

// The maximum of the window of output (oh_i, ow_i) in plane (the input at (n, c, 0, 0)) and its place (row,
// column) in the input; -1 when every element is padding. KH x KW is the window when known at compile time (0:
// kh x kw at run time): its loops then unroll and every load is issued before the first comparison waits.
template <int KH, int KW, typename T, typename A, typename I>
__device__ __forceinline__ void window_max(const Geometry<I>& g, const T* __restrict__ plane, I oh_i, I ow_i, A* best,
                                           I* best_h, I* best_w) {
  *best_h = *best_w = -1;
  const I kh = KH ? I(KH) : g.kh, kw = KW ? I(KW) : g.kw;
  const I h0 = oh_i * g.sh - g.ph, w0 = ow_i * g.sw - g.pw;
#pragma unroll
  for (I r = 0; r < kh; ++r) {
    const I ih = h0 + r;
#pragma unroll
    for (I s = 0; s < kw; ++s) {
      const I iw = w0 + s;
      if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
      const A v = to_acc<A>(plane[ih * g.x_stride[2] + iw * g.x_stride[3]]);
      if (*best_h < 0 || v > *best || v != v) *best = v, *best_h = ih, *best_w = iw;
    }
  }
}

template <typename A, typename I>
__device__ __forceinline__ A divisor(const Params& p, const Geometry<I>& g, I oh_i, I ow_i) {
  if (p.count_include_pad) return A(g.kh * g.kw);
  const I h0 = oh_i * g.sh - g.ph, w0 = ow_i * g.sw - g.pw;
  const I rows = min(h0 + g.kh, g.h) - max(h0, I(0)), cols = min(w0 + g.kw, g.w) - max(w0, I(0));
  return A(rows * cols);
}

template <typename A> __device__ __forceinline__ A lowest();
template <> __device__ __forceinline__ float lowest<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double lowest<double>() { return __longlong_as_double(0xfff0000000000000LL); }

// Max keeps the first of equal values and takes a nan: v > acc || v != v (row-major order is kept, as rows are
// combined top to bottom).
template <bool Max, typename A>
__device__ __forceinline__ A combine(A acc, A v) {
  return Max ? ((v > acc || v != v) ? v : acc) : acc + v;
}

// KH x KW is the window, SH its row stride, when known at compile time (0: at run time). With KH and SH known,
// the last KH row parts live in registers (their shifts unroll); otherwise each output reduces its kh rows.
template <typename T, typename A, bool Max, bool ChannelsLast, typename I, int KH, int KW, int SH>
__device__ void forward(const Params& p) {
  const Geometry<I> g(p);
  const T* __restrict__ x = reinterpret_cast<const T*>(p.x);
  T* __restrict__ y = reinterpret_cast<T*>(p.y);
  const I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= g.n * g.c * g.ow) return;
  I n_i, c_i, ow_i;
  if (ChannelsLast) {
    c_i = t % g.c;
    const I rest = t / g.c;
    ow_i = rest % g.ow, n_i = rest / g.ow;
  } else {
    ow_i = t % g.ow;
    const I rest = t / g.ow;
    c_i = rest % g.c, n_i = rest / g.c;
  }
  const T* plane = x + n_i * g.x_stride[0] + c_i * g.x_stride[1];
  T* column = y + n_i * g.y_stride[0] + c_i * g.y_stride[1] + ow_i * g.y_stride[3];
  const I kh = KH ? I(KH) : g.kh, kw = KW ? I(KW) : g.kw, sh = SH ? I(SH) : g.sh;
  const I w0 = ow_i * g.sw - g.pw;
  const auto row_part = [&](I ih) -> A {
    A acc = Max ? lowest<A>() : A(0);
    if (ih < 0 || ih >= g.h) return acc;
    const T* row = plane + ih * g.x_stride[2];
#pragma unroll
    for (I s = 0; s < kw; ++s) {
      const I iw = w0 + s;
      if (iw >= 0 && iw < g.w) acc = combine<Max>(acc, to_acc<A>(row[iw * g.x_stride[3]]));
    }
    return acc;
  };
  const auto store = [&](I oh_i, A acc) {
    if (!Max) acc /= divisor<A>(p, g, oh_i, ow_i);
    column[oh_i * g.y_stride[2]] = from_acc<T>(acc);
  };
  for (I first = static_cast<I>(blockIdx.y) * kBand; first < g.oh; first += static_cast<I>(gridDim.y) * kBand) {
    const I last = min(g.oh, first + kBand);
    if constexpr (KH > 0 && SH > 0) {
      A part[KH];
#pragma unroll
      for (int r = 0; r < KH; ++r) part[r] = row_part(first * sh - g.ph + r);
#pragma unroll 4
      for (I oh_i = first; oh_i < last; ++oh_i) {
        if (oh_i > first) {
#pragma unroll
          for (int r = 0; r < KH; ++r) part[r] = r + SH < KH ? part[r + SH] : row_part(oh_i * sh - g.ph + r);
        }
        A acc = part[0];
#pragma unroll
        for (int r = 1; r < KH; ++r) acc = combine<Max>(acc, part[r]);
        store(oh_i, acc);
      }
    } else {
      for (I oh_i = first; oh_i < last; ++oh_i) {
        A acc = row_part(oh_i * sh - g.ph);
        for (I r = 1; r < kh; ++r) acc = combine<Max>(acc, row_part(oh_i * sh - g.ph + r));
        store(oh_i, acc);
      }
    }
  }
}

template <typename T, typename A, bool Max, bool ChannelsLast, typename I, int KH, int KW>
__device__ void backward(const Params& p) {
  const Geometry<I> g(p);
  const T* __restrict__ x = reinterpret_cast<const T*>(p.x);
  const T* __restrict__ dy = reinterpret_cast<const T*>(p.dy);
  T* __restrict__ dx = reinterpret_cast<T*>(p.dx);
  const I total = g.n * g.c * g.h * g.w;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += static_cast<I>(gridDim.x) * blockDim.x) {
    I at[4];
    position<ChannelsLast>(i, g.c, g.h, g.w, at);
    const T* plane = x + at[0] * g.x_stride[0] + at[1] * g.x_stride[1];
    const T* grads = dy + at[0] * g.dy_stride[0] + at[1] * g.dy_stride[1];
    // The outputs whose windows hold (ih, iw): oh in [ceil((ih + ph - kh + 1) / sh), (ih + ph) / sh] (a negative
    // numerator rounds to 0 or above, and the range starts at 0 anyway).
    const I ih = at[2], iw = at[3];
    const I oh_first = max(I(0), (ih + g.ph - g.kh + g.sh) / g.sh), oh_last = min(g.oh - 1, (ih + g.ph) / g.sh);
    const I ow_first = max(I(0), (iw + g.pw - g.kw + g.sw) / g.sw), ow_last = min(g.ow - 1, (iw + g.pw) / g.sw);
    A grad = 0;
    for (I oh_i = oh_first; oh_i <= oh_last; ++oh_i) {
      for (I ow_i = ow_first; ow_i <= ow_last; ++ow_i) {
        const A gv = to_acc<A>(grads[oh_i * g.dy_stride[2] + ow_i * g.dy_stride[3]]);
        if (Max) {
          A best;
          I bh, bw;
          window_max<KH, KW, T, A>(g, plane, oh_i, ow_i, &best, &bh, &bw);
          if (bh == ih && bw == iw) grad += gv;
        } else {
          grad += gv / divisor<A>(p, g, oh_i, ow_i);
        }
      }
    }
    dx[offset(at[0], at[1], at[2], at[3], g.dx_stride)] = from_acc<T>(grad);
  }
}

}  // namespace pool
}  // namespace jiasu
