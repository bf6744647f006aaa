// The element types of the CPU backend's reduction loops: loading each dtype from memory, widening it to
// an accumulator type (ops/runtime/reduce.h) and narrowing a result back, half types included (rounded to
// nearest even, as NumPy and the GPU round).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "array/dtype.hpp"
#include "ops/reduce.hpp"

namespace jiasu::ops {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float to_float(Half h) {
  const uint32_t sign = uint32_t(h.bits & 0x8000) << 16, exponent = (h.bits >> 10) & 0x1f, mantissa = h.bits & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {  // zero or subnormal: mantissa * 2^-24
    float f = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float to_float(BFloat16 b) {
  const uint32_t bits = uint32_t(b.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline Half half_from(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t magnitude = x & 0x7fffffff;
  if (magnitude > 0x7f800000) return {static_cast<uint16_t>(sign | 0x7e00)};  // NaN
  if (magnitude >= 0x477ff000) return {static_cast<uint16_t>(sign | 0x7c00)};  // rounds to inf
  if (magnitude < 0x38800000) {  // a subnormal half (or zero): round magnitude * 2^24 to an integer
    float m;
    std::memcpy(&m, &magnitude, 4);
    const float scaled = m * 16777216.0f;
    auto q = static_cast<uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(q);
    if (rest > 0.5f || (rest == 0.5f && (q & 1))) ++q;
    return {static_cast<uint16_t>(sign | q)};
  }
  const uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);  // to nearest even at bit 13
  return {static_cast<uint16_t>(sign | ((rounded - 0x38000000) >> 13))};
}

inline BFloat16 bfloat16_from(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return {static_cast<uint16_t>((x >> 16) | 0x40)};  // NaN stays quiet NaN
  return {static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16)};
}

template <typename T> inline T load(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

// An element as accumulator type A (bool: not zero).
template <typename A, typename T> inline A widen(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return widen<A>(to_float(x));
  } else if constexpr (std::is_same_v<A, bool>) {
    return x != T(0);
  } else {
    return static_cast<A>(x);
  }
}

// A result as the output type: integers wrap, floats round to nearest.
template <typename Out, typename V> inline Out narrow(V v) {
  if constexpr (std::is_same_v<Out, Half>) {
    return half_from(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Out, BFloat16>) {
    return bfloat16_from(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Out, bool>) {
    return v != V(0);
  } else if constexpr (std::is_integral_v<Out> && std::is_integral_v<V> && !std::is_same_v<Out, bool>) {
    return static_cast<Out>(static_cast<std::make_unsigned_t<Out>>(v));
  } else {
    return static_cast<Out>(v);
  }
}

// max, min, argmax, argmin compare in the widest type of the input's kind (exact for every element).
template <typename T> struct widened_type { using type = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>; };
template <> struct widened_type<bool> { using type = bool; };
template <> struct widened_type<Half> { using type = float; };
template <> struct widened_type<BFloat16> { using type = float; };
template <> struct widened_type<float> { using type = float; };
template <> struct widened_type<double> { using type = double; };
template <typename T> using Widened = typename widened_type<T>::type;

template <typename T> struct Tag {
  using type = T;
};

// The input dtypes of the reduction loops and their C++ types; complex types are refused before a loop is
// chosen.
#define JIASU_REDUCE_ELEMENT_TYPES(X)                                                                      \
  X(Bool, bool) X(Int8, int8_t) X(Int16, int16_t) X(Int32, int32_t) X(Int64, long long) X(UInt8, uint8_t) \
  X(UInt16, uint16_t) X(UInt32, uint32_t) X(UInt64, unsigned long long) X(Float16, Half)                \
  X(BFloat16, BFloat16) X(Float32, float) X(Float64, double)

[[noreturn]] inline void refuse_reduction_dtype(DType dtype) {
  throw BadArgument(std::string("jiasu: reductions do not support dtype ") + info(dtype).name);
}

// Calls f(Tag<T>{}) with the C++ type of `dtype`.
template <typename F> void with_element_type(DType dtype, F&& f) {
  switch (dtype) {
#define JIASU_ELEMENT_CASE(name, T) \
  case DType::name: return f(Tag<T>{});
    JIASU_REDUCE_ELEMENT_TYPES(JIASU_ELEMENT_CASE)
#undef JIASU_ELEMENT_CASE
    default: refuse_reduction_dtype(dtype);
  }
}

// The CPU loops of every input dtype would take minutes to compile in one file: the build compiles them in
// JIASU_LOOP_PARTS parts (CMakeLists.txt), in parallel, each for the input dtypes of its part.
constexpr int kLoopParts = JIASU_LOOP_PARTS;
constexpr int loop_part(DType dtype) { return static_cast<int>(dtype) % kLoopParts; }

// with_element_type for the input dtypes of one part (the others are not instantiated: reduce_cpu.cpp
// hands each part only its own).
template <int Part, typename F> void with_element_type_of_part(DType dtype, F&& f) {
  switch (dtype) {
#define JIASU_ELEMENT_CASE(name, T)                                  \
  case DType::name:                                                  \
    if constexpr (loop_part(DType::name) == Part) return f(Tag<T>{}); \
    break;
    JIASU_REDUCE_ELEMENT_TYPES(JIASU_ELEMENT_CASE)
#undef JIASU_ELEMENT_CASE
    default: break;
  }
  refuse_reduction_dtype(dtype);
}

template <typename F> void with_accumulator_type(AccType acc, F&& f) {
  switch (acc) {
    case AccType::Bool: return f(Tag<bool>{});
    case AccType::Int64: return f(Tag<long long>{});
    case AccType::UInt64: return f(Tag<unsigned long long>{});
    case AccType::Float32: return f(Tag<float>{});
    case AccType::Float64: return f(Tag<double>{});
  }
}

}  // namespace jiasu::ops
