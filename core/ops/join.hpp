// Operations that build one array from others by copying their elements: concatenate and stack (NumPy's
// names, rules and messages; the copies are the elementwise engine's assign).
#pragma once

#include <vector>

#include "array/array.hpp"

namespace jiasu::ops {

// NumPy's reshape: a view when the strides allow one, else a reshaped C-contiguous copy.
Array reshape(const Array& a, Shape shape);

// NumPy's concatenate along `axis`: the other axes equal, the result of the arrays' promoted dtype, on their
// one device.
Array concatenate(const std::vector<Array>& arrays, int64_t axis);
// NumPy's stack: the arrays, of one shape, joined along a new axis at `axis`.
Array stack(const std::vector<Array>& arrays, int64_t axis);

}  // namespace jiasu::ops
