// The staging engine's host side (core/runtime/staging.hpp): chunk and slice planning, configuration
// parsing, and the parallel memcpy pool. The copies through the GPU are exercised on a GPU machine by
// tests/python/gpu/test_arrays.py and bench/transfer.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "runtime/staging.hpp"

namespace jiasu::staging {
namespace {

constexpr size_t KiB = kKiB;
constexpr size_t MiB = kMiB;

void expect_covers(const std::vector<Chunk>& chunks, size_t bytes, size_t chunk_size) {
  if (bytes == 0) {
    EXPECT_TRUE(chunks.empty());
    return;
  }
  ASSERT_FALSE(chunks.empty());
  size_t expected = chunk_size == 0 ? 1 : (bytes + chunk_size - 1) / chunk_size;
  EXPECT_EQ(chunks.size(), expected) << bytes << " / " << chunk_size;
  size_t offset = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].offset, offset);
    EXPECT_GT(chunks[i].bytes, 0u);
    if (i + 1 < chunks.size()) EXPECT_EQ(chunks[i].bytes, chunk_size);
    if (chunk_size) EXPECT_LE(chunks[i].bytes, chunk_size);
    offset += chunks[i].bytes;
  }
  EXPECT_EQ(offset, bytes);
}

TEST(StagingPlan, EdgeCases) {
  EXPECT_TRUE(plan_chunks(0, 4 * MiB).empty());
  EXPECT_TRUE(plan_chunks(0, 0).empty());
  EXPECT_EQ(plan_chunks(10, 0), (std::vector<Chunk>{{0, 10}}));
  EXPECT_EQ(plan_chunks(10, 10), (std::vector<Chunk>{{0, 10}}));
  EXPECT_EQ(plan_chunks(10, 100), (std::vector<Chunk>{{0, 10}}));
  EXPECT_EQ(plan_chunks(10, 4), (std::vector<Chunk>{{0, 4}, {4, 4}, {8, 2}}));
  EXPECT_EQ(plan_chunks(12, 4), (std::vector<Chunk>{{0, 4}, {4, 4}, {8, 4}}));
  EXPECT_EQ(plan_chunks(5, 1).size(), 5u);
}

TEST(StagingPlan, CoversEveryByteOnce) {
  for (size_t bytes : {size_t{1}, size_t{4095}, size_t{4096}, 1 * MiB - 1, 1 * MiB, 1 * MiB + 1, 7 * MiB + 123,
                       256 * MiB, 1000 * MiB + 3})
    for (size_t chunk : {size_t{0}, size_t{1000}, 64 * KiB, 512 * KiB, 1 * MiB, 4 * MiB, 4 * MiB + 7})
      if (chunk == 0 || bytes / chunk < 2000000) expect_covers(plan_chunks(bytes, chunk), bytes, chunk);
}

TEST(StagingPlan, ChunkSize) {
  // Small copies: several chunks, so the memcpy and the DMA overlap.
  EXPECT_EQ(chunk_size_for(1 * MiB, 4 * MiB), 512 * KiB);
  EXPECT_EQ(chunk_size_for(4 * MiB, 4 * MiB), 512 * KiB);
  EXPECT_EQ(chunk_size_for(8 * MiB, 4 * MiB), 1 * MiB);
  EXPECT_EQ(chunk_size_for(16 * MiB, 4 * MiB), 2 * MiB);
  // Large ones: the largest chunk.
  EXPECT_EQ(chunk_size_for(32 * MiB, 4 * MiB), 4 * MiB);
  EXPECT_EQ(chunk_size_for(256 * MiB, 4 * MiB), 4 * MiB);
  EXPECT_EQ(chunk_size_for(size_t{64} << 30, 4 * MiB), 4 * MiB);
  // A smaller limit than the planner's floor wins; 0 means none.
  EXPECT_EQ(chunk_size_for(100 * MiB, 256 * KiB), 256 * KiB);
  EXPECT_EQ(chunk_size_for(1, 256 * KiB), 256 * KiB);
  EXPECT_EQ(chunk_size_for(800 * MiB, 0), 100 * MiB);
  EXPECT_EQ(chunk_size_for(0, 4 * MiB), 512 * KiB);

  size_t previous = 0;
  for (size_t bytes = 0; bytes <= 64 * MiB; bytes += 37 * KiB + 11) {
    size_t c = chunk_size_for(bytes, 4 * MiB);
    EXPECT_GE(c, 512 * KiB);
    EXPECT_LE(c, 4 * MiB);
    EXPECT_EQ(c % kChunkAlignment, 0u);
    EXPECT_GE(c, previous) << "not monotonic at " << bytes;
    previous = c;
    if (bytes <= kTargetChunks * 4 * MiB) EXPECT_LE(plan_chunks(bytes, c).size(), kTargetChunks) << bytes;
  }
}

