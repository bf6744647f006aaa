// The occupancy calculator against numbers worked out by hand from the CUDA Occupancy Calculator's rules
// (each case's arithmetic is in its comment), on the limits of an sm_90 GPU (H100/H200) unless it says otherwise.
#include <gtest/gtest.h>

#include <climits>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/occupancy.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// An sm_90 multiprocessor: 65536 registers, 2048 threads, 32 blocks, 228 KiB of shared memory (227 KiB per block
// after opting in), 1 KiB reserved per block.
MultiprocessorLimits sm90() {
  DeviceProperties p;
  p.compute_capability_major = 9;
  p.compute_capability_minor = 0;
  p.warp_size = 32;
  p.max_threads_per_block = 1024;
  p.max_threads_per_multiprocessor = 2048;
  p.max_blocks_per_multiprocessor = 32;
  p.max_registers_per_multiprocessor = 65536;
  p.max_registers_per_block = 65536;
  p.max_shared_memory_per_multiprocessor = 228 * 1024;
  p.max_shared_memory_per_block_optin = 227 * 1024;
  p.reserved_shared_memory_per_block = 1024;
  return multiprocessor_limits(p);
}

KernelNeeds needs(int registers, size_t static_shared = 0, int max_threads = 1024) {
  return {registers, static_shared, max_threads};
}

TEST(Occupancy, LimitsFromDeviceProperties) {
  const MultiprocessorLimits m = sm90();
  EXPECT_EQ(m.registers_per_multiprocessor, 65536);
  EXPECT_EQ(m.shared_per_multiprocessor, 233472u);
  EXPECT_EQ(m.shared_per_block_optin, 232448u);
  EXPECT_EQ(m.reserved_shared_per_block, 1024u);
  EXPECT_EQ(m.shared_allocation_unit, 128u);
  EXPECT_EQ(m.register_allocation_unit, 256);
  EXPECT_EQ(m.register_partitions, 4);
  DeviceProperties pascal;
  pascal.compute_capability_major = 6;
  pascal.compute_capability_minor = 0;
  EXPECT_EQ(multiprocessor_limits(pascal).register_partitions, 2);  // GP100
  EXPECT_EQ(multiprocessor_limits(pascal).shared_allocation_unit, 256u);
  pascal.compute_capability_minor = 1;
  EXPECT_EQ(multiprocessor_limits(pascal).register_partitions, 4);
}

TEST(Occupancy, NoneOnTheCpuDevice) {
  KernelResources cpu;
  cpu.device = kCpuDevice;
  cpu.shared_bytes = 4096;
  cpu.max_threads_per_block = 1024;
  EXPECT_FALSE(kernel_occupancy(cpu, 256, 0).has_value());
}

TEST(Occupancy, FullWhenWarpsAndRegistersAllowIt) {
  // 256 threads = 8 warps: 64 warps / 8 = 8 blocks. Registers: 32 x 32 = 1024 a warp; 16384 a partition / 1024 =
  // 16 warps x 4 partitions = 64 warps = 8 blocks. Shared: the reserved 1 KiB, 228 blocks. 8 blocks, 64 warps.
  const Occupancy o = occupancy(sm90(), needs(32), 256, 0);
  EXPECT_EQ(o.active_blocks, 8);
  EXPECT_EQ(o.active_warps, 64);
  EXPECT_EQ(o.max_warps, 64);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Warps);  // registers give the same bound: warps come first
  EXPECT_EQ(o.blocks_by_warps, 8);
  EXPECT_EQ(o.blocks_by_registers, 8);
  EXPECT_EQ(o.blocks_by_blocks, 32);
  EXPECT_EQ(o.blocks_by_shared_memory, 228);
}

TEST(Occupancy, HalfWhenRegistersLimit) {
  // 64 x 32 = 2048 registers a warp; 16384 / 2048 = 8 warps a partition, 32 warps = 4 blocks of 8 warps: 50%.
  const Occupancy o = occupancy(sm90(), needs(64), 256, 0);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(o.active_warps, 32);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Registers);
}

TEST(Occupancy, RegistersRoundUpPerWarpAndPerPartition) {
  // 37 x 32 = 1184 registers a warp, allocated as 1280 (5 units of 256); 16384 / 1280 = 12 warps a partition,
  // 48 warps = 12 blocks of 4 warps: 75%. (65536 / (37 x 128) would say 13.)
  const Occupancy o = occupancy(sm90(), needs(37), 128, 0);
  EXPECT_EQ(o.active_blocks, 12);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.75);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Registers);
}

