// A device ndarray: element type, layout, and a shared owner of the memory (views share it).
#pragma once

#include <memory>

#include "array/dtype.hpp"
#include "array/layout.hpp"
#include "runtime/memory.hpp"

namespace jiasu {

class Array {
 public:
  Array(DType dtype, Layout layout, std::shared_ptr<Allocation> memory);

  // Uninitialised contiguous memory on `device`, in C order (last axis fastest) or Fortran order.
  static Array empty(const Shape& shape, DType dtype, int device, bool fortran_order = false);

  DType dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  const Shape& shape() const { return layout_.shape; }
  const Shape& strides() const { return layout_.strides; }
  int64_t ndim() const { return layout_.ndim(); }
  int64_t size() const { return size_; }
  int64_t nbytes() const { return size() * layout_.itemsize; }
  int device() const { return memory_->device(); }
  bool on_host() const { return device() == kCpuDevice; }  // the CPU backend's arrays
  bool c_contiguous() const { return c_contiguous_; }
  const std::shared_ptr<Allocation>& memory() const { return memory_; }
  // Address of element [0, 0, ...]; throws InvalidArrayError once the memory is freed.
  cu::CUdeviceptr data() const { return memory_->ptr() + layout_.offset; }

  Array view(Layout layout) const { return Array(dtype_, std::move(layout), memory_); }
  Array index(const std::vector<IndexItem>& items) const { return view(index_layout(layout_, items)); }
  // The view reshaped (one dimension may be -1); BadValue when the strides allow no view (ops::reshape
  // copies then, as NumPy does).
  Array reshape(const Shape& shape) const { return view(reshape_layout(layout_, shape)); }

  // Each of these holds the memory while it runs (the bindings run them without the GIL, so another
  // thread may free() the array meanwhile), and fails on a freed array.
  // `host` is a C-contiguous buffer of nbytes() bytes. Strided views go through a host copy of
  // the bytes they span. With a stream the copy is asynchronous (`host` must then be pinned).
  void copy_to_host(void* host, cu::CUstream stream = nullptr, bool sync = true) const;
  void copy_from_host(const void* host, cu::CUstream stream = nullptr, bool sync = true) const;
  // Sets every element to the bytes at `value` (itemsize bytes).
  void fill(const void* value, cu::CUstream stream = nullptr) const;

 private:
  unsigned char* host_span(int64_t byte_offset) const;  // of a host array's memory
  DType dtype_;
  Layout layout_;
  std::shared_ptr<Allocation> memory_;
  // Of layout_, which never changes; every launch asks.
  int64_t size_;
  bool c_contiguous_;
};

}  // namespace jiasu
