#include "runtime/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <sys/mman.h>

#include "runtime/device.hpp"
#include "runtime/graph.hpp"
#include "runtime/staging.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// Cache-line aligned, so that kernels' vector loads and NumPy's views of it are as fast as they can be.
constexpr size_t kHugePage = 2 << 20, kLargeHostBlock = 4 << 20;

// Freed large host blocks, kept (up to kHeldLimit bytes) for the next allocation of the same rounded size, as
// the device pool keeps device memory: an operation's fresh output then lands on pages already faulted in,
// which otherwise costs more than an elementwise pass over them.
class HostBlockCache {
 public:
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(rounded);
    if (it == blocks_.end()) return nullptr;
    void* block = it->second;
    blocks_.erase(it);
    held_ -= rounded;
    return block;
  }
  void give(void* block, size_t rounded) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (held_ + rounded <= kHeldLimit) {
        blocks_.emplace(rounded, block);
        held_ += rounded;
        return;
      }
    }
    std::free(block);
  }

 private:
  static constexpr size_t kHeldLimit = size_t(1) << 30;
  std::mutex mutex_;
  std::multimap<size_t, void*> blocks_;
  size_t held_ = 0;
};

HostBlockCache& host_blocks() {
  static auto* cache = new HostBlockCache();  // lives to the exit: blocks may be freed during teardown
  return *cache;
}

std::shared_ptr<Allocation> allocate_host(size_t bytes) {
  // Large blocks on huge pages, as NumPy asks for its own (their first touch faults 2 MiB at a time).
  const bool large = bytes >= kLargeHostBlock;
  const size_t align = large ? kHugePage : 64, rounded = (bytes + align - 1) / align * align;
  void* ptr = large ? host_blocks().take(rounded) : nullptr;
  if (!ptr && bytes) {
    ptr = std::aligned_alloc(align, rounded);
    if (ptr && large) madvise(ptr, rounded, MADV_HUGEPAGE);  // a hint
  }
  if (bytes && !ptr)
    throw OutOfMemoryError(cu::CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
                           "out of host memory: cannot allocate " + std::to_string(bytes) + " bytes");
  std::shared_ptr<void> owner = large ? std::shared_ptr<void>(ptr, [rounded](void* p) { host_blocks().give(p, rounded); })
                                      : std::shared_ptr<void>(ptr, std::free);
  return std::make_shared<Allocation>(reinterpret_cast<cu::CUdeviceptr>(ptr), bytes, kCpuDevice, std::move(owner));
}

}  // namespace

void Allocation::throw_released() {
  throw InvalidArrayError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                          "this array's memory was freed (Array.free()); it can no longer be used");
}

void Allocation::release() {
  std::shared_ptr<void> dropped;  // returned after unlocking: the owner may be another library's object
  std::lock_guard<std::mutex> lock(mutex_);
  released_.store(true, std::memory_order_relaxed);
  if (!held_while_alive_) dropped = std::move(owner_);
}

std::shared_ptr<const void> Allocation::hold() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (released()) throw_released();
  return owner_;
}

void Allocation::hold_while_alive() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (released()) throw_released();
  held_while_alive_ = true;
}

namespace {

// Memory asked for while this thread captures a graph: the graph uses it at every replay, so it keeps it. Not
// from the stream-ordered pool, whose allocations on the capturing stream would become the graph's own.
std::shared_ptr<Allocation> allocate_for_capture(int device, size_t bytes) {
  cu::CUdeviceptr ptr = 0;
  if (bytes > 0) cu::check(cu::driver().cuMemAlloc(&ptr, bytes), "cuMemAlloc");
  std::shared_ptr<void> owner(reinterpret_cast<void*>(ptr), [device](void* memory) {
    if (!memory) return;
    try {
      activate(device);
      cu::driver().cuMemFree(reinterpret_cast<cu::CUdeviceptr>(memory));
    } catch (const Error&) {
    }
  });
  auto allocation = std::make_shared<Allocation>(ptr, bytes, device, std::move(owner));
  keep_for_capture(allocation);
  return allocation;
}

}  // namespace

