// The runtime header that every emitted translation unit starts with (NVRTC cannot read jiasu's files,
// so the text is pasted, not included).
#include "emit/cuda_emitter.hpp"

namespace jiasu::emit {

namespace {

// The header, without what sits between its device part and its end: the host part of runtime_header_host.cpp
// goes there for the host build (as the #else of the device part), nothing for NVRTC, so edits to the host
// part leave CUDA sources (and their cache keys) alone.
const char* const kBeforeHostPart = R"JIASU(// ---- jiasu runtime header -------------------------------------------------------------------
// What the kernel language means where C++ means something else. The arithmetic part compiles with any
// C++17 compiler (it is the reference for the host backend and is unit-tested on the host); half types,
// atomics, warp and bit intrinsics need the GPU and sit inside #ifdef __CUDACC__; its #else holds their
// host versions (a software __half/__nv_bfloat16, __atomic builtins) and the host launch structs.
//
// Python/NumPy semantics kept here, and where they stop:
//   a // b, a % b   floor toward -inf; the remainder takes the divisor's sign. Integer division by zero
//                   gives 0 (NumPy's value, without its warning); floats follow NumPy's npy_divmod
//                   (x // 0.0 is inf or nan, x % 0.0 is nan) where Python would raise.
//   a ** b          integers by squaring, wrapping on overflow; a negative integer exponent gives the
//                   truncated true result (1 for base 1, +-1 for base -1, else 0) where NumPy raises.
//   << >>           NumPy's: a shift by the bit width or more gives 0 (or -1 for a negative a >> b).
//   round(x)        half to even, as an int64; round(x, n) is NumPy's np.round: rint(x * 10**n) / 10**n
//                   in double (Python rounds the exact decimal: round(2.675, 2) is 2.67 there, 2.68 here).
//   min, max        Python's: the first argument unless a later one is strictly smaller (larger).
//   float -> int    truncation toward zero; NaN or out of range is undefined (the GPU saturates).
//   math.*          domain errors give nan/inf as in NumPy instead of raising; floor/ceil/trunc of inf
//                   or nan is undefined.
//   float16/bfloat16 compute in float and round back to the half type, as NumPy does.
//   Signed overflow of int32/int64 arithmetic is undefined as in C++ (in practice it wraps); narrower
//   integers are computed in int and wrapped back to their type by the emitted casts.
#ifdef __CUDACC__
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define JIASU_FN __device__ __forceinline__
#else
#include <math.h>
#include <string.h>
#define JIASU_FN inline
#endif

namespace jiasu {

// ---- Scalar traits (NVRTC has no <type_traits>)
template <typename A, typename B> struct same_type { static constexpr bool value = false; };
template <typename A> struct same_type<A, A> { static constexpr bool value = true; };
template <typename A, typename B> constexpr bool is_same_v = same_type<A, B>::value;

struct no_number { static constexpr bool is_signed = false, is_unsigned = false, is_float = false, is_half = false; };
// unsigned_type: the integer of the same width in which wrapping arithmetic is defined.
template <typename U> struct signed_number : no_number { static constexpr bool is_signed = true; using unsigned_type = U; };
template <typename U> struct unsigned_number : no_number { static constexpr bool is_unsigned = true; using unsigned_type = U; };
struct float_number : no_number { static constexpr bool is_float = true; };
struct half_number : no_number { static constexpr bool is_half = true; };  // computes in float

template <typename T> struct traits : no_number {};  // bool
template <> struct traits<signed char> : signed_number<unsigned char> {};
template <> struct traits<short> : signed_number<unsigned short> {};
template <> struct traits<int> : signed_number<unsigned int> {};
template <> struct traits<long long> : signed_number<unsigned long long> {};
template <> struct traits<unsigned char> : unsigned_number<unsigned char> {};
template <> struct traits<unsigned short> : unsigned_number<unsigned short> {};
template <> struct traits<unsigned int> : unsigned_number<unsigned int> {};
template <> struct traits<unsigned long long> : unsigned_number<unsigned long long> {};
template <> struct traits<float> : float_number {};
template <> struct traits<double> : float_number {};

template <typename T> constexpr bool is_floating_v = traits<T>::is_float || traits<T>::is_half;

// ---- Conversions
// half_ops<H>: to_float, from_float, from_double for a half type H (defined in the device part).
template <typename H> struct half_ops;

// The value in the type its arithmetic is done in: float for the half types, itself otherwise.
template <typename T>
JIASU_FN auto widen(T v) {
  if constexpr (traits<T>::is_half) return half_ops<T>::to_float(v);
  else return v;
}

// Conversion between any two scalar types. To bool is Python's truth (x != 0, so nan is true); floats to
// ints truncate; 64-bit values reach a half type through double, others through float.
template <typename To, typename From>
JIASU_FN To cast(From v) {
  if constexpr (is_same_v<To, From>) return v;
  else if constexpr (traits<From>::is_half) return cast<To>(widen(v));
  else if constexpr (traits<To>::is_half && sizeof(From) == 8) return half_ops<To>::from_double(static_cast<double>(v));
  else if constexpr (traits<To>::is_half) return half_ops<To>::from_float(static_cast<float>(v));
  else if constexpr (is_same_v<To, bool>) return v != 0;
  else return static_cast<To>(v);
}

// -x that wraps for the most negative value instead of overflowing.
template <typename T>
JIASU_FN T wrapping_negate(T v) {
  return static_cast<T>(0u - static_cast<typename traits<T>::unsigned_type>(v));
}

// ---- Math on float and double: name_(x) calls the C function name (namef for float)
#define JIASU_MATH1(name) \
  JIASU_FN float name##_(float x) { return ::name##f(x); } \
  JIASU_FN double name##_(double x) { return ::name(x); }
#define JIASU_MATH2(name) \
  JIASU_FN float name##_(float x, float y) { return ::name##f(x, y); } \
  JIASU_FN double name##_(double x, double y) { return ::name(x, y); }
#define JIASU_MATH1_NAMES(X) \
  X(sqrt) X(exp) X(log) X(log2) X(log10) X(log1p) X(expm1) X(sin) X(cos) X(tan) X(asin) X(acos) \
  X(atan) X(sinh) X(cosh) X(tanh) X(erf) X(erfc) X(fabs)
#define JIASU_MATH2_NAMES(X) X(atan2) X(pow) X(fmod) X(copysign) X(hypot)

JIASU_MATH1_NAMES(JIASU_MATH1)
JIASU_MATH2_NAMES(JIASU_MATH2)
JIASU_FN float fma_(float a, float b, float c) { return ::fmaf(a, b, c); }
JIASU_FN double fma_(double a, double b, double c) { return ::fma(a, b, c); }

// Rounding that keeps the float type (the public floor_/ceil_/trunc_ return int64 as Python does).
namespace detail {
JIASU_MATH1(floor)
JIASU_MATH1(ceil)
JIASU_MATH1(trunc)
JIASU_MATH1(rint)
}  // namespace detail

template <typename T>
JIASU_FN long long floor_(T x) {
  if constexpr (is_floating_v<T>) return static_cast<long long>(detail::floor_(widen(x)));
  else return static_cast<long long>(x);
}
template <typename T>
JIASU_FN long long ceil_(T x) {
  if constexpr (is_floating_v<T>) return static_cast<long long>(detail::ceil_(widen(x)));
  else return static_cast<long long>(x);
}
template <typename T>
JIASU_FN long long trunc_(T x) {
  if constexpr (is_floating_v<T>) return static_cast<long long>(detail::trunc_(widen(x)));
  else return static_cast<long long>(x);
}

template <typename T>
JIASU_FN bool isnan_(T x) {
  if constexpr (is_floating_v<T>) return isnan(widen(x));
  else return false;
}
template <typename T>
JIASU_FN bool isinf_(T x) {
  if constexpr (is_floating_v<T>) return isinf(widen(x));
  else return false;
}
template <typename T>
JIASU_FN bool isfinite_(T x) {
  if constexpr (is_floating_v<T>) return isfinite(widen(x));
  else return true;
}

// ---- Python operators. Operands arrive already converted to the result type T.

// NumPy's npy_divmod for floats: the floor quotient, with the remainder in `mod`.
template <typename T>
JIASU_FN T float_divmod(T a, T b, T& mod) {
  mod = fmod_(a, b);
  if (b == 0) return a / b;
  T div = (a - mod) / b;  // very nearly an integer multiple of b
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1;
    }
  } else {
    mod = copysign_(T(0), b);
  }
  if (div == 0) return copysign_(T(0), a / b);
  T floor_div = detail::floor_(div);
  return div - floor_div > T(0.5) ? floor_div + 1 : floor_div;  // snap to the nearest integer
}

template <typename T>
JIASU_FN T floordiv(T a, T b) {
  if constexpr (traits<T>::is_half) {
    return cast<T>(floordiv(widen(a), widen(b)));
  } else if constexpr (traits<T>::is_float) {
    T mod;
    return float_divmod(a, b, mod);
  } else if constexpr (traits<T>::is_signed) {
    if (b == 0) return 0;
    if (b == -1) return wrapping_negate(a);  // MIN / -1 overflows in C++
    T quotient = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(quotient - 1) : quotient;
  } else {
    return b == 0 ? T(0) : static_cast<T>(a / b);
  }
}

template <typename T>
JIASU_FN T mod(T a, T b) {
  if constexpr (traits<T>::is_half) {
    return cast<T>(mod(widen(a), widen(b)));
  } else if constexpr (traits<T>::is_float) {
    T remainder;
    float_divmod(a, b, remainder);
    return remainder;
  } else if constexpr (traits<T>::is_signed) {
    if (b == 0 || b == -1) return 0;
    T remainder = a % b;
    return (remainder != 0 && ((remainder < 0) != (b < 0))) ? static_cast<T>(remainder + b) : remainder;
  } else {
    return b == 0 ? T(0) : static_cast<T>(a % b);
  }
}

template <typename T>
JIASU_FN T power(T base, T exponent) {
  if constexpr (traits<T>::is_half) {
    return cast<T>(power(widen(base), widen(exponent)));
  } else if constexpr (traits<T>::is_float) {
    return exponent == 2 ? base * base : pow_(base, exponent);  // x ** 2 is common: exact and fast
  } else {
    if constexpr (traits<T>::is_signed) {
      if (exponent < 0) return base == 1 ? T(1) : base == -1 ? T((exponent & 1) ? -1 : 1) : T(0);
    }
    // In 64-bit unsigned arithmetic, which wraps; the low bits are the result for every narrower type.
    unsigned long long result = 1, factor = static_cast<unsigned long long>(base);
    for (unsigned long long e = static_cast<unsigned long long>(exponent); e != 0; e >>= 1) {
      if (e & 1) result *= factor;
      factor *= factor;
    }
    return static_cast<T>(result);
  }
}

template <typename T>
JIASU_FN T lshift(T a, T b) {
  if (static_cast<unsigned long long>(b) >= sizeof(T) * 8) return 0;  // a negative b is huge here too
  return static_cast<T>(static_cast<typename traits<T>::unsigned_type>(a) << b);
}

template <typename T>
JIASU_FN T rshift(T a, T b) {
  if (static_cast<unsigned long long>(b) >= sizeof(T) * 8) {
    if constexpr (traits<T>::is_signed) return a < 0 ? T(-1) : T(0);
    return 0;
  }
  return static_cast<T>(a >> b);
}

// ---- Python builtins
template <typename T> JIASU_FN T min_(T a, T b) { return widen(b) < widen(a) ? b : a; }
template <typename T> JIASU_FN T max_(T a, T b) { return widen(b) > widen(a) ? b : a; }

template <typename T>
JIASU_FN T abs_(T x) {
  if constexpr (is_floating_v<T>) return cast<T>(fabs_(widen(x)));
  else if constexpr (traits<T>::is_signed) return x < 0 ? wrapping_negate(x) : x;
  else return x;
}

// round(x): half to even, as an int64.
template <typename T>
JIASU_FN long long round_(T x) {
  if constexpr (is_floating_v<T>) return static_cast<long long>(detail::rint_(widen(x)));
  else return static_cast<long long>(x);
}

JIASU_FN double power_of_ten(long long n) {
  double p = 1;
  for (long long i = 0; i < n; ++i) p *= 10;
  return p;
}

// round(x, ndigits): floats round half to even at 10**-ndigits (computed in double); integers are
// unchanged for ndigits >= 0, else rounded half to even to a multiple of 10**-ndigits.
template <typename T>
JIASU_FN T round_(T x, long long ndigits) {
  if constexpr (is_floating_v<T>) {
    double value = static_cast<double>(widen(x));
    if (ndigits >= 0) {
      double scaled = value * power_of_ten(ndigits);
      return isfinite(scaled) ? cast<T>(detail::rint_(scaled) / power_of_ten(ndigits)) : x;  // too many digits: x
    }
    double unit = power_of_ten(-ndigits);
    return cast<T>(detail::rint_(value / unit) * unit);
  } else {
    if (ndigits >= 0) return x;
    if (ndigits < -18) return 0;  // 10**19 is beyond every integer type's range
    if constexpr (traits<T>::is_signed) {
      long long unit = static_cast<long long>(power_of_ten(-ndigits)), value = x;
      long long remainder = mod(value, unit), down = value - remainder;
      bool up = 2 * remainder > unit || (2 * remainder == unit && ((down / unit) & 1));
      return static_cast<T>(up ? down + unit : down);
    } else {
      unsigned long long unit = static_cast<unsigned long long>(power_of_ten(-ndigits)), value = x;
      unsigned long long remainder = value % unit, down = value - remainder;
      bool up = 2 * remainder > unit || (2 * remainder == unit && ((down / unit) & 1));
      return static_cast<T>(up ? down + unit : down);
    }
  }
}

// ---- Arrays. Kernel parameters have exactly this layout: the launch packs data, shape (and strides).
// ArrayC: C-contiguous, offsets from the shape. ArrayA: any layout, strides in bytes.
template <typename T, int N> struct ArrayC { T* data; long long shape[N]; };
template <typename T> struct ArrayC<T, 0> { T* data; };
template <typename T, int N> struct ArrayA { T* data; long long shape[N]; long long strides[N]; };
template <typename T> struct ArrayA<T, 0> { T* data; };

// NumPy's negative index: counts from the end. No bounds check.
JIASU_FN long long wrap_index(long long i, long long extent) { return i < 0 ? i + extent : i; }

template <typename T, int N, typename... I>
JIASU_FN T& at(const ArrayC<T, N>& a, I... indices) {
  static_assert(sizeof...(I) == N, "one index per dimension");
  const long long index[N] = {static_cast<long long>(indices)...};
  long long offset = 0;
  for (int d = 0; d < N; ++d) offset = offset * a.shape[d] + wrap_index(index[d], a.shape[d]);
  return a.data[offset];
}

template <typename T, int N, typename... I>
JIASU_FN T& at(const ArrayA<T, N>& a, I... indices) {
  static_assert(sizeof...(I) == N, "one index per dimension");
  const long long index[N] = {static_cast<long long>(indices)...};
  long long offset = 0;
  for (int d = 0; d < N; ++d) offset += wrap_index(index[d], a.shape[d]) * a.strides[d];
  return *reinterpret_cast<T*>(reinterpret_cast<char*>(a.data) + offset);
}

template <typename T> JIASU_FN T& at(const ArrayC<T, 0>& a) { return *a.data; }
template <typename T> JIASU_FN T& at(const ArrayA<T, 0>& a) { return *a.data; }

template <typename Array>
JIASU_FN long long size(const Array& a) {
  long long n = 1;
  for (long long extent : a.shape) n *= extent;
  return n;
}
template <typename T> JIASU_FN long long size(const ArrayC<T, 0>&) { return 1; }
template <typename T> JIASU_FN long long size(const ArrayA<T, 0>&) { return 1; }

template <typename To, typename From>
JIASU_FN To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To out;
  memcpy(&out, &v, sizeof(To));
  return out;
}

