// Host arrays for the array-operation tests: made from values, read back, and used as operands.
#pragma once

#include <vector>

#include "ops/elementwise.hpp"

namespace jiasu::testing {

// A C-contiguous CPU array of `shape` (default: 1-D) holding `values`.
template <typename T>
Array host_array(const std::vector<T>& values, DType dtype, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  Array a = Array::empty(shape, dtype, kCpuDevice);
  a.copy_from_host(values.data());
  return a;
}

template <typename T>
std::vector<T> values_of(const Array& a) {
  std::vector<T> out(a.size());
  a.copy_to_host(out.data());
  return out;
}

inline ops::Operand of(const Array& a) {
  ops::Operand o;
  o.array = &a;
  return o;
}

}  // namespace jiasu::testing
