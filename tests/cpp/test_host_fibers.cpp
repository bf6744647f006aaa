// The host emitter's fibers: warps of 32 consecutive threads meeting at each warp operation (shuffles,
// votes, activemask, syncwarp), deadlocks reported instead of aborting, the ucontext fallback, and failures
// that stop the blocks of a launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "host_test_support.hpp"

namespace jiasu {
namespace {

using namespace host_test;

// ---- Warps: 32 consecutive linear threads of a block meet at each warp operation

TEST(EmitHost, WarpShuffleReductionThenBlockReduction) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def block_sum(x, warps, out):\n"
      "    partial = jiasu.shared.array(32, np.int64)\n"
      "    i = jiasu.grid(1)\n"
      "    t = jiasu.threadIdx.x\n"
      "    v = x[i] if i < x.size else 0\n"
      "    offset = 16\n"
      "    while offset > 0:\n"
      "        v += jiasu.shfl_down_sync(0xffffffff, v, offset)\n"
      "        offset //= 2\n"
      "    if jiasu.laneid == 0:\n"
      "        warps[i // 32] = v\n"
      "        partial[t // 32] = v\n"
      "    jiasu.syncthreads()\n"
      "    if t < 32:\n"
      "        v = partial[t] if t < jiasu.blockDim.x // 32 else 0\n"
      "        offset = 16\n"
      "        while offset > 0:\n"
      "            v += jiasu.shfl_down_sync(0xffffffff, v, offset)\n"
      "            offset //= 2\n"
      "        if t == 0:\n"
      "            out[jiasu.blockIdx.x] = v\n",
      {array(DType::Int64), array(DType::Int64), array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("blocks.run_fibers(body,"), std::string::npos);
  const long long blocks = 5, threads = 256, n = blocks * threads - 77;
  std::vector<int64_t> x(n), warps(blocks * threads / 32, -1), out(blocks, -1);
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 50000;
  auto xv = view(x); auto wv = view(warps); auto ov = view(out);
  k->run({blocks}, {threads}, {&xv, &wv, &ov});
  std::vector<int64_t> warp_sums = chunk_sums(x, 32);
  warp_sums.resize(warps.size());  // the warps past the end of x sum nothing
  for (size_t w = 0; w < warps.size(); ++w) ASSERT_EQ(warps[w], warp_sums[w]) << w;
  const std::vector<int64_t> block_sums = chunk_sums(x, threads);
  int64_t total = 0;
  for (long long b = 0; b < blocks; ++b) {
    EXPECT_EQ(out[b], block_sums[b]) << b;
    total += out[b];
  }
  int64_t exact = 0;
  for (int64_t v : x) exact += v;
  EXPECT_EQ(total, exact);
}

TEST(EmitHost, ShflXorButterflyGivesEveryLaneTheWarpSum) {
  auto k = build(
      "@jiasu.kernel\n"
      "def butterfly(x, out, biggest):\n"
      "    i = jiasu.grid(1)\n"
      "    v = x[i]\n"
      "    m = x[i]\n"
      "    mask = 16\n"
      "    while mask > 0:\n"
      "        v += jiasu.shfl_xor_sync(0xffffffff, v, mask)\n"
      "        m = max(m, jiasu.shfl_xor_sync(0xffffffff, m, mask))\n"
      "        mask //= 2\n"
      "    out[i] = v\n"
      "    biggest[i] = m\n",
      {array(DType::Float64), array(DType::Float64), array(DType::Float64)});
  const int n = 3 * 64;  // blocks of 2 x 32 threads: 2 warps each, warps follow the linear index
  std::vector<double> x(n), out(n, -1), biggest(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 37) % 101 - 50;  // small integers: every sum is exact
  auto xv = view(x); auto ov = view(out); auto bv = view(biggest);
  k->run({3}, {64}, {&xv, &ov, &bv});
  for (int w = 0; w < n / 32; ++w) {
    double sum = 0, most = -1e300;
    for (int l = 0; l < 32; ++l) sum += x[w * 32 + l], most = std::max(most, x[w * 32 + l]);
    for (int l = 0; l < 32; ++l) {
      ASSERT_EQ(out[w * 32 + l], sum) << w << "," << l;
      ASSERT_EQ(biggest[w * 32 + l], most) << w << "," << l;
    }
  }
}

TEST(EmitHost, ShflIndexAndUpOverTwoDimensionalBlocksAndAPartialWarp) {
  auto k = build(
      "@jiasu.kernel\n"
      "def shuffles(x, third, scan, down):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    i = jiasu.blockIdx.x * jiasu.blockDim.x * jiasu.blockDim.y + t\n"
      "    v = x[i]\n"
      "    third[i] = jiasu.shfl_sync(0xffffffff, v, 3)\n"
      "    s = v\n"
      "    d = 1\n"
      "    while d < 32:\n"
      "        u = jiasu.shfl_up_sync(0xffffffff, s, d)\n"
      "        if jiasu.laneid >= d:\n"
      "            s += u\n"
      "        d *= 2\n"
      "    scan[i] = s\n"
      "    down[i] = jiasu.shfl_down_sync(0xffffffff, v, 1)\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Int32)});
  const int per_block = 8 * 5, blocks = 2, n = per_block * blocks;  // warps of 32 and 8 lanes per block
  std::vector<int32_t> x(n), third(n, -1), scan(n, -1), down(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 13) % 29 - 7;
  auto xv = view(x); auto tv = view(third); auto sv = view(scan); auto dv = view(down);
  k->run({blocks}, {8, 5}, {&xv, &tv, &sv, &dv});
  for (int i = 0; i < n; ++i) {
    const int t = i % per_block, first = i - t + t / 32 * 32, lane = t % 32;
    const int lanes = std::min(32, per_block - t / 32 * 32);
    ASSERT_EQ(third[i], x[first + 3]) << i;
    int32_t prefix = 0;
    for (int l = 0; l <= lane; ++l) prefix += x[first + l];
    ASSERT_EQ(scan[i], prefix) << i;
    // from lane + 1; the last lane (of a full warp, or of the partial one) keeps its own value
    ASSERT_EQ(down[i], lane + 1 < lanes ? x[i + 1] : x[i]) << i;
  }
}

TEST(EmitHost, BallotAnyAllWithAKnownPattern) {
  auto k = build(
      "@jiasu.kernel\n"
      "def votes(x, ballots, low, anys, alls, nones):\n"
      "    i = jiasu.grid(1)\n"
      "    p = x[i] > 0\n"
      "    ballots[i] = jiasu.ballot_sync(0xffffffff, p)\n"
      "    low[i] = jiasu.ballot_sync(0x0000ffff, p)\n"
      "    anys[i] = jiasu.any_sync(0xffffffff, p)\n"
      "    alls[i] = jiasu.all_sync(0xffffffff, p)\n"
      "    nones[i] = jiasu.any_sync(0xffffffff, x[i] > 1000) or jiasu.all_sync(0xffff0000, x[i] > 0)\n",
      {array(DType::Int32), array(DType::UInt32), array(DType::UInt32), array(DType::Bool), array(DType::Bool),
       array(DType::Bool)});
  // 4 warps: every third lane positive; all positive; none positive; only lane 17 positive
  const int n = 128;
  std::vector<int32_t> x(n, -5);
  for (int l = 0; l < 32; l += 3) x[l] = 1;
  for (int l = 32; l < 64; ++l) x[l] = 7;
  x[96 + 17] = 2;
  std::vector<uint32_t> ballots(n), low(n);
  std::vector<uint8_t> anys(n, 9), alls(n, 9), nones(n, 9);
  auto xv = view(x); auto bv = view(ballots); auto lv = view(low);
  auto av = view(anys); auto allv = view(alls); auto nv = view(nones);
  k->run({2}, {64}, {&xv, &bv, &lv, &av, &allv, &nv});
  const uint32_t thirds = 0x49249249u;  // lanes 0, 3, ..., 30
  const uint32_t expected_ballot[4] = {thirds, 0xffffffffu, 0u, 1u << 17};
  const uint8_t expected_any[4] = {1, 1, 0, 1}, expected_all[4] = {0, 1, 0, 0};
  const uint8_t expected_none[4] = {0, 1, 0, 0};  // all_sync over lanes 16..31: only warp 1 has them all positive
  for (int i = 0; i < n; ++i) {
    const int w = i / 32;
    ASSERT_EQ(ballots[i], expected_ballot[w]) << i;
    ASSERT_EQ(low[i], expected_ballot[w] & 0xffffu) << i;
    ASSERT_EQ(anys[i], expected_any[w]) << i;
    ASSERT_EQ(alls[i], expected_all[w]) << i;
    ASSERT_EQ(nones[i], expected_none[w]) << i;
  }
}

TEST(EmitHost, ActiveMaskAndSyncWarp) {
  auto k = build(
      "@jiasu.kernel\n"
      "def masks(x, full, swapped, after):\n"
      "    s = jiasu.shared.array(64, np.int64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    full[i] = jiasu.activemask()\n"
      "    s[t] = x[i]\n"
      "    jiasu.syncwarp()\n"
      "    swapped[i] = s[t ^ 1]\n"
      "    if jiasu.laneid >= 20:\n"
      "        return\n"
      "    jiasu.syncwarp(0xfffff)\n"
      "    after[i] = jiasu.activemask()\n",
      {array(DType::Int64), array(DType::UInt32), array(DType::Int64), array(DType::UInt32)});
  const int n = 128;
  std::vector<int64_t> x(n), swapped(n, -1);
  std::vector<uint32_t> full(n, 0), after(n, 0);
  for (int i = 0; i < n; ++i) x[i] = 1000 + i;
  auto xv = view(x); auto fv = view(full); auto sv = view(swapped); auto av = view(after);
  k->run({2}, {64}, {&xv, &fv, &sv, &av});
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(full[i], 0xffffffffu) << i;
    ASSERT_EQ(swapped[i], x[i ^ 1]) << i;  // every lane wrote before any read: syncwarp waited for them
    ASSERT_EQ(after[i], i % 32 < 20 ? 0xfffffu : 0u) << i;  // lanes that returned are no longer active
  }
}

TEST(EmitHost, ActiveMaskInABranchAndAShuffleFromItsLeader) {
  // warp-aggregated increments: the lanes with work meet in the branch, the lowest one adds for all of them
  auto k = build(
      "@jiasu.kernel\n"
      "def aggregate(x, counter, masks, got):\n"
      "    i = jiasu.grid(1)\n"
      "    if x[i] > 0:\n"
      "        m = jiasu.activemask()\n"
      "        masks[i] = m\n"
      "        leader = jiasu.ffs(m) - 1\n"
      "        base = 0\n"
      "        if jiasu.laneid == leader:\n"
      "            base = jiasu.atomic.add(counter, 0, jiasu.popc(m))\n"
      "        got[i] = jiasu.shfl_sync(m, base, leader) + jiasu.popc(m & ((1 << jiasu.laneid) - 1))\n",
      {array(DType::Int32), array(DType::Int64), array(DType::UInt32), array(DType::Int64)});
  const int n = 96;
  std::vector<int32_t> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 7) % 5 == 1 || i / 32 == 1 ? 1 : 0;  // warp 1: every lane
  std::vector<int64_t> counter = {0}, got(n, -1);
  std::vector<uint32_t> masks(n, 0);
  auto xv = view(x); auto cv = view(counter); auto mv = view(masks); auto gv = view(got);
  k->run({1}, {96}, {&xv, &cv, &mv, &gv});
  std::vector<int64_t> slots;
  int64_t positive = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t expected = 0;
    for (int l = 0; l < 32; ++l) expected |= (x[i / 32 * 32 + l] > 0 ? 1u : 0u) << l;
    if (x[i] > 0) {
      ++positive;
      ASSERT_EQ(masks[i], expected) << i;
      slots.push_back(got[i]);
    } else {
      ASSERT_EQ(masks[i], 0u) << i;
      ASSERT_EQ(got[i], -1) << i;
    }
  }
  EXPECT_EQ(counter[0], positive);
  std::sort(slots.begin(), slots.end());  // every positive lane got its own slot
  for (size_t j = 0; j < slots.size(); ++j) ASSERT_EQ(slots[j], static_cast<int64_t>(j));
}

