// Devices, their properties, and the primary context each thread works in.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/driver.hpp"

namespace jiasu {

struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessor_count = 0;
  size_t total_memory = 0;
  int l2_cache_size = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int max_block_dim[3] = {0, 0, 0};
  int max_grid_dim[3] = {0, 0, 0};
  int max_shared_memory_per_block = 0;
  int max_shared_memory_per_block_optin = 0;
  int max_shared_memory_per_multiprocessor = 0;
  int reserved_shared_memory_per_block = 0;  // the driver's own, in every block (1 KiB from compute capability 8.0)
  int max_threads_per_multiprocessor = 0;
  int max_blocks_per_multiprocessor = 0;
  int max_registers_per_block = 0;
  int max_registers_per_multiprocessor = 0;
  int total_constant_memory = 0;
  int clock_rate_khz = 0;
  int memory_clock_rate_khz = 0;
  int memory_bus_width = 0;
  bool memory_pools_supported = false;
  bool can_map_host_memory = false;  // mapped host memory (cuda.mapped_array)
  bool managed_memory = false;       // cuMemAllocManaged
  int arch() const { return compute_capability_major * 10 + compute_capability_minor; }
};

// 0 when there is no usable driver or GPU; never throws.
int device_count();
// Throws the driver's precise reason when it has one (no driver, no device), else CudaError(message).
void require_gpu(const char* message);

// Cached per device; throws CudaError(CUDA_ERROR_INVALID_DEVICE) for a bad ordinal.
const DeviceProperties& device_properties(int ordinal);

namespace detail {
// Read at every launch, so inline. The initial-exec model makes each a plain load instead of a call to
// __tls_get_addr (the module is dlopen'd); the few bytes fit the static TLS the loader keeps for such modules.
// Defined here (inline, constant-initialised) so that no reader goes through a TLS initialisation wrapper.
[[gnu::tls_model("initial-exec")]] inline thread_local int thread_device = 0;
[[gnu::tls_model("initial-exec")]] inline thread_local int thread_active_device = -1;  // whose primary context is current
}  // namespace detail

// The device this thread works on (default 0), as with cudaSetDevice.
inline int current_device() { return detail::thread_device; }
void set_current_device(int ordinal);

// Makes `ordinal`'s primary context current on this thread (retained once, for the life of the
// process). Cheap when it already is: every runtime call goes through here.
void activate_slow(int ordinal);
inline void activate(int ordinal) {
  if (ordinal != detail::thread_active_device) activate_slow(ordinal);
}

struct MemoryInfo {
  size_t free = 0;
  size_t total = 0;
};
MemoryInfo memory_info(int ordinal);

void synchronize_device(int ordinal);

}  // namespace jiasu
