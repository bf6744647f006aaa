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
  bool f_contiguous() const;
  // The bytes [begin, end) of the allocation that some element touches; begin == end when empty.
  int64_t span_begin() const;
  int64_t span_end() const;
};

Layout contiguous_layout(const Shape& shape, int64_t itemsize);
Layout f_contiguous_layout(const Shape& shape, int64_t itemsize);  // Fortran order: the first axis varies fastest
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

// The layout reshaped; one dimension may be -1. Throws BadValue when the sizes differ or the view cannot be
// reshaped without a copy (Array::reshape copies then).
Layout reshape_layout(const Layout& layout, Shape new_shape);

// `axis` in [-ndim, ndim) as an index in [0, ndim); throws AxisError as NumPy words it.
int64_t normalize_axis(int64_t axis, int64_t ndim);
// Several axes, each normalised; throws AxisError for a repeated one.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim);

// Views that only change metadata (NumPy's rules and messages):
// the axes permuted (`axes` empty: reversed, as a.T);
Layout transpose_layout(const Layout& layout, const std::vector<int64_t>& axes);
// the length-1 axes removed (`axes` empty: all of them; a named axis of another length is a BadValue);
Layout squeeze_layout(const Layout& layout, const std::vector<int64_t>& axes);
// length-1 axes inserted at `axes` (positions in the result);
Layout expand_dims_layout(const Layout& layout, const std::vector<int64_t>& axes);
// broadcast to `shape` (stride 0 along the new and stretched axes); BadValue when it cannot be.
Layout broadcast_layout(const Layout& layout, const Shape& shape);
// The shape that arrays of these shapes broadcast to; BadValue naming them when there is none.
Shape broadcast_shapes(const std::vector<Shape>& shapes);
// The layout reshaped without copying, when the elements' strides allow it (NumPy's _attempt_nocopy_reshape);
// std::nullopt when a copy is needed. `new_shape` has no -1 left (see resolve_reshape).
std::optional<Layout> reshape_view(const Layout& layout, const Shape& new_shape);
// `new_shape` with its -1 resolved against `size` elements; BadValue as NumPy when it does not fit.
Shape resolve_reshape(int64_t size, Shape new_shape);
std::string shape_string(const Shape& shape);  // as NumPy writes shapes in messages: "(2,3)", "(5,)", "()"

// Copies the elements of a strided view between two host buffers, element by element.
void strided_copy(const void* src, const Layout& src_layout, void* dst, const Layout& dst_layout);

}  // namespace jiasu
