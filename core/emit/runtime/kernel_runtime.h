// The kernel runtime's arithmetic part, which both targets share: what the kernel language means where C++
// means something else. Every emitted translation unit starts with it (emit/runtime/cuda_runtime.h for
// NVRTC, cpu/runtime/host_runtime.h for the CPU backend); the build embeds those files, their quoted
// includes inlined (tools/embed-source), since NVRTC and the run-time host compiler cannot read jiasu's files.
#pragma once
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

#include "emit/runtime/array_abi.h"
#include "emit/runtime/device_error.h"

namespace jiasu {

// A `raise` in the Python source: the handle of its exception class (the launch raises the class the resolver
// registered under it), the class's name, the message, and where it is. Each target defines raise_exception().
struct RaiseSite {
  long long exception;
  const char *name, *message, *function, *file;
  int line, column;
};

// The grid of a cooperative launch, as jiasu.cg.this_grid() gives it: nothing to hold, since every thread knows
// its grid. Each target defines grid_sync(GridGroup), the barrier of every thread of the grid (g.sync()).
struct GridGroup {};
JIASU_FN GridGroup this_grid() { return {}; }

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
// One overload pair per math row of builtins.def (the list of math functions lives there alone).
#define JIASU_BUILTIN(id, path, rule, cuda, host)
#define JIASU_MATH_BUILTIN(id, name, arity) JIASU_MATH##arity(name)
#include "frontend/builtins.def"
#undef JIASU_MATH_BUILTIN
#undef JIASU_BUILTIN
JIASU_MATH1(tgamma)  // math.gamma
// math.degrees and math.radians as CPython computes them: one product with the factor rounded once.
JIASU_FN double degrees_(double x) { return (180.0 / 3.14159265358979323846) * x; }
JIASU_FN double radians_(double x) { return (3.14159265358979323846 / 180.0) * x; }
JIASU_FN float degrees_(float x) { return static_cast<float>(180.0 / 3.14159265358979323846) * x; }
JIASU_FN float radians_(float x) { return static_cast<float>(3.14159265358979323846 / 180.0) * x; }
// math.frexp into the kernel's tuple struct R (mantissa, exponent); CPython's (x, 0) for 0, inf and nan.
template <typename R> JIASU_FN R frexp_(float x) {
  int e = 0;
  return isfinite(x) && x != 0 ? R{::frexpf(x, &e), e} : R{x, 0};
}
template <typename R> JIASU_FN R frexp_(double x) {
  int e = 0;
  return isfinite(x) && x != 0 ? R{::frexp(x, &e), e} : R{x, 0};
}
JIASU_FN float ldexp_(float x, int e) { return ::ldexpf(x, e); }
JIASU_FN double ldexp_(double x, int e) { return ::ldexp(x, e); }
JIASU_FN float fma_(float a, float b, float c) { return ::fmaf(a, b, c); }
JIASU_FN double fma_(double a, double b, double c) { return ::fma(a, b, c); }

// Rounding that keeps the float type (the public floor_/ceil_/trunc_ return int64 as Python does).
namespace detail {
JIASU_MATH1(floor)
JIASU_MATH1(ceil)
JIASU_MATH1(trunc)
JIASU_MATH1(rint)
}  // namespace detail

// ---- Numba's cuda.libdevice functions that no math row gives (builtins.def's JIASU_LIBDEVICE_BUILTIN rows), as
// libdevice computes them: floor, ceil, trunc, rint and round keep the float type, round rounds half away from
// zero (C's round; Python's round is round_ below).
namespace libdevice {
using detail::floor_;
using detail::ceil_;
using detail::trunc_;
using detail::rint_;
JIASU_MATH1(round)
JIASU_MATH2(fdim)
JIASU_MATH2(fmax)
JIASU_MATH2(fmin)
#ifdef __CUDACC__
JIASU_MATH1(rsqrt)
JIASU_MATH1(exp10)
#else  // C has neither
JIASU_FN float rsqrt_(float x) { return 1.0f / ::sqrtf(x); }
JIASU_FN double rsqrt_(double x) { return 1.0 / ::sqrt(x); }
JIASU_FN float exp10_(float x) { return ::powf(10.0f, x); }
JIASU_FN double exp10_(double x) { return ::pow(10.0, x); }
#endif
JIASU_FN float fdivide_(float x, float y) { return x / y; }  // fast_fdividef on the CPU backend
}  // namespace libdevice

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
// NumPy's fmax/fmin (Numba's atomic.nanmax/nanmin): a nan is a missing value, so the other operand wins.
template <typename T>
JIASU_FN T nanmax_(T a, T b) { return widen(a) != widen(a) ? b : widen(b) != widen(b) ? a : max_(a, b); }
template <typename T>
JIASU_FN T nanmin_(T a, T b) { return widen(a) != widen(a) ? b : widen(b) != widen(b) ? a : min_(a, b); }

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

// ---- Arrays: kernel parameters are ArrayC / ArrayA (array_abi.h, which the launch's packer reads too).

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

// ---- Views (a[1:3], a[i, :], a[i] of a 2-D array): NumPy's basic indexing, one Axis per axis of the array.
struct Axis {
  enum : int { kStart = 1, kStop = 2, kIndex = 4 };  // `given`: which of start and stop a slice has; or an index
  long long start, stop, step;
  int given;
};

template <int M, typename T, int N>
JIASU_FN ArrayA<T, M> view_of(T* data, const long long* shape, const long long* strides, const Axis (&axes)[N]) {
  ArrayA<T, M> out;
  char* at = reinterpret_cast<char*>(data);
  int k = 0;
  for (int d = 0; d < N; ++d) {
    const Axis& x = axes[d];
    const long long n = shape[d];
    if (x.given == Axis::kIndex) {
      at += wrap_index(x.start, n) * strides[d];
      continue;
    }
    // Python's slice.indices(n): missing or out-of-range ends clamp to the axis, for either sign of step.
    const long long step = x.step, lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
    auto clamp = [&](long long i, bool given, long long missing) {
      if (!given) return missing;
      if (i < 0) return i + n < lower ? lower : i + n;
      return i > upper ? upper : i;
    };
    const long long start = clamp(x.start, x.given & Axis::kStart, step > 0 ? lower : upper);
    const long long stop = clamp(x.stop, x.given & Axis::kStop, step > 0 ? upper : lower);
    // A zero step (only a variable can be one: check() refuses a literal 0) gives an empty view, not a fault.
    const long long count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                            : step < 0 ? (start > stop ? (start - stop - step - 1) / -step : 0) : 0;
    at += start * strides[d];
    out.shape[k] = count;
    out.strides[k] = strides[d] * step;
    ++k;
  }
  out.data = reinterpret_cast<T*>(at);
  return out;
}

template <int M, typename T, int N>
JIASU_FN ArrayA<T, M> view(const ArrayA<T, N>& a, const Axis (&axes)[N]) { return view_of<M>(a.data, a.shape, a.strides, axes); }

template <int M, typename T, int N>
JIASU_FN ArrayA<T, M> view(const ArrayC<T, N>& a, const Axis (&axes)[N]) {
  long long strides[N];
  long long stride = static_cast<long long>(sizeof(T));
  for (int d = N - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= a.shape[d];
  }
  return view_of<M>(a.data, a.shape, strides, axes);
}

// a.reshape(shape) of a C-contiguous array: the same memory with M axes; an extent of -1 takes the rest of the
// size. The sizes must agree (check() cannot know them; NumPy would raise).
template <int M, typename T, int N>
JIASU_FN ArrayC<T, M> reshape(const ArrayC<T, N>& a, const long long (&shape)[M]) {
  long long size = 1, known = 1;
  if constexpr (N > 0)
    for (int d = 0; d < N; ++d) size *= a.shape[d];
  ArrayC<T, M> out;
  out.data = a.data;
  int rest = -1;
  for (int d = 0; d < M; ++d) {
    out.shape[d] = shape[d];
    if (shape[d] < 0) rest = d;
    else known *= shape[d];
  }
  if (rest >= 0) out.shape[rest] = known ? size / known : 0;
  return out;
}

// a.view(dtype): the same bytes as elements of type U, the last axis holding sizeof(T) / sizeof(U) times as many.
// Where NumPy would refuse (a last axis that is not contiguous, or bytes that are not a whole number of U), the
// view is empty.
template <typename U, typename T>
JIASU_FN long long viewed_extent(long long extent, long long stride) {
  const long long bytes = extent * static_cast<long long>(sizeof(T));
  if (stride != static_cast<long long>(sizeof(T)) && extent > 1) return 0;
  return bytes % static_cast<long long>(sizeof(U)) ? 0 : bytes / static_cast<long long>(sizeof(U));
}
template <typename U, typename T, int N>
JIASU_FN ArrayC<U, N> view_as(const ArrayC<T, N>& a) {
  ArrayC<U, N> out;
  out.data = reinterpret_cast<U*>(a.data);
  for (int d = 0; d < N; ++d) out.shape[d] = a.shape[d];
  out.shape[N - 1] = viewed_extent<U, T>(a.shape[N - 1], sizeof(T));
  return out;
}
template <typename U, typename T, int N>
JIASU_FN ArrayA<U, N> view_as(const ArrayA<T, N>& a) {
  ArrayA<U, N> out;
  out.data = reinterpret_cast<U*>(a.data);
  for (int d = 0; d < N; ++d) {
    out.shape[d] = a.shape[d];
    out.strides[d] = a.strides[d];
  }
  out.shape[N - 1] = viewed_extent<U, T>(a.shape[N - 1], a.strides[N - 1]);
  out.strides[N - 1] = sizeof(U);
  return out;
}

// ---- Records: a field is the bytes at its offset in the record (check_record_layout keeps them aligned).
template <typename T, typename R>
JIASU_FN T& field(R* record, long long offset) { return *reinterpret_cast<T*>(record->bytes + offset); }

template <typename T, int N>
JIASU_FN T& at_index(const ArrayC<T, N>& a, const long long* index) {
  long long offset = 0;
  for (int d = 0; d < N; ++d) offset = offset * a.shape[d] + index[d];
  return a.data[offset];
}
template <typename T, int N>
JIASU_FN T& at_index(const ArrayA<T, N>& a, const long long* index) {
  long long offset = 0;
  for (int d = 0; d < N; ++d) offset += index[d] * a.strides[d];
  return *reinterpret_cast<T*>(reinterpret_cast<char*>(a.data) + offset);
}

// r.h = b: b's elements into the subarray field h, index by index (b has as many axes; h's shape is used).
template <typename T, int N, typename Source>
JIASU_FN void copy_elements(const ArrayC<T, N>& into, const Source& from) {
  long long index[N > 0 ? N : 1] = {};
  for (long long k = 0, n = size(into); k < n; ++k) {
    long long rest = k;
    for (int d = N - 1; d >= 0; --d) {
      index[d] = rest % into.shape[d];
      rest /= into.shape[d];
    }
    into.data[k] = static_cast<T>(at_index(from, index));
  }
}

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

// ---- Tuples
// t[i] of a tuple whose items are all of type T, at an index known only at run time (negative counts from the end,
// as in Python). An index out of range reads the first item, so nothing outside the tuple is read; the CPU
// backend's debug mode reports it (tuple_item_checked).
template <typename T, int N> JIASU_FN T tuple_item(const T (&items)[N], long long index) {
  if (index < 0) index += N;
  return index >= 0 && index < N ? items[index] : items[0];
}

}  // namespace jiasu

#include "emit/runtime/complex.h"