// ---- Special float values (literals cannot spell them)
template <typename T> JIASU_FN T inf() { return cast<T>(bit_cast<double>(0x7ff0000000000000ULL)); }
template <typename T> JIASU_FN T nan() { return cast<T>(bit_cast<double>(0x7ff8000000000000ULL)); }

}  // namespace jiasu

#ifdef __CUDACC__
namespace jiasu {

// ---- Half types
template <> struct traits<__half> : half_number {};
template <> struct traits<__nv_bfloat16> : half_number {};
template <> struct half_ops<__half> {
  static JIASU_FN float to_float(__half v) { return __half2float(v); }
  static JIASU_FN __half from_float(float v) { return __float2half_rn(v); }
  static JIASU_FN __half from_double(double v) { return __double2half(v); }
};
template <> struct half_ops<__nv_bfloat16> {
  static JIASU_FN float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static JIASU_FN __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  static JIASU_FN __nv_bfloat16 from_double(double v) { return __double2bfloat16(v); }
};

// ---- Thread and shared-memory queries
JIASU_FN long long laneid() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// The dynamic shared memory the launch asked for, in bytes: the extent of shape-0 shared arrays.
JIASU_FN long long dynamic_shared_bytes() {
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// ---- Atomics: each returns the old value. int64 goes through CUDA's unsigned long long overloads
// (two's complement makes add, exch and cas bit-identical).
JIASU_FN unsigned long long* as_u64(long long* p) { return reinterpret_cast<unsigned long long*>(p); }

template <int Bytes> struct bits_of;
template <> struct bits_of<2> { using type = unsigned short; };
template <> struct bits_of<4> { using type = unsigned int; };
template <> struct bits_of<8> { using type = unsigned long long; };

// *p = update(*p) atomically with a compare-and-swap loop; no store when the value would not change.
template <typename T, typename F>
JIASU_FN T atomic_update(T* p, F update) {
  using Bits = typename bits_of<sizeof(T)>::type;
  Bits* address = reinterpret_cast<Bits*>(p);
  Bits old = *address, assumed;
  do {
    assumed = old;
    Bits desired = bit_cast<Bits>(update(bit_cast<T>(assumed)));
    if (desired == assumed) break;
    old = atomicCAS(address, assumed, desired);
  } while (old != assumed);
  return bit_cast<T>(old);
}

JIASU_FN int atomic_add(int* p, int v) { return atomicAdd(p, v); }
JIASU_FN unsigned atomic_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
JIASU_FN long long atomic_add(long long* p, long long v) {
  return static_cast<long long>(atomicAdd(as_u64(p), static_cast<unsigned long long>(v)));
}
JIASU_FN unsigned long long atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
JIASU_FN float atomic_add(float* p, float v) { return atomicAdd(p, v); }
JIASU_FN double atomic_add(double* p, double v) { return atomicAdd(p, v); }
JIASU_FN __half atomic_add(__half* p, __half v) { return atomicAdd(p, v); }

JIASU_FN int atomic_sub(int* p, int v) { return atomicSub(p, v); }
JIASU_FN unsigned atomic_sub(unsigned* p, unsigned v) { return atomicSub(p, v); }
JIASU_FN long long atomic_sub(long long* p, long long v) { return atomic_add(p, wrapping_negate(v)); }
JIASU_FN unsigned long long atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0 - v); }
JIASU_FN float atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
JIASU_FN double atomic_sub(double* p, double v) { return atomicAdd(p, -v); }

