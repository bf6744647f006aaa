// Whole-array arithmetic for composing jiasu.nn's operations out of the elementwise engine and the reductions
// (ops/elementwise.hpp, ops/reduce.hpp): each call is one engine call on the arrays' device.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/elementwise.hpp"
#include "ops/reduce.hpp"

namespace jiasu::dnn::math {

inline ops::Operand operand(const Array& a) {
  ops::Operand o;
  o.array = &a;
  return o;
}
// A Python float: weak, so it takes the other operand's type (NEP 50).
inline ops::Operand weak_float(double value) {
  ops::Operand o;
  o.scalar.dtype = DType::Float64;
  o.scalar.weak = true;
  o.scalar.f = value;
  return o;
}

inline Array apply(ops::Ufunc op, const Array& a) {
  const ops::Operand in[] = {operand(a)};
  return ops::apply(op, in, 1);
}
inline Array apply(ops::Ufunc op, const Array& a, const Array& b) {
  const ops::Operand in[] = {operand(a), operand(b)};
  return ops::apply(op, in, 2);
}
inline Array apply(ops::Ufunc op, const Array& a, double b) {
  const ops::Operand in[] = {operand(a), weak_float(b)};
  return ops::apply(op, in, 2);
}
inline Array apply(ops::Ufunc op, double a, const Array& b) {
  const ops::Operand in[] = {weak_float(a), operand(b)};
  return ops::apply(op, in, 2);
}
// where(condition, a, 0).
inline Array where_else_zero(const Array& condition, const Array& a) {
  ops::Operand zero = weak_float(0);
  const ops::Operand in[] = {operand(condition), operand(a), zero};
  return ops::apply(ops::Ufunc::Where, in, 3);
}

// The reduction `op` of `a` along `axis`, the axis kept as length 1 unless `keepdims` is false.
inline Array reduce(ops::ReduceOp op, const Array& a, std::vector<int64_t> axes, bool keepdims = true) {
  ops::ReduceRequest request;
  request.op = op;
  request.axes = std::move(axes);
  request.keepdims = keepdims;
  return ops::reduce(a, request);
}

}  // namespace jiasu::dnn::math
