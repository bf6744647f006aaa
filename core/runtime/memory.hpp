// Device memory (from the driver's stream-ordered pool), memory owned by other libraries, pinned host
// memory, and copies between them.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "runtime/driver.hpp"

namespace jiasu {

// The device ordinal of host memory: arrays of the CPU backend live there.
constexpr int kCpuDevice = -1;

// One block of memory (device, host, or another library's). Views of an array share one Allocation.
// release() (Array.free()) ends the arrays' use of it at once; the memory itself goes back when nothing
// holds it any more: not the Allocation (which drops its own reference at release()), nor any hold()
// given to a consumer outside jiasu's arrays (a NumPy view, a DLPack consumer, a copy running without the
// GIL). So no export can outlive the memory it points at.
class Allocation {
 public:
  // `owner` returns the memory when the last reference to it is dropped (empty: nothing to return).
  Allocation(cu::CUdeviceptr ptr, size_t bytes, int device, std::shared_ptr<void> owner)
      : ptr_(ptr), bytes_(bytes), device_(device), owner_(std::move(owner)) {}
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  // Throws InvalidArrayError once released.
  cu::CUdeviceptr ptr() const {
    if (released()) throw_released();
    return ptr_;
  }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  bool released() const { return released_.load(std::memory_order_relaxed); }
  // Every array over the memory fails with a clear error from now on; the memory goes back as soon as no
  // hold is left (at once when there is none). A second call does nothing.
  void release();
  // Keeps the memory until the result is dropped, even past release(). Throws InvalidArrayError once released.
  std::shared_ptr<const void> hold() const;
  // For an export that never says when it ends (__cuda_array_interface__, __array_interface__: the consumer
  // keeps one of the arrays alive instead): from now on release() keeps the memory until this Allocation
  // itself is gone.
  void hold_while_alive();

 private:
  [[noreturn]] static void throw_released();
  cu::CUdeviceptr ptr_;
  size_t bytes_;
  int device_;
  std::atomic<bool> released_{false};  // read at every launch: a plain load
  mutable std::mutex mutex_;           // guards owner_ and held_while_alive_
  std::shared_ptr<void> owner_;
  bool held_while_alive_ = false;
};

// Allocates on `device` from its default memory pool, ordered on `stream` (0: the legacy stream);
// on kCpuDevice, 64-byte aligned host memory.
std::shared_ptr<Allocation> allocate_device(int device, size_t bytes, cu::CUstream stream = nullptr);

// Wraps memory that another library owns; `keep_alive` holds its owner until the last view is gone.
std::shared_ptr<Allocation> adopt_device_memory(cu::CUdeviceptr ptr, size_t bytes, int device,
                                                std::shared_ptr<void> keep_alive);

// The device a pointer was allocated on, or -1 for host or unknown memory.
int pointer_device(cu::CUdeviceptr ptr);

// Page-locked host memory, for fast and asynchronous transfers.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Host memory that kernels on `device()` read and write in place, with no copies (Numba's mapped_array and
// managed_array): page-locked host memory mapped into the device's address space (`portable`: page-locked
// for every context; `write_combined`: faster for the device to read, very slow for the host to read), or
// managed memory, which the driver moves between host and device on demand (`attach_global`: any stream
// may use it at once; else the host alone until a stream is attached). Made on the current device.
class HostDeviceMemory {
 public:
  static std::unique_ptr<HostDeviceMemory> mapped(size_t bytes, bool portable, bool write_combined);
  static std::unique_ptr<HostDeviceMemory> managed(size_t bytes, bool attach_global);
  ~HostDeviceMemory();
  HostDeviceMemory(const HostDeviceMemory&) = delete;
  HostDeviceMemory& operator=(const HostDeviceMemory&) = delete;
  void* host() const { return host_; }
  cu::CUdeviceptr device_ptr() const { return device_ptr_; }  // the host bytes' address in kernels
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  HostDeviceMemory(void* host, cu::CUdeviceptr device_ptr, size_t bytes, int device, bool managed)
      : host_(host), device_ptr_(device_ptr), bytes_(bytes), device_(device), managed_(managed) {}
  void* host_;
  cu::CUdeviceptr device_ptr_;
  size_t bytes_;
  int device_;
  bool managed_;
};

// Page-locks ordinary host memory in place so that copies from and to it run at DMA speed with no
// staging. Registrations count against a budget (JIASU_PIN_HOST_BYTES, default 1 GiB) so a program cannot
// lock most of the machine's memory by accident. Returns false (and changes nothing) when the budget is
// spent or the driver refuses, e.g. for memory that is already registered.
bool register_host_memory(void* ptr, size_t bytes);
// Undoes register_host_memory; harmless for memory that was never registered.
void unregister_host_memory(void* ptr);

// Copies on `stream`; synchronous ones return when the data has arrived.
void copy_host_to_device(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream stream, bool sync);
void copy_device_to_host(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream stream, bool sync);
void copy_device_to_device(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream stream,
                           bool sync);

// Fills `count` elements of `element_size` bytes (1, 2 or a multiple of 4) with the bit pattern `value`.
void fill_device(cu::CUdeviceptr dst, const void* value, size_t element_size, size_t count,
                 cu::CUstream stream);

}  // namespace jiasu
