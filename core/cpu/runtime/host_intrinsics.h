// The kernel runtime's host part (the CPU backend's counterpart of emit/runtime/cuda_intrinsics.h): what the
// CUDA part gets from CUDA, for a host C++17 compiler (GCC or Clang: it uses their __atomic and bit builtins),
// and what each thread of a kernel sees (HostThread).
#pragma once

#include "emit/runtime/kernel_runtime.h"

namespace jiasu {

// ---- Half types in software: the bits of an IEEE binary16 / bfloat16, converted with round to nearest even.
}  // namespace jiasu
struct __half { unsigned short bits; };
struct __nv_bfloat16 { unsigned short bits; };
namespace jiasu {

namespace detail {
// The float nearest d, rounded to odd (truncated, lowest bit set when inexact): rounding that float to
// a narrower type then rounds d correctly (no double rounding).
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (!isfinite(f) || static_cast<double>(f) == d) return f;
  unsigned bits = bit_cast<unsigned>(f);
  if (fabs(static_cast<double>(f)) > fabs(d)) bits -= 1;  // toward zero: the truncation
  return bit_cast<float>(bits | 1u);
}

inline unsigned short float_to_half_bits(float f) {
  unsigned x = bit_cast<unsigned>(f);
  unsigned short sign = static_cast<unsigned short>((x >> 16) & 0x8000u);
  unsigned ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);  // inf, nan
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds to 65520 or more: inf
  if (ax < 0x38800000u) {  // below 2**-14: a subnormal half, in units of 2**-24 (rintf rounds to even)
    return sign | static_cast<unsigned short>(rintf(bit_cast<float>(ax) * 16777216.0f));
  }
  unsigned h = ((((ax >> 23) - 127u + 15u) << 10) | ((ax & 0x7fffffu) >> 13));
  unsigned rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may reach the exponent: right
  return static_cast<unsigned short>(sign | h);
}

inline float half_bits_to_float(unsigned short h) {
  unsigned sign = static_cast<unsigned>(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2**-24
    return sign ? -magnitude : magnitude;
  }
  unsigned bits = exponent == 31 ? (0x7f800000u | (mantissa << 13)) : (((exponent + 112u) << 23) | (mantissa << 13));
  return bit_cast<float>(sign | bits);
}

inline unsigned short float_to_bfloat16_bits(float f) {
  unsigned x = bit_cast<unsigned>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<unsigned short>(x >> 16);
}
}  // namespace detail

template <> struct traits<__half> : half_number {};
template <> struct traits<__nv_bfloat16> : half_number {};
template <> struct half_ops<__half> {
  static inline float to_float(__half v) { return detail::half_bits_to_float(v.bits); }
  static inline __half from_float(float v) { return __half{detail::float_to_half_bits(v)}; }
  static inline __half from_double(double v) { return from_float(detail::round_to_odd_float(v)); }
};
template <> struct half_ops<__nv_bfloat16> {
  static inline float to_float(__nv_bfloat16 v) { return bit_cast<float>(static_cast<unsigned>(v.bits) << 16); }
  static inline __nv_bfloat16 from_float(float v) { return __nv_bfloat16{detail::float_to_bfloat16_bits(v)}; }
  static inline __nv_bfloat16 from_double(double v) { return from_float(detail::round_to_odd_float(v)); }
};

// The same pointer, but opaque to the optimiser: code generated for the CPU backend keeps thread-local
// storage's address in a register through it instead of looking it up again at every use.
template <typename T> inline T* opaque(T* p) {
  asm("" : "+r"(p));
  return p;
}

// ---- Atomics: each returns the old value; sequentially consistent __atomic builtins.
template <int Bytes> struct bits_of;
template <> struct bits_of<1> { using type = unsigned char; };
template <> struct bits_of<2> { using type = unsigned short; };
template <> struct bits_of<4> { using type = unsigned int; };
template <> struct bits_of<8> { using type = unsigned long long; };
template <typename T> constexpr bool is_integer_v = traits<T>::is_signed || traits<T>::is_unsigned;

