// Memory-access analysis (cpu/access_trace): the cost of single requests against counts made by hand, the grouping
// of recorded accesses into warp requests, and traced builds of Python kernels (both schedules) end to end.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cpu/access_trace.hpp"
#include "cpu/host_kernel.hpp"
#include "frontend_test_support.hpp"
#include "host_test_support.hpp"

namespace jiasu {
namespace {

using host_test::view;
using testing::array;
using testing::python;

// 32 lanes at base + lane * stride, of `bytes` each.
std::vector<LaneAccess> strided(uint64_t base, uint64_t stride, uint32_t bytes, int lanes = 32) {
  std::vector<LaneAccess> out;
  for (int l = 0; l < lanes; ++l) out.push_back({base + l * stride, bytes});
  return out;
}

TEST(AccessTrace, GlobalSectorsOfStridedRequests) {
  RequestCost c = global_request(strided(0, 4, 4));  // float32, stride 1: 128 bytes in 4 sectors
  EXPECT_EQ(c.transactions, 4);
  EXPECT_EQ(c.ideal, 4);
  c = global_request(strided(0, 128, 4));  // stride 32: a sector per lane, 4 bytes of each used
  EXPECT_EQ(c.transactions, 32);
  EXPECT_EQ(c.ideal, 4);
  c = global_request(strided(0, 8, 8));  // float64, stride 1
  EXPECT_EQ(c.transactions, 8);
  EXPECT_EQ(c.ideal, 8);
  c = global_request(strided(4, 4, 4));  // misaligned by one element: the bytes straddle 5 sectors
  EXPECT_EQ(c.transactions, 5);
  EXPECT_EQ(c.ideal, 4);
  c = global_request(strided(64, 0, 4));  // every lane reads one element: one sector, one ideally
  EXPECT_EQ(c.transactions, 1);
  EXPECT_EQ(c.ideal, 1);
  c = global_request({{30, 4}});  // one element across a sector boundary
  EXPECT_EQ(c.transactions, 2);
  EXPECT_EQ(c.ideal, 1);
}

TEST(AccessTrace, SharedBankConflicts) {
  RequestCost c = shared_request(strided(0, 4, 4));  // a row of float32: one word per bank
  EXPECT_EQ(c.transactions, 1);
  EXPECT_EQ(c.ideal, 1);
  c = shared_request(strided(0, 32 * 4, 4));  // a column of tile[32][32]: every word in bank 0
  EXPECT_EQ(c.transactions, 32);
  EXPECT_EQ(c.ideal, 1);
  c = shared_request(strided(0, 33 * 4, 4));  // a column of tile[32][33]: banks 0, 1, ..., 31
  EXPECT_EQ(c.transactions, 1);
  c = shared_request(strided(0, 2 * 4, 4));  // stride 2: 2 words in each even bank
  EXPECT_EQ(c.transactions, 2);
  EXPECT_EQ(c.ideal, 1);
  c = shared_request(strided(12, 0, 4));  // one word for all: a broadcast
  EXPECT_EQ(c.transactions, 1);
  c = shared_request(strided(0, 8, 8));  // float64 in a row: 64 words, 2 per bank, which 2 wavefronts need anyway
  EXPECT_EQ(c.transactions, 2);
  EXPECT_EQ(c.ideal, 2);
  c = shared_request(strided(0, 1, 1));  // 32 bytes: 8 words in 8 banks
  EXPECT_EQ(c.transactions, 1);
  EXPECT_EQ(c.ideal, 1);
}

// Feeds records straight into a trace's log, as a traced kernel would.
struct Recorded {
  AccessTrace trace;
  HostAccessLog* log;
  explicit Recorded(std::vector<bool> shared, std::vector<MemoryRange> ranges = {}, int64_t cap = 1 << 20)
      : trace(std::move(shared), std::move(ranges), cap), log(trace.logs(1)) {}
  int record(long long block, int site, int thread, uint64_t address, int bytes = 4) {
    HostAccess a{address, site, static_cast<unsigned short>(thread), static_cast<unsigned short>(bytes)};
    return log->record(log->recorder, block, &a);
  }
};

TEST(AccessTrace, RequestsAreTheKthExecutionOfEachLaneOfAWarp) {
  // Two warps of a block of 64 threads, one site; each thread runs it twice, thread after thread (as thread loops
  // do): its first access strided by 32 elements, its second one coalesced.
  Recorded r({false}, {{1 << 20, 1 << 20}});
  for (int t = 0; t < 64; ++t) {
    r.record(0, 0, t, (1 << 20) + t * 128);
    r.record(0, 0, t, (1 << 20) + t * 4);
  }
  std::vector<AccessStats> stats = r.trace.finish();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].requests, 4);         // 2 warps x 2 executions
  EXPECT_EQ(stats[0].accesses, 128);
  EXPECT_EQ(stats[0].bytes, 128 * 4);
  EXPECT_EQ(stats[0].transactions, 2 * 32 + 2 * 4);
  EXPECT_EQ(stats[0].ideal, 4 * 4);
}

TEST(AccessTrace, BlocksAndSitesAreApartAndGlobalMemoryIsTakenAsAligned) {
  // An argument whose memory starts 16 bytes past a 32-byte boundary: a GPU allocation would be aligned, so a
  // coalesced warp touches 4 sectors, not 5.
  const uint64_t base = (1 << 20) + 16;
  Recorded r({false, true}, {{base, 4096}});
  for (long long block = 0; block < 3; ++block)
    for (int t = 0; t < 32; ++t) {
      r.record(block, 0, t, base + t * 4);
      r.record(block, 1, t, 0x1000 + t * 4 * 32);  // shared: a column of tile[32][32]
    }
  std::vector<AccessStats> stats = r.trace.finish();
  EXPECT_EQ(stats[0].requests, 3);
  EXPECT_EQ(stats[0].transactions, 12);
  EXPECT_EQ(stats[1].requests, 3);
  EXPECT_EQ(stats[1].transactions, 3 * 32);
  EXPECT_EQ(stats[1].ideal, 3);
  EXPECT_DOUBLE_EQ(stats[1].max_ways, 32.0);
}