// max/min: integers natively; floats keep Python's max(old, v) (v only when strictly larger, so a
// stored nan stays and a nan v is ignored).
#define JIASU_ATOMIC_NATIVE(name, cuda_name) \
  JIASU_FN int name(int* p, int v) { return cuda_name(p, v); } \
  JIASU_FN unsigned name(unsigned* p, unsigned v) { return cuda_name(p, v); } \
  JIASU_FN long long name(long long* p, long long v) { return cuda_name(p, v); } \
  JIASU_FN unsigned long long name(unsigned long long* p, unsigned long long v) { return cuda_name(p, v); }
JIASU_ATOMIC_NATIVE(atomic_max, atomicMax)
JIASU_ATOMIC_NATIVE(atomic_min, atomicMin)
JIASU_ATOMIC_NATIVE(atomic_and, atomicAnd)
JIASU_ATOMIC_NATIVE(atomic_or, atomicOr)
JIASU_ATOMIC_NATIVE(atomic_xor, atomicXor)

template <typename T> JIASU_FN T atomic_max(T* p, T v) { return atomic_update(p, [v](T old) { return max_(old, v); }); }
template <typename T> JIASU_FN T atomic_min(T* p, T v) { return atomic_update(p, [v](T old) { return min_(old, v); }); }

JIASU_FN int atomic_exch(int* p, int v) { return atomicExch(p, v); }
JIASU_FN unsigned atomic_exch(unsigned* p, unsigned v) { return atomicExch(p, v); }
JIASU_FN long long atomic_exch(long long* p, long long v) {
  return static_cast<long long>(atomicExch(as_u64(p), static_cast<unsigned long long>(v)));
}
JIASU_FN unsigned long long atomic_exch(unsigned long long* p, unsigned long long v) { return atomicExch(p, v); }
JIASU_FN float atomic_exch(float* p, float v) { return atomicExch(p, v); }
JIASU_FN double atomic_exch(double* p, double v) {
  return __longlong_as_double(static_cast<long long>(
      atomicExch(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(__double_as_longlong(v)))));
}

