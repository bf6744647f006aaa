#include "array/join.hpp"

#include <string>

#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// One device and one dtype for every array: mixing is the caller's error.
void require_alike(const std::vector<Array>& arrays, const char* what) {
  if (arrays.empty()) throw BadValue(std::string("need at least one array to ") + what);
  for (const Array& a : arrays) {
    if (a.device() != arrays[0].device())
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                              std::string("cannot ") + what + " arrays on different devices (" +
                                  std::to_string(arrays[0].device()) + " and " + std::to_string(a.device()) +
                                  "); move them with jiasu.asarray(x, device=...)");
    if (a.dtype() != arrays[0].dtype())
      throw BadArgument(std::string("cannot ") + what + " arrays of dtypes " + info(arrays[0].dtype()).name +
                        " and " + info(a.dtype()).name + ": convert them with astype() first");
  }
}

}  // namespace

void copy_elements(const Array& dst, const Array& src) {
  if (dst.shape() != src.shape() || dst.dtype() != src.dtype() || dst.device() != src.device())
    throw BadValue("copy_elements needs arrays of one shape, dtype and device");
  const auto held_dst = dst.memory()->hold(), held_src = src.memory()->hold();
  if (dst.size() == 0) return;
  if (!dst.on_host() && dst.c_contiguous() && src.c_contiguous()) {
    activate(dst.device());
    copy_device_to_device(dst.data(), src.data(), dst.nbytes(), nullptr, false);
    return;
  }
  std::vector<unsigned char> host(src.nbytes());
  src.copy_to_host(host.data());
  dst.copy_from_host(host.data());
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis) {
  require_alike(arrays, "concatenate");
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
  Array out = Array::empty(shape, first.dtype(), first.device());
  int64_t at = 0;
  for (const Array& a : arrays) {
    Layout part = out.layout();
    part.offset += at * part.strides[axis];
    part.shape[axis] = a.shape()[axis];
    copy_elements(out.view(part), a);
    at += a.shape()[axis];
  }
  return out;
}

Array stack(const std::vector<Array>& arrays, int64_t axis) {
  require_alike(arrays, "stack");
  axis = normalize_axis(axis, arrays[0].ndim() + 1);
  std::vector<Array> expanded;
  for (const Array& a : arrays) {
    if (a.shape() != arrays[0].shape()) throw BadValue("all input arrays must have the same shape");
    expanded.push_back(a.view(expand_dims_layout(a.layout(), {axis})));
  }
  return concatenate(expanded, axis);
}

}  // namespace jiasu
