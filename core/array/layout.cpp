#include "array/layout.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "support/error.hpp"

namespace jiasu {

int64_t Layout::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Layout::c_contiguous() const {
  if (size() == 0) return true;  // NumPy's rule: an empty array is contiguous whatever its strides
  int64_t expected = itemsize;
  for (int64_t i = ndim() - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t Layout::span_begin() const {
  int64_t begin = offset;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape[i] == 0) return offset;
    if (strides[i] < 0) begin += strides[i] * (shape[i] - 1);
  }
  return begin;
}

int64_t Layout::span_end() const {
  int64_t end = offset + itemsize;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape[i] == 0) return offset;
    if (strides[i] > 0) end += strides[i] * (shape[i] - 1);
  }
  return end;
}

int64_t checked_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw BadValue("negative dimensions are not allowed");
    if (d != 0 && n > INT64_MAX / d) throw BadValue("array is too big: its size overflows int64");
    n *= d;
  }
  return n;
}

Layout contiguous_layout(const Shape& shape, int64_t itemsize) {
  checked_size(shape);
  Layout layout;
  layout.shape = shape;
  layout.itemsize = itemsize;
  layout.strides.resize(shape.size());
  int64_t stride = itemsize;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    layout.strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return layout;
}

Layout index_layout(const Layout& layout, const std::vector<IndexItem>& items) {
  int64_t consumed = 0, ellipses = 0;
  for (const auto& item : items) {
    if (item.kind == IndexItem::Integer || item.kind == IndexItem::Slice) ++consumed;
    if (item.kind == IndexItem::Ellipsis) ++ellipses;
  }
  if (ellipses > 1) throw OutOfRange("an index can only have a single ellipsis ('...')");
  if (consumed > layout.ndim())
    throw OutOfRange("too many indices for array: array is " + std::to_string(layout.ndim()) +
                     "-dimensional, but " + std::to_string(consumed) + " were indexed");

  Layout out;
  out.itemsize = layout.itemsize;
  out.offset = layout.offset;
  int64_t axis = 0;
  auto keep = [&](int64_t extent, int64_t stride) {
    out.shape.push_back(extent);
    out.strides.push_back(stride);
  };
  for (const auto& item : items) {
    switch (item.kind) {
      case IndexItem::NewAxis:
        keep(1, 0);
        break;
      case IndexItem::Ellipsis:
        for (int64_t n = layout.ndim() - consumed; n > 0; --n, ++axis) keep(layout.shape[axis], layout.strides[axis]);
        break;
      case IndexItem::Integer: {
        int64_t extent = layout.shape[axis], i = item.index;
        if (i < -extent || i >= extent || !item.beyond_int64.empty())
          throw OutOfRange("index " + (item.beyond_int64.empty() ? std::to_string(i) : item.beyond_int64) +
                           " is out of bounds for axis " + std::to_string(axis) + " with size " + std::to_string(extent));
        if (i < 0) i += extent;
        out.offset += i * layout.strides[axis];
        ++axis;
        break;
      }
      case IndexItem::Slice: {
        // Python's slice.indices(extent), then the length of the selected range.
        int64_t extent = layout.shape[axis];
        int64_t step = std::max(item.step.value_or(1), -INT64_MAX);  // as Python clamps it: -step fits
        if (step == 0) throw BadValue("slice step cannot be zero");
        int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? extent - 1 : extent;
        auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
          if (!v) return fallback;
          int64_t x = *v < 0 ? *v + extent : *v;
          return std::clamp(x, lower, upper);
        };
        int64_t start = clamp(item.start, step < 0 ? upper : lower);
        int64_t stop = clamp(item.stop, step < 0 ? lower : upper);
        // Written so that no step, however large, overflows.
        int64_t length = step > 0 ? (stop > start ? (stop - start - 1) / step + 1 : 0)
                                  : (start > stop ? (start - stop - 1) / -step + 1 : 0);
        if (length > 0) out.offset += start * layout.strides[axis];
        keep(length, layout.strides[axis] * step);
        ++axis;
        break;
      }
    }
  }
  for (; axis < layout.ndim(); ++axis) keep(layout.shape[axis], layout.strides[axis]);
  return out;
}

Layout reshape_layout(const Layout& layout, Shape new_shape) {
  int64_t total = layout.size(), known = 1, unknown = -1;
  for (size_t i = 0; i < new_shape.size(); ++i) {
    if (new_shape[i] == -1) {
      if (unknown >= 0) throw BadValue("can only specify one unknown dimension (-1) in reshape");
      unknown = static_cast<int64_t>(i);
    } else if (new_shape[i] < 0) {
      throw BadValue("negative dimensions are not allowed in reshape");
    } else {
      known *= new_shape[i];
    }
  }
  if (unknown >= 0 && known != 0 && total % known == 0) new_shape[unknown] = total / known;
  if ((unknown >= 0 && (known == 0 || total % known != 0)) || (unknown < 0 && known != total)) {
    std::string dims;
    for (size_t i = 0; i < new_shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(new_shape[i]);
    throw BadValue("cannot reshape array of size " + std::to_string(total) + " into shape (" + dims + ")");
  }
  if (!layout.c_contiguous())
    throw BadValue("reshape needs a C-contiguous array; call .copy() first to make one");
  Layout out = contiguous_layout(new_shape, layout.itemsize);
  out.offset = layout.offset;
  return out;
}

void strided_copy(const void* src, const Layout& src_layout, void* dst, const Layout& dst_layout) {
  const int64_t n = src_layout.size(), ndim = src_layout.ndim(), itemsize = src_layout.itemsize;
  if (n == 0) return;
  std::vector<int64_t> index(ndim, 0);
  const char* s = static_cast<const char*>(src) + src_layout.offset;
  char* d = static_cast<char*>(dst) + dst_layout.offset;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(d, s, itemsize);
    // Advance the multi-index like an odometer, moving both pointers by their strides.
    for (int64_t axis = ndim - 1; axis >= 0; --axis) {
      s += src_layout.strides[axis];
      d += dst_layout.strides[axis];
      if (++index[axis] < src_layout.shape[axis]) break;
      s -= src_layout.strides[axis] * src_layout.shape[axis];
      d -= dst_layout.strides[axis] * dst_layout.shape[axis];
      index[axis] = 0;
    }
  }
}

}  // namespace jiasu
