#include "array/array.hpp"

#include <cstring>
#include <vector>

#include "runtime/device.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// The layout of `layout`'s elements relative to the first byte they span.
Layout rebased(Layout layout) {
  layout.offset -= layout.span_begin();
  return layout;
}

}  // namespace

unsigned char* Array::host_span(int64_t byte_offset) const {
  return reinterpret_cast<unsigned char*>(memory_->ptr()) + byte_offset;
}

Array::Array(DType dtype, Layout layout, std::shared_ptr<Allocation> memory)
    : dtype_(dtype),
      layout_(std::move(layout)),
      memory_(std::move(memory)),
      size_(layout_.size()),
      c_contiguous_(layout_.c_contiguous()) {}

Array Array::empty(const Shape& shape, DType dtype, int device, bool fortran_order) {
  Layout layout = fortran_order ? f_contiguous_layout(shape, itemsize(dtype)) : contiguous_layout(shape, itemsize(dtype));
  return Array(dtype, layout, allocate_device(device, layout.size() * layout.itemsize));
}

void Array::copy_to_host(void* host, cu::CUstream stream, bool sync) const {
  const auto in_use = memory_->hold();  // see the header; a freed array fails here, even an empty one
  if (size() == 0) return;
  if (on_host()) {
    const int64_t begin = layout_.span_begin();
    strided_copy(host_span(begin), rebased(layout_), host, contiguous_layout(shape(), layout_.itemsize));
    return;
  }
  activate(device());
  if (c_contiguous()) {
    copy_device_to_host(host, data(), nbytes(), stream, sync);
    return;
  }
  int64_t begin = layout_.span_begin();
  std::vector<unsigned char> span(layout_.span_end() - begin);
  copy_device_to_host(span.data(), memory_->ptr() + begin, span.size(), stream, true);
  strided_copy(span.data(), rebased(layout_), host, contiguous_layout(shape(), layout_.itemsize));
}

void Array::copy_from_host(const void* host, cu::CUstream stream, bool sync) const {
  const auto in_use = memory_->hold();  // see the header; a freed array fails here, even an empty one
  if (size() == 0) return;
  if (on_host()) {
    const int64_t begin = layout_.span_begin();
    strided_copy(host, contiguous_layout(shape(), layout_.itemsize), host_span(begin), rebased(layout_));
    return;
  }
  activate(device());
  if (c_contiguous()) {
    copy_host_to_device(data(), host, nbytes(), stream, sync);
    return;
  }
  // Read-modify-write of the spanned bytes keeps the elements between the view's own intact.
  int64_t begin = layout_.span_begin();
  std::vector<unsigned char> span(layout_.span_end() - begin);
  copy_device_to_host(span.data(), memory_->ptr() + begin, span.size(), stream, true);
  strided_copy(host, contiguous_layout(shape(), layout_.itemsize), span.data(), rebased(layout_));
  copy_host_to_device(memory_->ptr() + begin, span.data(), span.size(), stream, true);
}

void Array::fill(const void* value, cu::CUstream stream) const {
  const auto in_use = memory_->hold();  // see the header; a freed array fails here, even an empty one
  if (size() == 0) return;
  const size_t item = layout_.itemsize;
  if (on_host() && c_contiguous()) {
    unsigned char* out = host_span(layout_.offset);
    for (int64_t i = 0; i < size(); ++i) std::memcpy(out + i * item, value, item);
    return;
  }
  if (!on_host() && c_contiguous()) {
    activate(device());
    fill_device(data(), value, item, size(), stream);
    return;
  }
  std::vector<unsigned char> host(nbytes());
  for (size_t i = 0; i < host.size(); i += item) std::memcpy(&host[i], value, item);
  copy_from_host(host.data(), stream, true);
}

}  // namespace jiasu