std::shared_ptr<Allocation> allocate_device(int device, size_t bytes, cu::CUstream stream) {
  if (device == kCpuDevice) return allocate_host(bytes);
  activate(device);
  if (capturing()) [[unlikely]] return allocate_for_capture(device, bytes);
  cu::CUdeviceptr ptr = 0;
  if (bytes > 0) {
    cu::CUresult r = cu::driver().cuMemAllocAsync(&ptr, bytes, stream);
    if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
      MemoryInfo info = memory_info(device);
      throw OutOfMemoryError(r, "CUDA_ERROR_OUT_OF_MEMORY",
                             "out of device memory: cannot allocate " + std::to_string(bytes) +
                                 " bytes on device " + std::to_string(device) + " (" +
                                 std::to_string(info.free) + " of " + std::to_string(info.total) +
                                 " bytes free)");
    }
    cu::check(r, "cuMemAllocAsync");
  }
  // Back to the pool, ordered on the legacy stream, when the last reference goes.
  std::shared_ptr<void> owner(reinterpret_cast<void*>(ptr), [device](void* memory) {
    if (!memory) return;
    try {
      activate(device);
      cu::driver().cuMemFreeAsync(reinterpret_cast<cu::CUdeviceptr>(memory), nullptr);
    } catch (const Error&) {
      // At interpreter exit the driver may already be shut down; nothing is left to free then.
    }
  });
  return std::make_shared<Allocation>(ptr, bytes, device, std::move(owner));
}

std::shared_ptr<Allocation> adopt_device_memory(cu::CUdeviceptr ptr, size_t bytes, int device,
                                                std::shared_ptr<void> keep_alive) {
  return std::make_shared<Allocation>(ptr, bytes, device, std::move(keep_alive));
}

int pointer_device(cu::CUdeviceptr ptr) {
  int ordinal = -1;
  if (cu::driver().cuPointerGetAttribute(&ordinal, cu::kPointerAttrDeviceOrdinal, ptr) != cu::CUDA_SUCCESS)
    return -1;
  return ordinal;
}

namespace {

// The driver's result of a host memory allocation of `bytes` (`what`: its kind, for the message).
void check_host_allocation(cu::CUresult r, size_t bytes, const char* what, const char* call) {
  if (r == cu::CUDA_ERROR_OUT_OF_MEMORY)
    throw OutOfMemoryError(r, "CUDA_ERROR_OUT_OF_MEMORY",
                           "cannot allocate " + std::to_string(bytes) + " bytes of " + what);
  cu::check(r, call);
}

// Raises CUDA_ERROR_NOT_SUPPORTED naming what the device lacks.
void require_support(bool supported, int device, const std::string& what) {
  if (!supported)
    throw CudaError(cu::CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
                    "device " + std::to_string(device) + " (" + device_properties(device).name + ") does not support " +
                        what);
}

}  // namespace

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  activate(current_device());
  check_host_allocation(cu::driver().cuMemHostAlloc(&data_, bytes ? bytes : 1, cu::kMemHostAllocPortable), bytes,
                        "pinned host memory", "cuMemHostAlloc");
}

PinnedBuffer::~PinnedBuffer() {
  if (data_) cu::driver().cuMemFreeHost(data_);
}

std::unique_ptr<HostDeviceMemory> HostDeviceMemory::mapped(size_t bytes, bool portable, bool write_combined) {
  const int device = current_device();
  require_support(device_properties(device).can_map_host_memory, device, "mapped host memory");
  activate(device);
  const auto& d = cu::driver();
  const unsigned flags = cu::kMemHostAllocDeviceMap | (portable ? cu::kMemHostAllocPortable : 0) |
                         (write_combined ? cu::kMemHostAllocWriteCombined : 0);
  void* host = nullptr;
  check_host_allocation(d.cuMemHostAlloc(&host, bytes ? bytes : 1, flags), bytes, "mapped host memory",
                        "cuMemHostAlloc");
  cu::CUdeviceptr device_ptr = 0;
  if (cu::CUresult r = d.cuMemHostGetDevicePointer(&device_ptr, host, 0); r != cu::CUDA_SUCCESS) {
    d.cuMemFreeHost(host);
    cu::check(r, "cuMemHostGetDevicePointer");
  }
  return std::unique_ptr<HostDeviceMemory>(new HostDeviceMemory(host, device_ptr, bytes, device, false));
}

std::unique_ptr<HostDeviceMemory> HostDeviceMemory::managed(size_t bytes, bool attach_global) {
  const int device = current_device();
  require_support(device_properties(device).managed_memory, device, "managed memory");
  activate(device);
  cu::CUdeviceptr ptr = 0;
  check_host_allocation(cu::driver().cuMemAllocManaged(&ptr, bytes ? bytes : 1,
                                                       attach_global ? cu::kMemAttachGlobal : cu::kMemAttachHost),
                        bytes, "managed memory", "cuMemAllocManaged");
  return std::unique_ptr<HostDeviceMemory>(
      new HostDeviceMemory(reinterpret_cast<void*>(ptr), ptr, bytes, device, true));
}