// Numba's inc/dec with a wrap bound: inc stores (old >= bound ? 0 : old + 1), dec stores
// (old == 0 || old > bound ? bound : old - 1). CUDA's 32-bit atomicInc/atomicDec are exactly these.
JIASU_FN unsigned atomic_inc(unsigned* p, unsigned bound) { return atomicInc(p, bound); }
JIASU_FN unsigned atomic_dec(unsigned* p, unsigned bound) { return atomicDec(p, bound); }
JIASU_FN unsigned long long atomic_inc(unsigned long long* p, unsigned long long bound) {
  return atomic_update(p, [bound](unsigned long long old) { return old >= bound ? 0ULL : old + 1; });
}
JIASU_FN unsigned long long atomic_dec(unsigned long long* p, unsigned long long bound) {
  return atomic_update(p, [bound](unsigned long long old) { return (old == 0 || old > bound) ? bound : old - 1; });
}

JIASU_FN int atomic_cas(int* p, int expected, int desired) { return atomicCAS(p, expected, desired); }
JIASU_FN unsigned atomic_cas(unsigned* p, unsigned expected, unsigned desired) { return atomicCAS(p, expected, desired); }
JIASU_FN long long atomic_cas(long long* p, long long expected, long long desired) {
  return static_cast<long long>(atomicCAS(as_u64(p), static_cast<unsigned long long>(expected),
                                          static_cast<unsigned long long>(desired)));
}
JIASU_FN unsigned long long atomic_cas(unsigned long long* p, unsigned long long expected, unsigned long long desired) {
  return atomicCAS(p, expected, desired);
}

