// How the elementwise engine walks its operands: the broadcast shape with each operand's byte strides
// (0 along broadcast dimensions), dimensions of extent 1 dropped and neighbours merged wherever every
// operand steps through them as through one (a contiguous array collapses to one dimension).
#pragma once

#include <cstdint>
#include <string>

#include "array/layout.hpp"

namespace jiasu::ops {

constexpr int kMaxOperands = 4;   // the output and up to three inputs
constexpr int kMaxDims = 64;      // NumPy's limit

struct Iteration {
  int operands = 0;
  int ndim = 0;  // after collapsing: 0 for a single element (or none)
  int64_t size = 1;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};  // bytes, innermost dimension last
};

// `layouts[k]` is operand k's layout (operand 0 the output), or null for a scalar (stride 0 everywhere);
// each broadcasts to `shape` (checked before).
Iteration make_iteration(const Shape& shape, const Layout* const* layouts, int operands);

}  // namespace jiasu::ops
