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
#define JIASU_MATH_BUILTIN(id, name, rule) JIASU_HALF_##rule(name)
#define JIASU_HALF_FloatMath1 JIASU_HALF_MATH1
#define JIASU_HALF_FloatMath2 JIASU_HALF_MATH2
#include "frontend/builtins.def"
#undef JIASU_HALF_FloatMath1
#undef JIASU_HALF_FloatMath2
#undef JIASU_MATH_BUILTIN
#undef JIASU_BUILTIN
JIASU_HALF_MATH1(tgamma)
JIASU_HALF_MATH1(degrees)
JIASU_HALF_MATH1(radians)
JIASU_FN __half fma_(__half a, __half b, __half c) { return cast<__half>(fma_(widen(a), widen(b), widen(c))); }
JIASU_FN __nv_bfloat16 fma_(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return cast<__nv_bfloat16>(fma_(widen(a), widen(b), widen(c)));
}
}  // namespace jiasu

#undef JIASU_MATH1
#undef JIASU_MATH2
#undef JIASU_HALF_MATH1
#undef JIASU_HALF_MATH2