// ---- Deadlocks: the entry point returns and reports them (HostLaunch::error) instead of aborting

TEST(EmitHost, LanesSplitBetweenABarrierAndAWarpOperationAreReported) {
  auto k = build(
      "@jiasu.kernel\n"
      "def split(out):\n"
      "    i = jiasu.grid(1)\n"
      "    if jiasu.laneid < 16:\n"
      "        jiasu.syncthreads()\n"
      "    else:\n"
      "        out[i] = jiasu.shfl_down_sync(0xffffffff, out[i], 1)\n"
      "    out[i] = 7\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(3 * 64, 0);
  auto ov = view(out);
  EXPECT_EQ(k->try_run({3}, {64}, {&ov}),
            "deadlock in block (0, 0, 0): threads (0, 0, 0)-(15, 0, 0) wait at a block barrier (syncthreads) that "
            "threads (16, 0, 0)-(31, 0, 0) of their warp never reach: those wait at shfl_down_sync for the first ones");
  // The block stopped there, and so did the range: blocks 1 and 2 never started.
  EXPECT_EQ(std::count(out.begin(), out.end(), 7), 0);
}

TEST(EmitHost, LanesAtDifferentWarpOperationsAreReported) {
  auto k = build(
      "@jiasu.kernel\n"
      "def apart(out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    if t % 2 == 0:\n"
      "        out[t] = jiasu.shfl_sync(0xffffffff, t, 0)\n"
      "    else:\n"
      "        out[t] = jiasu.ballot_sync(0xffffffff, True)\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(64, -1);
  auto ov = view(out);
  // 2-d blocks of 16 x 4 threads, block (1, 2, 0) of a 2 x 3 grid: the messages name threadIdx
  EXPECT_EQ(k->try_run({2, 3}, {16, 4}, {&ov}, 5, 6),
            "deadlock in block (1, 2, 0): threads (0, 0, 0) wait at shfl_sync while thread (1, 0, 0) of their warp "
            "reaches ballot_sync (the lanes of a warp must meet at the same warp operation)");
}

TEST(EmitHost, ABarrierThatSomeThreadsSkipByReturningIsNoDeadlock) {
  // as on the device (sm_70+): threads that have returned do not hold a barrier up
  auto k = build(
      "@jiasu.kernel\n"
      "def half(out):\n"
      "    t = jiasu.threadIdx.x\n"
      "    if t >= 40:\n"
      "        return\n"
      "    n = jiasu.syncthreads_count(True)\n"
      "    out[t] = n + jiasu.shfl_sync(0xffffffff, t, 0)\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(100, -1);
  auto ov = view(out);
  k->run({1}, {100}, {&ov});
  for (int t = 0; t < 100; ++t) ASSERT_EQ(out[t], t < 40 ? 40 + t / 32 * 32 : -1) << t;
}

// ---- Stacks: room for the local arrays, in whatever slots the launcher lends

// Lends slots one page larger than asked for (as a launcher that keeps larger stacks from an earlier launch
// does): a block that strode by its own slot size would run its deeper stacks into the guard pages.
void* larger_slots(long long count, long long* bytes) {
  static void* base = nullptr;
  static long long mapped = 0;
  const long long page = sysconf(_SC_PAGESIZE), slot = *bytes + page;
  if (base) munmap(base, static_cast<size_t>(mapped));
  mapped = count * slot;
  base = mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return base = nullptr;
  for (long long i = 0; i < count; ++i)
    mprotect(static_cast<unsigned char*>(base) + i * slot, static_cast<size_t>(page), PROT_NONE);
  *bytes = slot;
  return base;
}

TEST(EmitHost, FiberStacksHoldTheLocalArraysInLentSlots) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def deep(out):\n"
      "    buf = jiasu.local.array(12288, np.float64)\n"  // 96 KiB: more than the 64 KiB every fiber gets
      "    t = jiasu.threadIdx.x\n"
      "    for i in range(12288):\n"
      "        buf[i] = i + t\n"
      "    jiasu.syncwarp()\n"
      "    s = 0.0\n"
      "    for i in range(12288):\n"
      "        s += buf[i]\n"
      "    out[t] = s\n",
      {array(DType::Float64)}, {}, &source);
  EXPECT_NE(source.find("blocks.run_fibers(body, 98304LL)"), std::string::npos);
  for (bool lent : {false, true}) {  // slots as asked for, then larger ones
    k->fiber_stacks = lent ? &larger_slots : &lend_fiber_stacks;
    std::vector<double> out(64, -1);
    auto ov = view(out);
    k->run({1}, {64}, {&ov});
    for (int t = 0; t < 64; ++t) ASSERT_EQ(out[t], 12287.0 * 12288 / 2 + 12288.0 * t) << t << (lent ? " lent" : "");
  }
}

// The fallback for targets other than x86-64 and aarch64 (ucontext) keeps the scheduler's behaviour.
TEST(EmitHost, FibersOnUcontext) {
  const std::string flags = "-DJIASU_HOST_UCONTEXT";
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def scan(x, out):\n"
      "    s = jiasu.shared.array(96, np.float64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    v = x[i]\n"
      "    d = 1\n"
      "    while d < 32:\n"
      "        u = jiasu.shfl_up_sync(0xffffffff, v, d)\n"
      "        if jiasu.laneid >= d:\n"
      "            v += u\n"
      "        d *= 2\n"
      "    s[t] = v\n"
      "    jiasu.syncthreads()\n"
      "    w = t // 32 - 1\n"
      "    while w >= 0:\n"
      "        v += s[w * 32 + 31]\n"
      "        w -= 1\n"
      "    out[i] = v\n",
      {array(DType::Float64), array(DType::Float64)}, {}, &source, flags);
  const int n = 4 * 96;
  std::vector<double> x(n), out(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 5) % 11 - 3;
  auto xv = view(x); auto ov = view(out);
  k->run({4}, {96}, {&xv, &ov});
  for (int b = 0; b < 4; ++b) {
    double prefix = 0;
    for (int t = 0; t < 96; ++t) ASSERT_EQ(out[b * 96 + t], prefix += x[b * 96 + t]) << b << "," << t;
  }
  auto bad = build(
      "@jiasu.kernel\n"
      "def split(out):\n"
      "    if jiasu.laneid < 16:\n"
      "        jiasu.syncthreads()\n"
      "    else:\n"
      "        jiasu.syncwarp()\n",
      {array(DType::Int64)}, {}, nullptr, flags);
  std::vector<int64_t> unused(32);
  auto uv = view(unused);
  EXPECT_NE(bad->try_run({1}, {32}, {&uv}).find("deadlock in block (0, 0, 0)"), std::string::npos);
}

