// Reductions of jiasu arrays (sum, prod, max, min, mean, var, std, argmax, argmin, any, all) and cumsum,
// with NumPy's axes, keepdims, result types and errors, on both backends. What each operation computes
// per element lives in ops/runtime/reduce.h; this file plans the memory walk and picks the types.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "array/array.hpp"
#include "ops/elementwise.hpp"
#include "support/error.hpp"

namespace jiasu::ops {

enum class ReduceOp { Sum, Prod, Max, Min, Mean, Var, Std, ArgMax, ArgMin, Any, All };
const char* reduce_op_name(ReduceOp op);  // NumPy's function name: "sum", "argmax", ...

// One dimension of a planned reduction: its length and byte strides in the input and in the result.
struct ReduceDim {
  int64_t size = 1;
  int64_t stride = 0;
  int64_t out_stride = 0;
};

// How the elements are walked, after the reduced dimensions are separated from the kept ones and each
// group is collapsed (adjacent dimensions that address memory as one merged into one; length-1 ones dropped).
enum class ReduceCase {
  Rows,     // the innermost reduced dimension is contiguous: each result reduces runs of contiguous elements
            // (one run when it is the only reduced dimension; no kept ones: all of it)
  Columns,  // one reduced dimension, strided, under a contiguous innermost kept one: results side by side
  Strided,  // anything else
};

struct ReducePlan {
  std::vector<ReduceDim> kept;     // outermost first; the result's element order
  std::vector<ReduceDim> reduced;  // outermost first; C order of the reduced index (argmax's answer)
  int64_t kept_count = 1;          // results
  int64_t reduced_count = 1;       // elements per result
  ReduceCase kind = ReduceCase::Strided;
};

// Which dimensions of an ndim-array `axes` names (all of them when it is absent). Negative axes count from
// the end; throws AxisError for one outside [-ndim, ndim) and BadValue for a repeated one.
std::vector<bool> reduced_axes(int64_t ndim, const std::optional<std::vector<int64_t>>& axes);

// `in` reduced over the dimensions `reduced` marks. out_strides: the result's byte strides laid over all of
// in's dimensions (0 for the reduced ones of a reduction; cumsum's result has them all).
ReducePlan plan_reduction(const Layout& in, const std::vector<bool>& reduced, const Shape& out_strides);

struct ReduceRequest {
  ReduceOp op = ReduceOp::Sum;
  std::optional<std::vector<int64_t>> axes;  // absent: every axis
  bool keepdims = false;
  std::optional<DType> dtype;  // sum, prod, mean, var, std: the accumulator and result type
  int64_t ddof = 0;            // var, std
  const Array* out = nullptr;  // of the result's shape and type exactly
  // sum, prod, max, min: NumPy's initial=, combined with every result (and the result of an empty max or min),
  // converted to the result's type as an assignment would (a Python int out of its range: OverflowError).
  std::optional<Scalar> initial;
};

// The result's type under NumPy's rules; throws BadArgument naming the operation and type when the
// operation does not take it (complex inputs, dtype= on max/min, ...).
DType reduce_result_dtype(ReduceOp op, DType in, std::optional<DType> dtype);

// The reduction `request` asks for, on `a`'s device (a new array, or request.out). Throws BadValue for an
// empty reduction with no identity (max, min, argmax, argmin of no elements), InvalidArrayError when out
// lives elsewhere.
Array reduce(const Array& a, const ReduceRequest& request);

// Cumulative sum along `axis` (absent: of the flattened array), of sum's result type or `dtype`.
Array cumsum(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype);

// ---- the backends (reduce_cpu.cpp, reduce_cuda.cpp)
// The accumulator types: every element is widened to one of these before it is combined.
enum class AccType { Bool, Int64, UInt64, Float32, Float64 };
AccType accumulator_of(ReduceOp op, DType in, DType result);

// Runs `plan` over `in` (element [0...] at `in_data`) into `out` (at `out_data`, strides in plan.kept).
struct ReduceLaunch {
  ReduceOp op;
  DType in_dtype, out_dtype;
  AccType acc;
  const ReducePlan* plan;
  const void* in_data;
  void* out_data;
  int64_t ddof;
};
void reduce_on_host(const ReduceLaunch& launch);
void reduce_on_gpu(const ReduceLaunch& launch, int device);
// cumsum along the reduced dimensions of `plan`, in C order (out strides in every ReduceDim's out_stride).
void cumsum_on_host(const ReduceLaunch& launch);
void cumsum_on_gpu(const ReduceLaunch& launch, int device);

}  // namespace jiasu::ops
