#include "runtime/device.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

struct DeviceState {
  std::once_flag once;
  DeviceProperties properties;
  cu::CUcontext context = nullptr;
};

std::mutex devices_mutex;
std::vector<std::unique_ptr<DeviceState>>* devices = nullptr;  // never freed: used by late destructors

void check_ordinal(int ordinal) {
  int count = device_count();
  if (count == 0) cu::driver();  // raises the precise reason (no driver, no GPU) when there is one
  if (ordinal < 0 || ordinal >= count)
    throw CudaError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                    "device " + std::to_string(ordinal) + " does not exist (" + std::to_string(count) +
                        " CUDA device" + (count == 1 ? "" : "s") + " visible)");
}

DeviceState& state(int ordinal) {
  check_ordinal(ordinal);
  std::lock_guard<std::mutex> lock(devices_mutex);
  if (!devices) {
    devices = new std::vector<std::unique_ptr<DeviceState>>();
    for (int i = 0; i < device_count(); ++i) devices->push_back(std::make_unique<DeviceState>());
  }
  return *(*devices)[ordinal];
}

void query(DeviceProperties& p, int ordinal) {
  const auto& d = cu::driver();
  cu::CUdevice dev;
  cu::check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  auto attr = [&](int attribute) {
    int value = 0;
    cu::check(d.cuDeviceGetAttribute(&value, attribute, dev), "cuDeviceGetAttribute");
    return value;
  };
  char buffer[256] = {};
  cu::check(d.cuDeviceGetName(buffer, sizeof buffer, dev), "cuDeviceGetName");
  p.name = buffer;
  if (d.cuDeviceGetPCIBusId(buffer, sizeof buffer, dev) == cu::CUDA_SUCCESS) p.pci_bus_id = buffer;
  cu::check(d.cuDeviceTotalMem(&p.total_memory, dev), "cuDeviceTotalMem");
  p.ordinal = ordinal;
  p.compute_capability_major = attr(cu::kComputeCapabilityMajor);
  p.compute_capability_minor = attr(cu::kComputeCapabilityMinor);
  p.multiprocessor_count = attr(cu::kMultiprocessorCount);
  p.l2_cache_size = attr(cu::kL2CacheSize);
  p.warp_size = attr(cu::kWarpSize);
  p.max_threads_per_block = attr(cu::kMaxThreadsPerBlock);
  for (int i = 0; i < 3; ++i) {
    p.max_block_dim[i] = attr(cu::kMaxBlockDimX + i);
    p.max_grid_dim[i] = attr(cu::kMaxGridDimX + i);
  }
  p.max_shared_memory_per_block = attr(cu::kMaxSharedMemoryPerBlock);
  p.max_shared_memory_per_block_optin = attr(cu::kMaxSharedMemoryPerBlockOptin);
  p.max_shared_memory_per_multiprocessor = attr(cu::kMaxSharedMemoryPerMultiprocessor);
  p.reserved_shared_memory_per_block = attr(cu::kReservedSharedMemoryPerBlock);
  p.max_threads_per_multiprocessor = attr(cu::kMaxThreadsPerMultiprocessor);
  p.max_blocks_per_multiprocessor = attr(cu::kMaxBlocksPerMultiprocessor);
  p.max_registers_per_block = attr(cu::kMaxRegistersPerBlock);
  p.max_registers_per_multiprocessor = attr(cu::kMaxRegistersPerMultiprocessor);
  p.total_constant_memory = attr(cu::kTotalConstantMemory);
  p.clock_rate_khz = attr(cu::kClockRate);
  p.memory_clock_rate_khz = attr(cu::kMemoryClockRate);
  p.memory_bus_width = attr(cu::kGlobalMemoryBusWidth);
  p.memory_pools_supported = attr(cu::kMemoryPoolsSupported) != 0;
  p.can_map_host_memory = attr(cu::kCanMapHostMemory) != 0;
  p.managed_memory = attr(cu::kManagedMemory) != 0;
}

}  // namespace

using detail::thread_active_device;
using detail::thread_device;

int device_count() {
  static std::atomic<int> known{-1};  // the count cannot change within a process once seen
  int count = known.load(std::memory_order_relaxed);
  if (count >= 0) return count;
  try {
    count = 0;
    if (cu::driver().cuDeviceGetCount(&count) != cu::CUDA_SUCCESS) return 0;
    known.store(count);
    return count;
  } catch (const Error&) {
    return 0;
  }
}

const DeviceProperties& device_properties(int ordinal) {
  DeviceState& s = state(ordinal);
  std::call_once(s.once, [&] { query(s.properties, ordinal); });
  return s.properties;
}

void require_gpu(const char* message) {
  if (device_count() > 0) return;
  cu::driver();
  throw CudaError(cu::CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", message);
}

void set_current_device(int ordinal) {
  check_ordinal(ordinal);
  thread_device = ordinal;
}

void activate_slow(int ordinal) {
  DeviceState& s = state(ordinal);
  cu::CUcontext context;
  {
    std::lock_guard<std::mutex> lock(devices_mutex);
    if (!s.context) {
      const auto& d = cu::driver();
      cu::CUdevice dev;
      cu::check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
      cu::check(d.cuDevicePrimaryCtxRetain(&s.context, dev), "cuDevicePrimaryCtxRetain");
      // Keep freed pool memory for reuse instead of returning it to the OS at every synchronize.
      cu::CUmemoryPool pool;
      if (d.cuDeviceGetDefaultMemPool(&pool, dev) == cu::CUDA_SUCCESS) {
        uint64_t threshold = UINT64_MAX;
        d.cuMemPoolSetAttribute(pool, cu::kMempoolAttrReleaseThreshold, &threshold);
      }
    }
    context = s.context;
  }
  cu::check(cu::driver().cuCtxSetCurrent(context), "cuCtxSetCurrent");
  thread_active_device = ordinal;
}

MemoryInfo memory_info(int ordinal) {
  activate(ordinal);
  MemoryInfo info;
  cu::check(cu::driver().cuMemGetInfo(&info.free, &info.total), "cuMemGetInfo");
  return info;
}

void synchronize_device(int ordinal) {
  activate(ordinal);
  wait_for_stream(nullptr);  // interruptible; then what non-blocking streams still run
  cu::check(cu::driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace jiasu