// *p = update(*p) atomically with a compare-and-swap loop; no store when the value would not change.
template <typename T, typename F>
inline T atomic_update(T* p, F update) {
  using Bits = typename bits_of<sizeof(T)>::type;
  Bits* address = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(address, __ATOMIC_SEQ_CST);
  for (;;) {
    Bits desired = bit_cast<Bits>(update(bit_cast<T>(old)));
    if (desired == old) break;
    if (__atomic_compare_exchange_n(address, &old, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
  }
  return bit_cast<T>(old);
}

template <typename T>
inline T atomic_add(T* p, T v) {
  if constexpr (is_integer_v<T>) return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);  // wraps
  else return atomic_update(p, [v](T old) { return cast<T>(widen(old) + widen(v)); });
}
template <typename T>
inline T atomic_sub(T* p, T v) {
  if constexpr (is_integer_v<T>) return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
  else return atomic_update(p, [v](T old) { return cast<T>(widen(old) - widen(v)); });
}
// max/min keep Python's max(old, v) (v only when strictly larger, so a stored nan stays).
template <typename T> inline T atomic_max(T* p, T v) { return atomic_update(p, [v](T old) { return max_(old, v); }); }
template <typename T> inline T atomic_min(T* p, T v) { return atomic_update(p, [v](T old) { return min_(old, v); }); }
template <typename T>
inline T atomic_nanmax(T* p, T v) { return atomic_update(p, [v](T old) { return nanmax_(old, v); }); }
template <typename T>
inline T atomic_nanmin(T* p, T v) { return atomic_update(p, [v](T old) { return nanmin_(old, v); }); }
template <typename T> inline T atomic_and(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <typename T> inline T atomic_or(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T> inline T atomic_xor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <typename T>
inline T atomic_exch(T* p, T v) {
  using Bits = typename bits_of<sizeof(T)>::type;
  return bit_cast<T>(__atomic_exchange_n(reinterpret_cast<Bits*>(p), bit_cast<Bits>(v), __ATOMIC_SEQ_CST));
}
// Numba's inc/dec with a wrap bound (CUDA's atomicInc/atomicDec).
template <typename T>
inline T atomic_inc(T* p, T bound) { return atomic_update(p, [bound](T old) { return old >= bound ? T(0) : T(old + 1); }); }
template <typename T>
inline T atomic_dec(T* p, T bound) {
  return atomic_update(p, [bound](T old) { return (old == 0 || old > bound) ? bound : T(old - 1); });
}
template <typename T>
inline T atomic_cas(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the old value either way
}

// ---- Fences: every host thread sees memory in one order.
inline void threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- Bits: popc, clz and ffs count in the width of the argument's own type (as the device part).
template <typename T>
inline unsigned long long unsigned_bits(T x) { return static_cast<typename traits<T>::unsigned_type>(x); }
template <typename T> inline int popc(T x) { return __builtin_popcountll(unsigned_bits(x)); }
template <typename T>
inline int clz(T x) {
  unsigned long long u = unsigned_bits(x);
  return u == 0 ? 8 * static_cast<int>(sizeof(T)) : __builtin_clzll(u) - (64 - 8 * static_cast<int>(sizeof(T)));
}
template <typename T> inline int ffs(T x) { return __builtin_ffsll(static_cast<long long>(unsigned_bits(x))); }
inline unsigned long long reverse_bits(unsigned long long x, int width) {
  unsigned long long out = 0;
  for (int i = 0; i < width; ++i, x >>= 1) out = (out << 1) | (x & 1);
  return out;
}
template <typename T> inline unsigned brev(T x) { return static_cast<unsigned>(reverse_bits(unsigned_bits(x) & 0xffffffffULL, 32)); }
inline unsigned long long brev(long long x) { return reverse_bits(unsigned_bits(x), 64); }
inline unsigned long long brev(unsigned long long x) { return reverse_bits(x, 64); }

struct HostDim3 { long long x, y, z; };
// What one thread of the kernel sees: every emitted function takes it first.
struct HostThread { HostDim3 threadIdx, blockIdx, blockDim, gridDim; };

}  // namespace jiasu
