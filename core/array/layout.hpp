// Shape, strides and offset of an array view, and the index arithmetic on them (NumPy's rules).
// Pure metadata: no memory is touched here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jiasu {

using Shape = std::vector<int64_t>;

struct Layout {
  Shape shape;
  Shape strides;       // in bytes, may be negative or zero
  int64_t offset = 0;  // bytes from the start of the allocation to element [0, 0, ...]
  int64_t itemsize = 1;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const;
  bool c_contiguous() const;
  // The bytes [begin, end) of the allocation that some element touches; begin == end when empty.
  int64_t span_begin() const;
  int64_t span_end() const;
};

Layout contiguous_layout(const Shape& shape, int64_t itemsize);
// Checks every dimension is >= 0 and the element count fits in int64; throws BadValue.
int64_t checked_size(const Shape& shape);

// One item of a subscript: a[2], a[1:8:2], a[None], a[...].
struct IndexItem {
  enum Kind { Integer, Slice, NewAxis, Ellipsis } kind = Integer;
  int64_t index = 0;                      // Integer
  std::string beyond_int64;               // Integer: the digits of an index int64 cannot hold (always out of bounds)
  std::optional<int64_t> start, stop, step;  // Slice; missing means Python's default
};

// The view selected by `items` (basic indexing). Throws OutOfRange where NumPy raises IndexError (an
// index outside a dimension, too many indices, two ellipses) and BadValue for a zero step.
Layout index_layout(const Layout& layout, const std::vector<IndexItem>& items);

// A contiguous layout reshaped; one dimension may be -1. Throws BadValue when the sizes differ or the
// layout is not C-contiguous.
Layout reshape_layout(const Layout& layout, Shape new_shape);

// Copies the elements of a strided view between two host buffers, element by element.
void strided_copy(const void* src, const Layout& src_layout, void* dst, const Layout& dst_layout);

}  // namespace jiasu
