// What generated elementwise kernels (ops/elementwise_cuda.cpp) share under NVRTC: aligned vectors for the
// contiguous path's 16-byte loads and stores, and the index arithmetic of the strided path.
#pragma once

#include "emit/runtime/kernel_runtime.h"

namespace jiasu::ufunc {

// N elements of T moved as one aligned load or store (N * sizeof(T) is at most 16 bytes).
template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };

// The byte strides of K array operands over N dimensions, and the extents; I is int or long long.
template <int N, int K, typename I> struct StridedParams {
  I shape[N];
  I strides[K][N];
};

// The byte offsets of linear element `i` in each of the K operands.
template <int N, int K, typename I>
JIASU_FN void offsets_of(I i, const StridedParams<N, K, I>& p, I (&offset)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) offset[k] = 0;
#pragma unroll
  for (int d = N - 1; d >= 0; --d) {
    const I index = d ? i % p.shape[d] : i;
    i = d ? i / p.shape[d] : 0;
#pragma unroll
    for (int k = 0; k < K; ++k) offset[k] += index * p.strides[k][d];
  }
}

template <typename T, typename I>
JIASU_FN T& at_offset(T* base, I offset) {
  return *reinterpret_cast<T*>(reinterpret_cast<char*>(base) + offset);
}
template <typename T, typename I>
JIASU_FN const T& at_offset(const T* base, I offset) {
  return *reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + offset);
}

}  // namespace jiasu::ufunc
