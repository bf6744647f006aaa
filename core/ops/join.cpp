#include "ops/join.hpp"

#include <string>

#include "array/promotion.hpp"
#include "ops/elementwise.hpp"
#include "runtime/driver.hpp"
#include "support/error.hpp"

namespace jiasu::ops {
namespace {

// One device for every array (mixing is the caller's error); returns their promoted dtype.
DType common_dtype(const std::vector<Array>& arrays, const char* what) {
  if (arrays.empty()) throw BadValue(std::string("need at least one array to ") + what);
  for (const Array& a : arrays) {
    if (a.device() != arrays[0].device())
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                              std::string("cannot ") + what + " arrays on different devices (" +
                                  std::to_string(arrays[0].device()) + " and " + std::to_string(a.device()) +
                                  "); move them with jiasu.asarray(x, device=...)");
  }
  DType dtype = arrays[0].dtype();
  for (const Array& a : arrays) dtype = *promote_types(dtype, a.dtype());
  return dtype;
}

}  // namespace

Array reshape(const Array& a, Shape shape) {
  shape = resolve_reshape(a.size(), std::move(shape));
  if (a.size() == 0) return a.reshape(shape);
  if (std::optional<Layout> same = reshape_view(a.layout(), shape)) return a.view(*same);
  return astype(a, a.dtype()).reshape(shape);
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis) {
  const DType dtype = common_dtype(arrays, "concatenate");
  const Array& first = arrays[0];
  if (first.ndim() == 0) throw BadValue("zero-dimensional arrays cannot be concatenated");
  axis = normalize_axis(axis, first.ndim());
  Shape shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Array& a = arrays[i];
    if (a.ndim() != first.ndim())
      throw BadValue("all the input arrays must have same number of dimensions, but the array at index 0 has " +
                     std::to_string(first.ndim()) + " dimension(s) and the array at index " + std::to_string(i) +
                     " has " + std::to_string(a.ndim()) + " dimension(s)");
    for (int64_t d = 0; d < a.ndim(); ++d)
      if (d != axis && a.shape()[d] != first.shape()[d])
        throw BadValue("all the input array dimensions except for the concatenation axis must match exactly, but "
                       "along dimension " + std::to_string(d) + ", the array at index 0 has size " +
                       std::to_string(first.shape()[d]) + " and the array at index " + std::to_string(i) +
                       " has size " + std::to_string(a.shape()[d]));
    shape[axis] += a.shape()[axis];
  }
  Array out = Array::empty(shape, dtype, first.device());
  int64_t at = 0;
  for (const Array& a : arrays) {
    Layout part = out.layout();
    part.offset += at * part.strides[axis];
    part.shape[axis] = a.shape()[axis];
    assign(out.view(part), a);
    at += a.shape()[axis];
  }
  return out;
}

Array stack(const std::vector<Array>& arrays, int64_t axis) {
  common_dtype(arrays, "stack");  // the devices, before the shapes
  axis = normalize_axis(axis, arrays[0].ndim() + 1);
  std::vector<Array> expanded;
  for (const Array& a : arrays) {
    if (a.shape() != arrays[0].shape()) throw BadValue("all input arrays must have the same shape");
    expanded.push_back(a.view(expand_dims_layout(a.layout(), {axis})));
  }
  return concatenate(expanded, axis);
}

}  // namespace jiasu::ops
