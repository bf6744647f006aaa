// The C++ type of each dtype on the host, and a dispatch from a run-time dtype to code templated on it,
// for the CPU backend's loops compiled into the core (the elementwise engine's; reductions may use it too).
// Includes the kernel runtime's host part (__half and __nv_bfloat16 are its software half types) and the
// functors' header (complex64, complex128).
#pragma once

#include <cstdint>
#include <utility>

#include "array/dtype.hpp"
#include "emit/runtime/kernel_runtime.h"
#include "cpu/runtime/host_intrinsics.h"
#include "emit/runtime/half_math.h"
#include "ops/runtime/ufuncs.h"
#include "support/error.hpp"

namespace jiasu::ops {

template <DType D> struct CType;
template <> struct CType<DType::Bool> { using type = bool; };
template <> struct CType<DType::Int8> { using type = signed char; };
template <> struct CType<DType::Int16> { using type = short; };
template <> struct CType<DType::Int32> { using type = int; };
template <> struct CType<DType::Int64> { using type = long long; };
template <> struct CType<DType::UInt8> { using type = unsigned char; };
template <> struct CType<DType::UInt16> { using type = unsigned short; };
template <> struct CType<DType::UInt32> { using type = unsigned int; };
template <> struct CType<DType::UInt64> { using type = unsigned long long; };
template <> struct CType<DType::Float16> { using type = __half; };
template <> struct CType<DType::BFloat16> { using type = __nv_bfloat16; };
template <> struct CType<DType::Float32> { using type = float; };
template <> struct CType<DType::Float64> { using type = double; };
template <> struct CType<DType::Complex64> { using type = complex64; };
template <> struct CType<DType::Complex128> { using type = complex128; };
template <DType D> using ctype_t = typename CType<D>::type;

// Calls f(std::integral_constant<DType, d>{}) for the run-time dtype d.
template <typename F>
decltype(auto) dispatch_dtype(DType d, F&& f) {
  switch (d) {
#define JIASU_DISPATCH_CASE(name) \
  case DType::name: return f(std::integral_constant<DType, DType::name>{});
    JIASU_DISPATCH_CASE(Bool) JIASU_DISPATCH_CASE(Int8) JIASU_DISPATCH_CASE(Int16) JIASU_DISPATCH_CASE(Int32)
    JIASU_DISPATCH_CASE(Int64) JIASU_DISPATCH_CASE(UInt8) JIASU_DISPATCH_CASE(UInt16) JIASU_DISPATCH_CASE(UInt32)
    JIASU_DISPATCH_CASE(UInt64) JIASU_DISPATCH_CASE(Float16) JIASU_DISPATCH_CASE(BFloat16)
    JIASU_DISPATCH_CASE(Float32) JIASU_DISPATCH_CASE(Float64) JIASU_DISPATCH_CASE(Complex64)
    JIASU_DISPATCH_CASE(Complex128)
#undef JIASU_DISPATCH_CASE
    default:
      throw BadArgument(std::string("no CPU loop for dtype ") + info(d).name);
  }
}

}  // namespace jiasu::ops