// ---- Warp shuffles of 32- and 64-bit values (CUDA's overloads)
template <typename T> JIASU_FN T shfl_sync(unsigned mask, T v, int src_lane) { return __shfl_sync(mask, v, src_lane); }
template <typename T> JIASU_FN T shfl_up_sync(unsigned mask, T v, int delta) { return __shfl_up_sync(mask, v, delta); }
template <typename T> JIASU_FN T shfl_down_sync(unsigned mask, T v, int delta) { return __shfl_down_sync(mask, v, delta); }
template <typename T> JIASU_FN T shfl_xor_sync(unsigned mask, T v, int lane_mask) { return __shfl_xor_sync(mask, v, lane_mask); }

// ---- Bits: popc, clz and ffs count in the width of the argument's own type.
template <typename T>
JIASU_FN unsigned long long unsigned_bits(T x) { return static_cast<typename traits<T>::unsigned_type>(x); }

template <typename T>
JIASU_FN int popc(T x) {
  if constexpr (sizeof(T) == 8) return __popcll(unsigned_bits(x));
  else return __popc(static_cast<unsigned>(unsigned_bits(x)));
}
template <typename T>
JIASU_FN int clz(T x) {
  if constexpr (sizeof(T) == 8) return __clzll(static_cast<long long>(unsigned_bits(x)));
  else return __clz(static_cast<int>(unsigned_bits(x))) - (32 - 8 * static_cast<int>(sizeof(T)));
}
template <typename T>
JIASU_FN int ffs(T x) {  // 1-based position of the lowest set bit; 0 for 0
  if constexpr (sizeof(T) == 8) return __ffsll(static_cast<long long>(unsigned_bits(x)));
  else return __ffs(static_cast<int>(unsigned_bits(x)));
}
// CUDA's __brev: the 32 bits of a (zero-extended) value up to 32 bits reversed, or the 64 bits of a 64-bit one.
template <typename T>
JIASU_FN unsigned brev(T x) { return __brev(static_cast<unsigned>(unsigned_bits(x))); }
JIASU_FN unsigned long long brev(long long x) { return __brevll(unsigned_bits(x)); }
JIASU_FN unsigned long long brev(unsigned long long x) { return __brevll(x); }

}  // namespace jiasu
)JIASU";