TEST(StagingPlan, SliceSize) {
  EXPECT_EQ(slice_size_for(4 * MiB, 8), 256 * KiB);
  EXPECT_EQ(slice_size_for(512 * KiB, 8), 64 * KiB);
  EXPECT_EQ(slice_size_for(100, 8), 64 * KiB);
  EXPECT_EQ(slice_size_for(4 * MiB, 1), 2 * MiB);
  EXPECT_EQ(slice_size_for(4 * MiB, 0), 2 * MiB);
  for (unsigned lanes : {1u, 2u, 3u, 8u, 16u, 64u})
    for (size_t bytes : {size_t{1}, 100 * KiB, 1 * MiB + 5, 4 * MiB, 4 * MiB + 1, 37 * MiB}) {
      size_t s = slice_size_for(bytes, lanes);
      EXPECT_GE(s, kMinSlice);
      EXPECT_EQ(s % kSliceAlignment, 0u);
      EXPECT_LE((bytes + s - 1) / s, 2 * size_t{lanes}) << bytes << " over " << lanes;
    }
}

TEST(StagingPlan, SleepingWaits) {
  // 256 MiB in 4 MiB chunks: every wait but the last three's has three chunks queued behind it.
  EXPECT_TRUE(wait_can_sleep(0, 64, 4 * MiB));
  EXPECT_TRUE(wait_can_sleep(60, 64, 4 * MiB));
  EXPECT_FALSE(wait_can_sleep(61, 64, 4 * MiB));
  EXPECT_FALSE(wait_can_sleep(63, 64, 4 * MiB));
  // Small chunks: the wake-up would not be hidden.
  EXPECT_FALSE(wait_can_sleep(0, 64, 1 * MiB));
  EXPECT_FALSE(wait_can_sleep(0, 8, 512 * KiB));
  // As many chunks as buffers: only the first wait has a full queue behind it.
  EXPECT_TRUE(wait_can_sleep(0, kStagingBuffers, 4 * MiB));
  EXPECT_FALSE(wait_can_sleep(1, kStagingBuffers, 4 * MiB));
  EXPECT_FALSE(wait_can_sleep(0, kStagingBuffers - 1, 4 * MiB));
  // Host to device waits for chunk i - kStagingBuffers right after queueing chunk i - 1: it may always sleep.
  for (size_t n : {size_t{5}, size_t{8}, size_t{64}})
    for (size_t i = kStagingBuffers; i < n; ++i) EXPECT_TRUE(wait_can_sleep(i - kStagingBuffers, n, 2 * MiB));
}

TEST(StagingConfig, ParseBytes) {
  size_t v = 0;
  EXPECT_TRUE(parse_bytes("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parse_bytes("4194304", &v));
  EXPECT_EQ(v, 4 * MiB);
  EXPECT_TRUE(parse_bytes("512K", &v));
  EXPECT_EQ(v, 512 * KiB);
  EXPECT_TRUE(parse_bytes("512k", &v));
  EXPECT_EQ(v, 512 * KiB);
  EXPECT_TRUE(parse_bytes("4M", &v));
  EXPECT_EQ(v, 4 * MiB);
  EXPECT_TRUE(parse_bytes("4MiB", &v));
  EXPECT_EQ(v, 4 * MiB);
  EXPECT_TRUE(parse_bytes("4mb", &v));
  EXPECT_EQ(v, 4 * MiB);
  EXPECT_TRUE(parse_bytes("2G", &v));
  EXPECT_EQ(v, size_t{2} << 30);
  v = 7;
  for (const char* bad : {"", "M", "x", "4X", "4MM", "4Mx", "-1", " 4", "4 ", "1.5M", "99999999999999999999999",
                          "18446744073709551615K"}) {
    EXPECT_FALSE(parse_bytes(bad, &v)) << bad;
    EXPECT_EQ(v, 7u) << bad;
  }
  EXPECT_FALSE(parse_bytes(nullptr, &v));
}

TEST(StagingConfig, Defaults) {
  Config c = parse_config(nullptr, nullptr, nullptr, nullptr, 16);
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.min_bytes, 1 * MiB);
  EXPECT_EQ(c.chunk_bytes, 4 * MiB);
  EXPECT_EQ(c.threads, 8u);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, nullptr, 4).threads, 4u);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, nullptr, 1).threads, 1u);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, nullptr, 0).threads, 4u);  // unknown
}

TEST(StagingConfig, Switch) {
  for (const char* off : {"0", "off", "OFF", "false", "False", "no"})
    EXPECT_FALSE(parse_config(off, nullptr, nullptr, nullptr, 16).enabled) << off;
  for (const char* on : {"1", "on", "yes", "", "true"})
    EXPECT_TRUE(parse_config(on, nullptr, nullptr, nullptr, 16).enabled) << on;
}