TEST(AccessTrace, ALogRefusesABlockBeyondItsCap) {
  Recorded r({false}, {}, 10);
  for (int t = 0; t < 10; ++t) EXPECT_EQ(r.record(0, 0, t, 4 * t), 0);
  EXPECT_FALSE(r.trace.full());
  EXPECT_NE(r.record(0, 0, 10, 40), 0);
  EXPECT_TRUE(r.trace.full());
}

// A Python kernel's traced build launched over host arrays; the stats of its sites.
struct Traced {
  std::shared_ptr<HostKernel> kernel;
  std::vector<emit::AccessSite> sites;
  Traced(const std::string& text, const std::vector<fe::Type>& signature) {
    emit::EmittedKernel emitted = emit::emit_host(fe::check(python(text), signature), false, true);
    sites = emitted.access_sites;
    kernel = compile_host_kernel(emitted);
  }
  std::vector<AccessStats> run(Dim3 grid, Dim3 block, void** params, std::vector<MemoryRange> ranges) {
    std::vector<bool> shared;
    for (const auto& s : sites) shared.push_back(s.shared);
    AccessTrace trace(shared, std::move(ranges));
    kernel->launch(grid, block, params, 0, &trace);
    return trace.finish();
  }
};

MemoryRange range_of(const std::vector<float>& v) {
  return {reinterpret_cast<uint64_t>(v.data()), v.size() * sizeof(float)};
}

TEST(AccessTrace, TracedKernelsOfBothSchedules) {
  // thread loops (a barrier) and fibers (a warp operation): the same transpose, the same requests
  for (const char* sync : {"jiasu.syncthreads()", "jiasu.syncthreads()\n    jiasu.syncwarp()"}) {
    Traced k(std::string("@jiasu.kernel\n"
                         "def transpose(a, out):\n"
                         "    tile = jiasu.shared.array((32, 32), np.float32)\n"
                         "    x = jiasu.threadIdx.x\n"
                         "    y = jiasu.threadIdx.y\n"
                         "    tile[y, x] = a[y * 32 + x]\n"
                         "    ") + sync + "\n"
                 "    out[y * 32 + x] = tile[x, y]\n",
             {array(DType::Float32), array(DType::Float32)});
    ASSERT_EQ(k.sites.size(), 4u);
    std::vector<float> a(1024), out(1024);
    for (int i = 0; i < 1024; ++i) a[i] = float(i);
    auto av = view(a);
    auto ov = view(out);
    void* params[] = {&av, &ov};
    std::vector<AccessStats> stats = k.run({1, 1, 1}, {32, 32, 1}, params, {range_of(a), range_of(out)});
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(out[i], a[(i % 32) * 32 + i / 32]) << sync;
    for (size_t s = 0; s < k.sites.size(); ++s) {
      const emit::AccessSite& site = k.sites[s];
      EXPECT_EQ(stats[s].requests, 32) << site.source;
      if (!site.shared) {
        EXPECT_EQ(stats[s].transactions, 32 * 4) << site.source;  // coalesced rows
      } else if (site.kind == emit::AccessKind::Store) {
        EXPECT_EQ(stats[s].transactions, 32) << site.source;  // rows of the tile: no conflict
      } else {
        EXPECT_EQ(site.kind, emit::AccessKind::Load);
        EXPECT_EQ(stats[s].transactions, 32 * 32) << site.source;  // columns: 32-way conflicts
        EXPECT_EQ(site.line, std::string(sync).find('\n') == std::string::npos ? 8 : 9);
        EXPECT_EQ(site.source, "out[y * 32 + x] = tile[x, y]");
        EXPECT_EQ(site.array, "tile");
      }
    }
  }
}

TEST(AccessTrace, AugmentedAssignmentsAndAtomicsAreTheirOwnKinds) {
  Traced k("@jiasu.kernel\n"
           "def f(a, total):\n"
           "    i = jiasu.grid(1)\n"
           "    a[i] += 1.0\n"
           "    jiasu.atomic.add(total, 0, a[i])\n",
           {array(DType::Float32), array(DType::Float32)});
  ASSERT_EQ(k.sites.size(), 3u);
  EXPECT_EQ(k.sites[0].kind, emit::AccessKind::LoadStore);
  EXPECT_EQ(k.sites[1].kind, emit::AccessKind::Atomic);
  EXPECT_EQ(k.sites[1].array, "total");
  EXPECT_EQ(k.sites[2].kind, emit::AccessKind::Load);
  std::vector<float> a(64, 1.0f), total(1, 0.0f);
  auto av = view(a);
  auto tv = view(total);
  void* params[] = {&av, &tv};
  std::vector<AccessStats> stats = k.run({2, 1, 1}, {32, 1, 1}, params, {range_of(a), range_of(total)});
  EXPECT_EQ(total[0], 128.0f);
  EXPECT_EQ(stats[1].requests, 2);
  EXPECT_EQ(stats[1].transactions, 2);  // every lane at one element
  EXPECT_EQ(stats[0].transactions, 2 * 4);
}

}  // namespace
}  // namespace jiasu