const char* const kAfterHostPart = R"JIASU(#endif  // __CUDACC__

namespace jiasu {
// ---- Math on the half types: computed in float, rounded back
#define JIASU_HALF_MATH1(name) \
  JIASU_FN __half name##_(__half x) { return cast<__half>(name##_(widen(x))); } \
  JIASU_FN __nv_bfloat16 name##_(__nv_bfloat16 x) { return cast<__nv_bfloat16>(name##_(widen(x))); }
#define JIASU_HALF_MATH2(name) \
  JIASU_FN __half name##_(__half x, __half y) { return cast<__half>(name##_(widen(x), widen(y))); } \
  JIASU_FN __nv_bfloat16 name##_(__nv_bfloat16 x, __nv_bfloat16 y) { \
    return cast<__nv_bfloat16>(name##_(widen(x), widen(y))); \
  }
JIASU_MATH1_NAMES(JIASU_HALF_MATH1)
JIASU_MATH2_NAMES(JIASU_HALF_MATH2)
JIASU_FN __half fma_(__half a, __half b, __half c) { return cast<__half>(fma_(widen(a), widen(b), widen(c))); }
JIASU_FN __nv_bfloat16 fma_(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return cast<__nv_bfloat16>(fma_(widen(a), widen(b), widen(c)));
}
}  // namespace jiasu

#undef JIASU_MATH1
#undef JIASU_MATH2
#undef JIASU_MATH1_NAMES
#undef JIASU_MATH2_NAMES
#undef JIASU_HALF_MATH1
#undef JIASU_HALF_MATH2
#undef JIASU_ATOMIC_NATIVE
#undef JIASU_FN
// ---- end of the jiasu runtime header ------------------------------------------------------------
)JIASU";

}  // namespace

const std::string& cuda_runtime_header() {
  static const std::string text = std::string(kBeforeHostPart) + kAfterHostPart;
  return text;
}

const std::string& host_runtime_header() {
  static const std::string text = std::string(kBeforeHostPart) + "#else\n" + cuda::host_runtime_part() + "\n" +
                                  kAfterHostPart;
  return text;
}

}  // namespace jiasu::emit