// jiasu::report_failure, for checks in emitted code: the first report of a launch wins, the block stops
// (after the reporting thread when threads run one after another; as fibers, when the reporting one
// reaches its next barrier: no other fiber runs after that) and the blocks not yet started are skipped.
TEST(EmitHost, ReportedFailuresStopTheBlocks) {
  const std::string source = emit::host_runtime_header() + R"(
extern "C" void reporting(const jiasu::HostLaunch* launch, void* const* params) {
  long long* ran = *static_cast<long long* const*>(params[0]);
  const bool fibers = *static_cast<const bool*>(params[1]);
  auto body = [&](const jiasu::HostThread& t) {
    const long long i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x;
    if (t.blockIdx.x == 1 && t.threadIdx.x >= 2) jiasu::report_failure("thread %lld, block %lld", t.threadIdx.x, t.blockIdx.x);
    ran[i] += 1;
    if (fibers) {
      jiasu::syncthreads();
      ran[i] += 10;
    }
  };
  auto per_block = [&](const jiasu::HostThread& b) {  // as thread loops run a block: every thread, then stop
    for (long long x = 0; x < b.blockDim.x; ++x) {
      jiasu::HostThread t = b;
      t.threadIdx = {x, 0, 0};
      body(t);
    }
  };
  jiasu::HostBlocks blocks(launch);
  if (fibers) blocks.run_fibers(body, 0);
  else blocks.run_blocks(per_block);
}
)";
  LoadedKernel k(source, "reporting");
  for (bool fibers : {false, true}) {
    std::vector<long long> ran(4 * 4, 0);
    long long* data = ran.data();
    EXPECT_EQ(k.try_run({4}, {4}, {&data, &fibers}), "thread 2, block 1");
    const std::vector<long long> expected =
        fibers ? std::vector<long long>{11, 11, 11, 11, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}  // at thread 2's barrier
               : std::vector<long long>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};    // after block 1
    EXPECT_EQ(ran, expected) << fibers;
  }
}

}  // namespace
}  // namespace jiasu
