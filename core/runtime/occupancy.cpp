#include "runtime/occupancy.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/module.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

size_t round_up(size_t x, size_t unit) { return (x + unit - 1) / unit * unit; }
int divide_round_up(int x, int y) { return x / y + (x % y != 0); }  // x + y - 1 could overflow

// Registers go to warps, each warp's rounded up to the allocation unit, within one partition of the register file.
int blocks_by_registers(const MultiprocessorLimits& m, const KernelNeeds& k, int warps_per_block) {
  if (k.registers_per_thread > m.max_registers_per_thread) return 0;
  const int per_warp = static_cast<int>(round_up(size_t(k.registers_per_thread) * m.warp_size, m.register_allocation_unit));
  if (per_warp == 0) return Occupancy::kUnlimited;
  // The hardware's per-block check assumes a block's warps are spread over every partition.
  const int assumed_warps = divide_round_up(warps_per_block, m.register_partitions) * m.register_partitions;
  if (int64_t(per_warp) * assumed_warps > m.registers_per_block) return 0;  // hence also per_warp * warps_per_block
  const int warps_per_partition = m.registers_per_multiprocessor / m.register_partitions / per_warp;
  return warps_per_partition * m.register_partitions / warps_per_block;
}

int blocks_by_shared_memory(const MultiprocessorLimits& m, const KernelNeeds& k, size_t dynamic_shared_bytes) {
  const size_t per_block =
      round_up(k.static_shared_bytes + dynamic_shared_bytes + m.reserved_shared_per_block, m.shared_allocation_unit);
  if (per_block > m.shared_per_block_optin + m.reserved_shared_per_block) return 0;
  if (per_block == 0) return Occupancy::kUnlimited;
  return static_cast<int>(std::min<size_t>(m.shared_per_multiprocessor / per_block, Occupancy::kUnlimited));
}

}  // namespace

MultiprocessorLimits multiprocessor_limits(const DeviceProperties& p) {
  MultiprocessorLimits m;
  m.warp_size = p.warp_size;
  m.max_threads_per_block = p.max_threads_per_block;
  m.max_threads_per_multiprocessor = p.max_threads_per_multiprocessor;
  m.max_blocks_per_multiprocessor = p.max_blocks_per_multiprocessor;
  m.registers_per_multiprocessor = p.max_registers_per_multiprocessor;
  m.registers_per_block = p.max_registers_per_block;
  m.shared_per_multiprocessor = static_cast<size_t>(p.max_shared_memory_per_multiprocessor);
  m.shared_per_block_optin = static_cast<size_t>(p.max_shared_memory_per_block_optin);
  m.reserved_shared_per_block = static_cast<size_t>(p.reserved_shared_memory_per_block);
  // The allocation rules the driver does not report, by architecture (as cuda_occupancy.h gives them).
  const int major = p.compute_capability_major;
  m.register_partitions = major == 6 && p.compute_capability_minor == 0 ? 2 : 4;
  m.shared_allocation_unit = major >= 8 ? 128 : 256;
  return m;
}

KernelResources kernel_resources(const Kernel& kernel) {
  const KernelAttributes& a = kernel.attributes();
  return {kernel.device(), a.registers, a.static_shared_bytes, a.local_bytes, a.const_bytes, a.max_threads_per_block};
}

const char* limiter_name(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::Warps: return "warps";
    case OccupancyLimiter::Blocks: return "blocks";
    case OccupancyLimiter::Registers: return "registers";
    case OccupancyLimiter::SharedMemory: return "shared_memory";
    case OccupancyLimiter::BlockSize: return "block_size";
  }
  return "?";
}

Occupancy occupancy(const MultiprocessorLimits& m, const KernelNeeds& k, int block_size, size_t dynamic_shared_bytes) {
  if (block_size < 1) throw BadValue("block_size must be at least 1, not " + std::to_string(block_size));
  Occupancy o;
  o.block_size = block_size;
  o.dynamic_shared_bytes = dynamic_shared_bytes;
  o.max_warps = m.max_threads_per_multiprocessor / m.warp_size;
  const int warps_per_block = divide_round_up(block_size, m.warp_size);
  o.blocks_by_warps = o.max_warps / warps_per_block;
  o.blocks_by_blocks = m.max_blocks_per_multiprocessor;
  o.blocks_by_registers = blocks_by_registers(m, k, warps_per_block);
  o.blocks_by_shared_memory = blocks_by_shared_memory(m, k, dynamic_shared_bytes);
  if (block_size > std::min(m.max_threads_per_block, k.max_threads_per_block)) {
    o.limiter = OccupancyLimiter::BlockSize;
    return o;
  }
  o.active_blocks = std::min({o.blocks_by_warps, o.blocks_by_blocks, o.blocks_by_registers, o.blocks_by_shared_memory});
  o.limiter = o.active_blocks == o.blocks_by_warps      ? OccupancyLimiter::Warps
              : o.active_blocks == o.blocks_by_blocks    ? OccupancyLimiter::Blocks
              : o.active_blocks == o.blocks_by_registers ? OccupancyLimiter::Registers
                                                         : OccupancyLimiter::SharedMemory;
  o.active_warps = o.active_blocks * warps_per_block;
  o.occupancy = static_cast<double>(o.active_warps) / o.max_warps;
  return o;
}

int best_block_size(const MultiprocessorLimits& m, const KernelNeeds& k, size_t dynamic_shared_bytes) {
  const int limit = std::min(m.max_threads_per_block, k.max_threads_per_block);
  int best = 0, best_threads = 0;
  // From the largest down, so that of equal occupancies the largest block wins; a full multiprocessor ends it.
  for (int aligned = divide_round_up(limit, m.warp_size) * m.warp_size; aligned > 0; aligned -= m.warp_size) {
    const int size = std::min(limit, aligned);
    const int threads = occupancy(m, k, size, dynamic_shared_bytes).active_blocks * size;
    if (threads > best_threads) best = size, best_threads = threads;
    if (best_threads == m.max_threads_per_multiprocessor) break;
  }
  return best;
}

std::optional<KernelOccupancy> kernel_occupancy(const KernelResources& r, int block_size, size_t dynamic_shared_bytes) {
  if (r.device == kCpuDevice) return std::nullopt;
  const MultiprocessorLimits limits = multiprocessor_limits(device_properties(r.device));
  const KernelNeeds needs{r.registers.value_or(0), static_cast<size_t>(r.shared_bytes), r.max_threads_per_block};
  return KernelOccupancy{occupancy(limits, needs, block_size, dynamic_shared_bytes),
                         best_block_size(limits, needs, dynamic_shared_bytes)};
}

}  // namespace jiasu
