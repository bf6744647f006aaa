// Operations that build one array from others by copying elements: element copies between views,
// concatenate and stack (NumPy's names, rules and messages).
#pragma once

#include <vector>

#include "array/array.hpp"

namespace jiasu {

// Copies src's elements into dst, element by element; both of one shape and dtype, on one device.
// Contiguous device views copy on the device; other device views go through host memory.
void copy_elements(const Array& dst, const Array& src);

// NumPy's concatenate along `axis` (arrays of one dtype and device; the other axes equal).
Array concatenate(const std::vector<Array>& arrays, int64_t axis);
// NumPy's stack: the arrays, of one shape, joined along a new axis at `axis`.
Array stack(const std::vector<Array>& arrays, int64_t axis);

}  // namespace jiasu
