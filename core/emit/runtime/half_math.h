// The kernel runtime's math on the half types, for both targets: after the target's part, which defines
// __half and __nv_bfloat16 and their conversions.
#pragma once

#include "emit/runtime/kernel_runtime.h"

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
#define JIASU_BUILTIN(id, path, rule, cuda, host)
#define JIASU_MATH_BUILTIN(id, name, arity) JIASU_HALF_MATH##arity(name)
#include "frontend/builtins.def"
#undef JIASU_MATH_BUILTIN
#undef JIASU_BUILTIN
JIASU_HALF_MATH1(tgamma)
JIASU_HALF_MATH1(degrees)
JIASU_HALF_MATH1(radians)
JIASU_FN __half fma_(__half a, __half b, __half c) { return cast<__half>(fma_(widen(a), widen(b), widen(c))); }
JIASU_FN __nv_bfloat16 fma_(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return cast<__nv_bfloat16>(fma_(widen(a), widen(b), widen(c)));
}

// ---- Numba's cuda.fp16 functions that no math row gives (builtins.def): computed in float and rounded once, as
// NumPy's float16 arithmetic is; written for any float type, used on __half. (hmax/hmin are nanmax_/nanmin_,
// which return the other operand for a nan, as CUDA's __hmax does.) The comparisons are ordered (false when
// either is a nan), as CUDA's __heq ... __hlt are.
template <typename T> JIASU_FN T hadd_(T a, T b) { return cast<T>(widen(a) + widen(b)); }
template <typename T> JIASU_FN T hsub_(T a, T b) { return cast<T>(widen(a) - widen(b)); }
template <typename T> JIASU_FN T hmul_(T a, T b) { return cast<T>(widen(a) * widen(b)); }
template <typename T> JIASU_FN T hdiv_(T a, T b) { return cast<T>(widen(a) / widen(b)); }
template <typename T> JIASU_FN T hneg_(T a) { return cast<T>(-widen(a)); }
#define JIASU_FP16_MATH1(name, expression) \
  template <typename T> JIASU_FN T name##_(T a) { \
    const auto x = widen(a); \
    return cast<T>(expression); \
  }
JIASU_FP16_MATH1(hexp10, pow_(decltype(x)(10), x))
JIASU_FP16_MATH1(hrsqrt, decltype(x)(1) / sqrt_(x))
JIASU_FP16_MATH1(hrcp, decltype(x)(1) / x)
JIASU_FP16_MATH1(hfloor, detail::floor_(x))
JIASU_FP16_MATH1(hceil, detail::ceil_(x))
JIASU_FP16_MATH1(hrint, detail::rint_(x))
JIASU_FP16_MATH1(htrunc, detail::trunc_(x))
#undef JIASU_FP16_MATH1
template <typename A, typename B> JIASU_FN bool heq_(A a, B b) { return widen(a) == widen(b); }
template <typename A, typename B> JIASU_FN bool hne_(A a, B b) { return widen(a) < widen(b) || widen(a) > widen(b); }
template <typename A, typename B> JIASU_FN bool hge_(A a, B b) { return widen(a) >= widen(b); }
template <typename A, typename B> JIASU_FN bool hgt_(A a, B b) { return widen(a) > widen(b); }
template <typename A, typename B> JIASU_FN bool hle_(A a, B b) { return widen(a) <= widen(b); }
template <typename A, typename B> JIASU_FN bool hlt_(A a, B b) { return widen(a) < widen(b); }
}  // namespace jiasu

#undef JIASU_MATH1
#undef JIASU_MATH2
#undef JIASU_HALF_MATH1
#undef JIASU_HALF_MATH2