HostDeviceMemory::~HostDeviceMemory() {
  try {
    activate(device_);
    if (managed_)
      cu::driver().cuMemFree(device_ptr_);
    else
      cu::driver().cuMemFreeHost(host_);
  } catch (const Error&) {
    // At interpreter exit the driver may already be shut down; nothing is left to free then.
  }
}

// Synchronous copies of pageable host memory (1 MiB and more by default) go through the staging engine,
// several times faster than the driver's own pageable path; it declines (returns false) the rest.
namespace {

std::mutex registered_mutex;
std::map<void*, size_t> registered;  // page-locked ranges by start address
size_t registered_bytes = 0;

size_t register_budget() {
  static const size_t budget = [] {
    const char* text = std::getenv("JIASU_PIN_HOST_BYTES");
    return text ? static_cast<size_t>(std::strtoull(text, nullptr, 10)) : size_t(1) << 30;
  }();
  return budget;
}

}  // namespace

bool register_host_memory(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(registered_mutex);
  if (!bytes || registered.count(ptr) || registered_bytes + bytes > register_budget()) return false;
  activate(current_device());
  if (cu::driver().cuMemHostRegister(ptr, bytes, cu::kMemHostAllocPortable) != cu::CUDA_SUCCESS) return false;
  registered.emplace(ptr, bytes);
  registered_bytes += bytes;
  return true;
}

void unregister_host_memory(void* ptr) {
  std::lock_guard<std::mutex> lock(registered_mutex);
  auto it = registered.find(ptr);
  if (it == registered.end()) return;
  try {
    cu::driver().cuMemHostUnregister(ptr);
  } catch (const Error&) {
    // At exit the driver may be gone; the process's memory goes with it.
  }
  registered_bytes -= it->second;
  registered.erase(it);
}

void copy_host_to_device(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream stream, bool sync) {
  if (!bytes) return;
  refuse_in_capture("a copy from host memory to the GPU");
  if (sync && staging::host_to_device(dst, src, bytes, stream)) return;
  const auto& d = cu::driver();
  if (sync && !stream)
    cu::check(d.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  else
    cu::check(d.cuMemcpyHtoDAsync(dst, src, bytes, stream), "cuMemcpyHtoDAsync");
  if (sync && stream) cu::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void copy_device_to_host(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream stream, bool sync) {
  if (!bytes) return;
  refuse_in_capture("a copy from the GPU to host memory");
  if (sync) wait_for_stream(stream);  // the kernels before the copy: Ctrl-C can end this wait
  if (sync && staging::device_to_host(dst, src, bytes, stream)) return;
  const auto& d = cu::driver();
  if (sync && !stream)
    cu::check(d.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  else
    cu::check(d.cuMemcpyDtoHAsync(dst, src, bytes, stream), "cuMemcpyDtoHAsync");
  if (sync && stream) cu::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void copy_device_to_device(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream stream,
                           bool sync) {
  if (!bytes) return;
  if (sync) refuse_in_capture("a synchronous copy");
  const auto& d = cu::driver();
  stream = work_stream(stream);
  cu::check(d.cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
  if (sync) cu::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void fill_device(cu::CUdeviceptr dst, const void* value, size_t element_size, size_t count,
                 cu::CUstream stream) {
  if (!count) return;
  const auto& d = cu::driver();
  stream = work_stream(stream);
  if (element_size == 1) {
    cu::check(d.cuMemsetD8Async(dst, *static_cast<const unsigned char*>(value), count, stream), "cuMemsetD8Async");
  } else if (element_size == 2) {
    unsigned short v;
    std::memcpy(&v, value, 2);
    cu::check(d.cuMemsetD16Async(dst, v, count, stream), "cuMemsetD16Async");
  } else if (element_size % 4 == 0) {
    // One strided 32-bit memset per word of the element: a column of `count` rows, `element_size` apart.
    for (size_t word = 0; word < element_size / 4; ++word) {
      unsigned int v;
      std::memcpy(&v, static_cast<const char*>(value) + 4 * word, 4);
      cu::check(d.cuMemsetD2D32Async(dst + 4 * word, element_size, v, 1, count, stream), "cuMemsetD2D32Async");
    }
  } else {
    throw BadValue("fill_device: unsupported element size " + std::to_string(element_size));
  }
}

}  // namespace jiasu
