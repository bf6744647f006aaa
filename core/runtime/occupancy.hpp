// Theoretical occupancy: how many blocks of a kernel one multiprocessor holds at once, by the rules of NVIDIA's
// CUDA Occupancy Calculator (cuda_occupancy.h), and the block size that holds the most threads. Pure arithmetic
// over device limits and kernel attributes, so it is unit-tested without a GPU; on a GPU it agrees with the
// driver's cuOccupancyMaxActiveBlocksPerMultiprocessor.
#pragma once

#include <cstddef>
#include <optional>

namespace jiasu {

struct DeviceProperties;
class Kernel;

// What one multiprocessor offers, and how it hands it out.
struct MultiprocessorLimits {
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_multiprocessor = 2048;
  int max_blocks_per_multiprocessor = 32;
  int registers_per_multiprocessor = 65536;
  int registers_per_block = 65536;
  int register_allocation_unit = 256;  // a warp's registers are a multiple of this
  // Registers live in this many partitions of the register file; the per-block check counts a block's warps
  // rounded up to a multiple of it (the warp allocation granularity).
  int register_partitions = 4;
  int max_registers_per_thread = 255;
  size_t shared_per_multiprocessor = 228 * 1024;
  size_t shared_per_block_optin = 227 * 1024;  // what a kernel may have after opting in (jiasu's launches do)
  size_t shared_allocation_unit = 128;         // a block's shared memory is a multiple of this
  size_t reserved_shared_per_block = 1024;     // the driver's own, in every block (compute capability 8.0+)
};

// The limits of `device` (its attributes and its architecture's allocation rules).
MultiprocessorLimits multiprocessor_limits(const DeviceProperties& device);

// What one block of a kernel needs besides its threads.
struct KernelNeeds {
  int registers_per_thread = 0;
  size_t static_shared_bytes = 0;
  int max_threads_per_block = 1024;  // the kernel's own limit (registers may lower it below the device's)
};

// What bounds the resident blocks; when several give the same bound, the first of this order is named.
enum class OccupancyLimiter { Warps, Blocks, Registers, SharedMemory, BlockSize };
const char* limiter_name(OccupancyLimiter limiter);  // "warps", "blocks", "registers", "shared_memory", "block_size"

struct Occupancy {
  int block_size = 0;
  size_t dynamic_shared_bytes = 0;
  int active_blocks = 0;  // per multiprocessor
  int active_warps = 0;
  int max_warps = 0;      // per multiprocessor
  double occupancy = 0;   // active_warps / max_warps, from 0 to 1
  OccupancyLimiter limiter = OccupancyLimiter::Warps;
  // The blocks each resource alone admits; kUnlimited where it sets no bound (a kernel without shared memory).
  int blocks_by_warps = 0, blocks_by_blocks = 0, blocks_by_registers = 0, blocks_by_shared_memory = 0;
  static constexpr int kUnlimited = 1 << 30;
};

// Blocks of `block_size` threads (>= 1) with `dynamic_shared_bytes` of dynamic shared memory each. A block the
// kernel cannot run at all (more threads, registers or shared memory than one block may have) gives 0 blocks.
Occupancy occupancy(const MultiprocessorLimits& limits, const KernelNeeds& kernel, int block_size,
                    size_t dynamic_shared_bytes);

// The block size with the most resident threads per multiprocessor, as cudaOccupancyMaxPotentialBlockSize
// chooses it: the largest of the kernel's limit and the multiples of the warp size below it that reaches the
// most; 0 when no block size fits (shared memory beyond what a block may have).
int best_block_size(const MultiprocessorLimits& limits, const KernelNeeds& kernel, size_t dynamic_shared_bytes);

// What one compiled kernel uses (k.resources()): on a GPU the driver's account of the kernel loaded there; on the
// CPU device (kCpuDevice) what its source declares, and no registers, constant memory or occupancy.
struct KernelResources {
  int device = 0;
  std::optional<int> registers;  // per thread
  long long shared_bytes = 0;    // static shared memory per block
  long long local_bytes = 0;     // per thread: local arrays and, on a GPU, what registers spill
  std::optional<int> const_bytes;
  int max_threads_per_block = 0;
};
KernelResources kernel_resources(const Kernel& kernel);

struct KernelOccupancy {
  Occupancy occupancy;
  int best_block_size = 0;  // for the same dynamic shared memory
};
// The kernel's occupancy on its GPU at this configuration; nullopt on the CPU device, which has none.
std::optional<KernelOccupancy> kernel_occupancy(const KernelResources& resources, int block_size,
                                                size_t dynamic_shared_bytes);

}  // namespace jiasu
