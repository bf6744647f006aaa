// What generated elementwise kernels (ops/elementwise_cuda.cpp) share under NVRTC: aligned vectors for the
// contiguous path's 16-byte loads and stores, and the index arithmetic of the strided path (which the tiled path's blocks use too).
#pragma once

#include "emit/runtime/kernel_runtime.h"

// Unrolled under NVRTC; the host compiler (which reads this header for the launch side and its tests) decides.
#ifdef __CUDACC__
#define JIASU_UNROLL _Pragma("unroll")
#else
#define JIASU_UNROLL
#endif

namespace jiasu::ufunc {

// N elements of T moved as one aligned load or store (N * sizeof(T) is at most 16 bytes). One element keeps
// T's own alignment: a complex element (8 or 16 bytes) need only be aligned as its parts are.
template <typename T, int N> struct alignas(N == 1 ? alignof(T) : sizeof(T) * N) Vec { T v[N]; };

// Division by a run-time divisor through a multiply and a shift (Granlund and Montgomery's method, as
// PyTorch's IntDivider), for dividends and divisors below 2^31: the strided path's index arithmetic.
struct FastDivider {
  unsigned divisor, magic, shift;
};

JIASU_FN unsigned mulhi32(unsigned a, unsigned b) {
#ifdef __CUDACC__
  return __umulhi(a, b);
#else
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
#endif
}

JIASU_FN FastDivider make_divider(unsigned divisor) {
  unsigned shift = 0;
  while ((1ULL << shift) < divisor) ++shift;
  const unsigned long long magic = ((1ULL << 32) * ((1ULL << shift) - divisor)) / divisor + 1;
  return FastDivider{divisor, static_cast<unsigned>(magic), shift};
}

// n / d.divisor; the sum cannot wrap, as the high product is below n < 2^31.
JIASU_FN unsigned divide(unsigned n, const FastDivider& d) { return (mulhi32(n, d.magic) + n) >> d.shift; }

// 32-bit index arithmetic: each dimension's extent as a divider, the byte strides of K array operands.
template <int N, int K> struct StridedParams32 {
  FastDivider shape[N];
  int strides[K][N];
};
// 64-bit: the extents and strides as they are.
template <int N, int K> struct StridedParams64 {
  long long shape[N];
  long long strides[K][N];
};

// The byte offsets of linear element `i` in each of the K operands.
template <int N, int K>
JIASU_FN void offsets_of(int i, const StridedParams32<N, K>& p, int (&offset)[K]) {
JIASU_UNROLL
  for (int k = 0; k < K; ++k) offset[k] = 0;
  unsigned rest = static_cast<unsigned>(i);
JIASU_UNROLL
  for (int d = N - 1; d >= 0; --d) {
    const unsigned quotient = d ? divide(rest, p.shape[d]) : 0;
    const int index = static_cast<int>(rest - quotient * p.shape[d].divisor);
    rest = quotient;
JIASU_UNROLL
    for (int k = 0; k < K; ++k) offset[k] += index * p.strides[k][d];
  }
}

template <int N, int K>
JIASU_FN void offsets_of(long long i, const StridedParams64<N, K>& p, long long (&offset)[K]) {
JIASU_UNROLL
  for (int k = 0; k < K; ++k) offset[k] = 0;
JIASU_UNROLL
  for (int d = N - 1; d >= 0; --d) {
    const long long index = d ? i % p.shape[d] : i;
    i = d ? i / p.shape[d] : 0;
JIASU_UNROLL
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

#undef JIASU_UNROLL
