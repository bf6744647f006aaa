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

bool Layout::f_contiguous() const {
  if (size() == 0) return true;
  int64_t expected = itemsize;
  for (int64_t i = 0; i < ndim(); ++i) {
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

Layout f_contiguous_layout(const Shape& shape, int64_t itemsize) {
  Layout layout = contiguous_layout(shape, itemsize);
  int64_t stride = itemsize;
  for (size_t i = 0; i < shape.size(); ++i) {
    layout.strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return layout;
}

std::string shape_string(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

int64_t normalize_axis(int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw AxisError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t axis : axes) {
    const int64_t a = normalize_axis(axis, ndim);
    if (std::find(out.begin(), out.end(), a) != out.end()) throw AxisError("repeated axis");
    out.push_back(a);
  }
  return out;
}

Layout transpose_layout(const Layout& layout, const std::vector<int64_t>& axes) {
  const int64_t n = layout.ndim();
  std::vector<int64_t> order;
  if (axes.empty()) {
    for (int64_t i = n - 1; i >= 0; --i) order.push_back(i);
  } else {
    if (static_cast<int64_t>(axes.size()) != n) throw BadValue("axes don't match array");
    for (int64_t axis : axes) order.push_back(normalize_axis(axis, n));
    for (int64_t i = 0; i < n; ++i)
      if (std::count(order.begin(), order.end(), i) != 1) throw BadValue("repeated axis in transpose");
  }
  Layout out = layout;
  for (int64_t i = 0; i < n; ++i) {
    out.shape[i] = layout.shape[order[i]];
    out.strides[i] = layout.strides[order[i]];
  }
  return out;
}

Layout squeeze_layout(const Layout& layout, const std::vector<int64_t>& axes) {
  const std::vector<int64_t> named = normalize_axes(axes, layout.ndim());
  for (int64_t a : named)
    if (layout.shape[a] != 1) throw BadValue("cannot select an axis to squeeze out which has size not equal to one");
  Layout out = layout;
  out.shape.clear();
  out.strides.clear();
  for (int64_t i = 0; i < layout.ndim(); ++i) {
    const bool drop = axes.empty() ? layout.shape[i] == 1 : std::find(named.begin(), named.end(), i) != named.end();
    if (drop) continue;
    out.shape.push_back(layout.shape[i]);
    out.strides.push_back(layout.strides[i]);
  }
  return out;
}

Layout expand_dims_layout(const Layout& layout, const std::vector<int64_t>& axes) {
  const int64_t n = layout.ndim() + static_cast<int64_t>(axes.size());
  const std::vector<int64_t> at = normalize_axes(axes, n);
  Layout out = layout;
  out.shape.clear();
  out.strides.clear();
  for (int64_t i = 0, from = 0; i < n; ++i) {
    if (std::find(at.begin(), at.end(), i) != at.end()) {
      out.shape.push_back(1);
      out.strides.push_back(0);
    } else {
      out.shape.push_back(layout.shape[from]);
      out.strides.push_back(layout.strides[from]);
      ++from;
    }
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t n = 0;
  for (const Shape& s : shapes) n = std::max(n, s.size());
  Shape out(n, 1);
  for (const Shape& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = out[n - s.size() + i];
      if (s[i] == d || s[i] == 1) continue;
      if (d != 1) {
        std::string message = "operands could not be broadcast together with shapes ";  // NumPy's, to the space
        for (const Shape& t : shapes) message += shape_string(t) + " ";
        throw BadValue(message);
      }
      d = s[i];
    }
  }
  return out;
}

Layout broadcast_layout(const Layout& layout, const Shape& shape) {
  const int64_t n = static_cast<int64_t>(shape.size()), extra = n - layout.ndim();
  auto refuse = [&] {
    return BadValue("cannot broadcast an array of shape " + shape_string(layout.shape) + " to shape " +
                    shape_string(shape));
  };
  if (extra < 0) throw refuse();
  checked_size(shape);
  Layout out = layout;
  out.shape = shape;
  out.strides.assign(n, 0);
  for (int64_t i = 0; i < layout.ndim(); ++i) {
    const int64_t have = layout.shape[i], want = shape[extra + i];
    if (have == want) out.strides[extra + i] = layout.strides[i];
    else if (have != 1) throw refuse();
  }
  return out;
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

Shape resolve_reshape(int64_t total, Shape new_shape) {
  int64_t known = 1, unknown = -1;
  for (size_t i = 0; i < new_shape.size(); ++i) {
    if (new_shape[i] == -1) {
      if (unknown >= 0) throw BadValue("can only specify one unknown dimension (-1) in reshape");
      unknown = static_cast<int64_t>(i);
    } else if (new_shape[i] < 0) {
      throw BadValue("negative dimensions are not allowed in reshape");
    } else {
      known = new_shape[i] != 0 && known > INT64_MAX / new_shape[i] ? -1 : known * new_shape[i];
    }
  }
  if (unknown >= 0 && known > 0 && total % known == 0) new_shape[unknown] = total / known;
  if ((unknown >= 0 && (known <= 0 || total % known != 0)) || (unknown < 0 && known != total))
    throw BadValue("cannot reshape array of size " + std::to_string(total) + " into shape " + shape_string(new_shape));
  return new_shape;
}

std::optional<Layout> reshape_view(const Layout& layout, const Shape& new_shape) {
  Layout out;
  out.shape = new_shape;
  out.itemsize = layout.itemsize;
  out.offset = layout.offset;
  if (layout.c_contiguous()) {
    out = contiguous_layout(new_shape, layout.itemsize);
    out.offset = layout.offset;
    return out;
  }
  // The old axes of length > 1, grouped with the new ones so that each group spans the same elements; a
  // group of old axes is one strided run only when each axis steps over the next one exactly.
  Shape old_shape, old_strides;
  for (int64_t i = 0; i < layout.ndim(); ++i)
    if (layout.shape[i] != 1) old_shape.push_back(layout.shape[i]), old_strides.push_back(layout.strides[i]);
  out.strides.assign(new_shape.size(), 0);
  const size_t old_n = old_shape.size(), new_n = new_shape.size();
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_n && oi < old_n) {
    int64_t np_ = new_shape[ni], op = old_shape[oi];
    while (np_ != op) {
      if (np_ < op) np_ *= new_shape[nj++];
      else op *= old_shape[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (old_strides[k] != old_shape[k + 1] * old_strides[k + 1]) return std::nullopt;
    out.strides[nj - 1] = old_strides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) out.strides[k - 1] = out.strides[k] * new_shape[k];
    ni = nj++;
    oi = oj++;
  }
  // Trailing length-1 axes of the new shape: any stride does; NumPy repeats the last one.
  for (size_t k = ni; k < new_n; ++k) out.strides[k] = ni ? out.strides[ni - 1] : layout.itemsize;
  return out;
}

Layout reshape_layout(const Layout& layout, Shape new_shape) {
  new_shape = resolve_reshape(layout.size(), std::move(new_shape));
  if (layout.size() == 0) {
    Layout out = contiguous_layout(new_shape, layout.itemsize);
    out.offset = layout.offset;
    return out;
  }
  std::optional<Layout> view = reshape_view(layout, new_shape);
  if (!view) throw BadValue("this view cannot be reshaped to " + shape_string(new_shape) + " without a copy");
  return *view;
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