TEST(Occupancy, QuarterWhenSharedMemoryLimits) {
  // 48 KiB + 1 KiB reserved = 50176 bytes (a multiple of 128); 233472 / 50176 = 4 blocks of 4 warps: 25%.
  const Occupancy o = occupancy(sm90(), needs(16), 128, 48 * 1024);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(o.active_warps, 16);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.25);
  EXPECT_EQ(o.limiter, OccupancyLimiter::SharedMemory);
}

TEST(Occupancy, StaticAndDynamicSharedMemoryAddUpAndRoundUp) {
  // 16 KiB static + 16 KiB dynamic + 1 KiB = 33792; 233472 / 33792 = 6 blocks.
  EXPECT_EQ(occupancy(sm90(), needs(16, 16 * 1024), 64, 16 * 1024).blocks_by_shared_memory, 6);
  // 1 byte + 1 KiB rounds up to 1152: 233472 / 1152 = 202 blocks (the 32-block limit binds).
  const Occupancy o = occupancy(sm90(), needs(16), 32, 1);
  EXPECT_EQ(o.blocks_by_shared_memory, 202);
  EXPECT_EQ(o.active_blocks, 32);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Blocks);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);  // 32 blocks of one warp
}

TEST(Occupancy, SharedMemoryBeyondOneBlockFitsNone) {
  // 227 KiB + 1 KiB = 233472: exactly one block. One byte more rounds up past the per-block limit: none.
  const Occupancy one = occupancy(sm90(), needs(16), 256, 227 * 1024);
  EXPECT_EQ(one.active_blocks, 1);
  EXPECT_EQ(one.limiter, OccupancyLimiter::SharedMemory);
  const Occupancy none = occupancy(sm90(), needs(16), 256, 227 * 1024 + 1);
  EXPECT_EQ(none.active_blocks, 0);
  EXPECT_EQ(none.active_warps, 0);
  EXPECT_DOUBLE_EQ(none.occupancy, 0.0);
  EXPECT_EQ(none.limiter, OccupancyLimiter::SharedMemory);
  EXPECT_EQ(best_block_size(sm90(), needs(16), 227 * 1024 + 1), 0);
}

TEST(Occupancy, PartialWarpsCountAsWholeWarps) {
  // 100 threads take 4 warps: 64 / 4 = 16 blocks, 64 warps: full, although only 1600 threads run.
  const Occupancy o = occupancy(sm90(), needs(32), 100, 0);
  EXPECT_EQ(o.active_blocks, 16);
  EXPECT_EQ(o.active_warps, 64);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
}

TEST(Occupancy, TooManyRegistersForOneBlock) {
  // 255 x 32 = 8160, allocated 8192 a warp; 32 warps x 8192 = 262144 > 65536 registers a block: none.
  const Occupancy o = occupancy(sm90(), needs(255), 1024, 0);
  EXPECT_EQ(o.active_blocks, 0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Registers);
  // 64 x 32 x 32 warps = 65536: exactly one block, 50%.
  EXPECT_EQ(occupancy(sm90(), needs(64), 1024, 0).active_blocks, 1);
  EXPECT_EQ(occupancy(sm90(), needs(256), 32, 0).active_blocks, 0);  // past 255 registers a thread
}

TEST(Occupancy, PerBlockRegisterCheckRoundsWarpsToPartitions) {
  MultiprocessorLimits m = sm90();
  m.registers_per_block = 32768;
  // 160 x 32 = 5120 a warp. 5 warps take 25600 <= 32768, but the hardware counts 8 warps (a multiple of the 4
  // partitions): 40960 > 32768, so none. 128 x 32 = 4096: 8 x 4096 = 32768 fits; 16384 / 4096 = 4 warps a
  // partition, 16 warps = 3 blocks of 5 warps.
  EXPECT_EQ(occupancy(m, needs(160), 160, 0).active_blocks, 0);
  EXPECT_EQ(occupancy(m, needs(128), 160, 0).active_blocks, 3);
}

TEST(Occupancy, BlocksLimit) {
  // One warp a block: warps allow 64 blocks, registers (16 x 32 = 512 a warp) 128: the 32-block limit binds.
  const Occupancy o = occupancy(sm90(), needs(16), 32, 0);
  EXPECT_EQ(o.active_blocks, 32);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Blocks);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
}