TEST(StagingConfig, OverridesAndLimits) {
  Config c = parse_config(nullptr, "2M", "1M", "3", 16);
  EXPECT_EQ(c.min_bytes, 2 * MiB);
  EXPECT_EQ(c.chunk_bytes, 1 * MiB);
  EXPECT_EQ(c.threads, 3u);
  EXPECT_EQ(parse_config(nullptr, "0", nullptr, nullptr, 16).min_bytes, 0u);
  EXPECT_EQ(parse_config(nullptr, nullptr, "1K", nullptr, 16).chunk_bytes, 64 * KiB);
  EXPECT_EQ(parse_config(nullptr, nullptr, "4G", nullptr, 16).chunk_bytes, 256 * MiB);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, "0", 16).threads, 1u);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, "1000", 16).threads, 64u);
  EXPECT_EQ(parse_config(nullptr, nullptr, nullptr, "12", 4).threads, 12u);
  // Values that do not parse leave the defaults.
  c = parse_config(nullptr, "lots", "big", "4K", 16);
  EXPECT_EQ(c.min_bytes, 1 * MiB);
  EXPECT_EQ(c.chunk_bytes, 4 * MiB);
  EXPECT_EQ(c.threads, 8u);
}

// Copies `bytes` at odd offsets into a guarded buffer and checks every byte, and that none around it moved.
void check_copy(MemcpyPool& pool, size_t bytes, size_t src_offset, size_t dst_offset, uint32_t seed) {
  constexpr size_t kGuard = 4096;
  std::vector<unsigned char> src(bytes + src_offset);
  std::mt19937 rng(seed);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  std::vector<unsigned char> dst(bytes + dst_offset + 2 * kGuard, 0xA5);
  pool.copy(dst.data() + kGuard + dst_offset, src.data() + src_offset, bytes);
  if (bytes) {
    ASSERT_EQ(std::memcmp(dst.data() + kGuard + dst_offset, src.data() + src_offset, bytes), 0)
        << bytes << " bytes, offsets " << src_offset << "/" << dst_offset;
  }
  for (size_t i = 0; i < kGuard + dst_offset; ++i) ASSERT_EQ(dst[i], 0xA5) << "before, at " << i;
  for (size_t i = kGuard + dst_offset + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xA5) << "after, at " << i;
}

TEST(StagingPool, CopiesExactly) {
  for (unsigned lanes : {1u, 2u, 4u, 8u}) {
    MemcpyPool pool(lanes);
    EXPECT_EQ(pool.lanes(), lanes);
    uint32_t seed = 1;
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, 64 * KiB + 3, 128 * KiB, 1 * MiB + 17, 5 * MiB + 123})
      for (size_t offset : {size_t{0}, size_t{3}})
        check_copy(pool, bytes, offset, (offset * 7) % 5, seed++);
  }
}

TEST(StagingPool, ManyJobsBackToBack) {
  // Small jobs, few slices each: workers waking late must never touch the next job with the old one's
  // pointers.
  MemcpyPool pool(8);
  std::vector<unsigned char> src(1 * MiB), dst(1 * MiB);
  for (int round = 0; round < 3000; ++round) {
    size_t bytes = 128 * KiB + static_cast<size_t>(round % 7) * 64 * KiB + static_cast<size_t>(round % 3);
    std::memset(src.data(), round & 0xFF, bytes);
    pool.copy(dst.data(), src.data(), bytes);
    ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0) << "round " << round;
  }
}

TEST(StagingPool, ConcurrentCallers) {
  MemcpyPool pool(4);
  std::vector<std::thread> threads;
  std::vector<int> failures(6, 0);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint32_t> src(3 * MiB / 4 + t), dst(src.size());
      for (int round = 0; round < 20; ++round) {
        std::iota(src.begin(), src.end(), static_cast<uint32_t>(t * 1000003 + round));
        pool.copy(dst.data(), src.data(), src.size() * sizeof(uint32_t));
        if (dst != src) ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(StagingPool, StartsAndStops) {
  for (int i = 0; i < 50; ++i) {
    MemcpyPool pool(1 + i % 8);
    if (i % 2) check_copy(pool, 1 * MiB, 0, 0, static_cast<uint32_t>(i));
  }
}

TEST(StagingPool, ProcessPool) {
  MemcpyPool& pool = memcpy_pool();
  EXPECT_EQ(&pool, &memcpy_pool());
  EXPECT_GE(pool.lanes(), 1u);
  EXPECT_LE(pool.lanes(), 64u);
  check_copy(pool, 9 * MiB + 1, 1, 2, 99);
}

TEST(StagingCopy, SmallCopiesStayWithTheDriver) {
  // Below the threshold the engine declines before it looks at the pointers or loads the driver.
  if (config().min_bytes < 2) GTEST_SKIP() << "JIASU_STAGING_MIN_BYTES is set below 2";
  unsigned char host[1] = {0};
  EXPECT_FALSE(host_to_device(0, host, 1, nullptr));
  EXPECT_FALSE(device_to_host(host, 0, 1, nullptr));
  EXPECT_FALSE(host_to_device(0, host, 0, nullptr));
}

}  // namespace
}  // namespace jiasu::staging