TEST(Occupancy, BlockSizeBeyondTheLimits) {
  const Occupancy device = occupancy(sm90(), needs(16), 1025, 0);
  EXPECT_EQ(device.active_blocks, 0);
  EXPECT_EQ(device.limiter, OccupancyLimiter::BlockSize);
  const Occupancy kernel = occupancy(sm90(), needs(16, 0, 512), 768, 0);
  EXPECT_EQ(kernel.active_blocks, 0);
  EXPECT_EQ(kernel.limiter, OccupancyLimiter::BlockSize);
  const Occupancy huge = occupancy(sm90(), needs(255), INT_MAX, 0);
  EXPECT_EQ(huge.active_blocks, 0);
  EXPECT_EQ(huge.limiter, OccupancyLimiter::BlockSize);
  EXPECT_THROW(occupancy(sm90(), needs(16), 0, 0), BadValue);
  EXPECT_THROW(occupancy(sm90(), needs(16), -32, 0), BadValue);
}

TEST(Occupancy, KernelWithoutRegistersOrSharedMemoryIsBoundByWarpsAndBlocks) {
  MultiprocessorLimits m = sm90();
  m.reserved_shared_per_block = 0;  // as before compute capability 8.0
  const Occupancy o = occupancy(m, needs(0), 512, 0);
  EXPECT_EQ(o.blocks_by_registers, Occupancy::kUnlimited);
  EXPECT_EQ(o.blocks_by_shared_memory, Occupancy::kUnlimited);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(o.limiter, OccupancyLimiter::Warps);
}

TEST(Occupancy, AnotherArchitecture) {
  // An sm_86 multiprocessor: 1536 threads, 16 blocks, 100 KiB. 256 threads at 32 registers: 48 / 8 = 6 blocks
  // by warps, 8 by registers: 6 blocks, 48 warps, full.
  MultiprocessorLimits m = sm90();
  m.max_threads_per_multiprocessor = 1536;
  m.max_blocks_per_multiprocessor = 16;
  m.shared_per_multiprocessor = 100 * 1024;
  m.shared_per_block_optin = 99 * 1024;
  const Occupancy o = occupancy(m, needs(32), 256, 0);
  EXPECT_EQ(o.active_blocks, 6);
  EXPECT_EQ(o.max_warps, 48);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  // 12 KiB + 1 KiB = 13312: 102400 / 13312 = 7 blocks by shared memory; warps still bind at 6.
  EXPECT_EQ(occupancy(m, needs(32), 256, 12 * 1024).blocks_by_shared_memory, 7);
}

TEST(Occupancy, BestBlockSize) {
  // 32 registers: 1024 threads fill the multiprocessor (2 blocks), and the largest size is tried first.
  EXPECT_EQ(best_block_size(sm90(), needs(32), 0), 1024);
  // 40 x 32 = 1280 registers a warp: 12 warps a partition, 48 warps in all. 1024 threads (32 warps) fit once
  // (1024 threads); 768 (24 warps) twice: 1536 threads, the most any size reaches (48 warps), at the largest size.
  EXPECT_EQ(best_block_size(sm90(), needs(40), 0), 768);
  // A kernel limit that is no multiple of 32 is tried itself first: 1000 threads (32 warps) twice, 2000 threads;
  // then 992, ... down to 512 (16 warps), four times: 2048, full, so the search ends there.
  EXPECT_EQ(best_block_size(sm90(), needs(32, 0, 1000), 0), 512);
  // 48 KiB of shared memory allows 4 blocks whatever their size: 1024 threads take 2 (by warps), 2048 threads.
  EXPECT_EQ(best_block_size(sm90(), needs(16), 48 * 1024), 1024);
  // 100 KiB allows 2 blocks (101 KiB each of 228): 1024 threads x 2 = 2048.
  EXPECT_EQ(best_block_size(sm90(), needs(16), 100 * 1024), 1024);
  // 120 KiB allows 1: 1024 threads is the most.
  EXPECT_EQ(best_block_size(sm90(), needs(16), 120 * 1024), 1024);
}

TEST(Occupancy, LimiterNames) {
  EXPECT_STREQ(limiter_name(OccupancyLimiter::Warps), "warps");
  EXPECT_STREQ(limiter_name(OccupancyLimiter::Blocks), "blocks");
  EXPECT_STREQ(limiter_name(OccupancyLimiter::Registers), "registers");
  EXPECT_STREQ(limiter_name(OccupancyLimiter::SharedMemory), "shared_memory");
  EXPECT_STREQ(limiter_name(OccupancyLimiter::BlockSize), "block_size");
}

}  // namespace
}  // namespace jiasu
