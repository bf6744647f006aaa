// The host emitter: Python kernels are checked, emitted as host C++, compiled with the system C++
// compiler into a shared library, loaded with dlopen and run on host arrays; results are checked exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host_test_support.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using namespace host_test;

TEST(EmitHost, TheSeedKernel) {
  auto k = build(
      "@jiasu.kernel\n"
      "def add(x, y, out):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i] + y[i]\n",
      {array(DType::Float32), array(DType::Float32), array(DType::Float32)});
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) x[i] = 0.1f * i, y[i] = 1.0f / (i + 1);
  auto xv = view(x); auto yv = view(y); auto ov = view(out);
  k->run({8}, {128}, {&xv, &yv, &ov});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(EmitHost, BlockRangesRunOnlyTheirBlocks) {
  auto k = build(
      "@jiasu.kernel\n"
      "def mark(out):\n"
      "    out[jiasu.grid(1)] = jiasu.blockIdx.x * 100 + jiasu.threadIdx.x\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(12, -1);
  auto ov = view(out);
  k->run({4}, {3}, {&ov}, 1, 3);  // blocks 1 and 2
  std::vector<int64_t> expected = {-1, -1, -1, 100, 101, 102, 200, 201, 202, -1, -1, -1};
  EXPECT_EQ(out, expected);
}

TEST(EmitHost, StencilOnAStridedArray) {
  auto k = build(
      "@jiasu.kernel\n"
      "def stencil(a, out, w):\n"
      "    i, j = jiasu.grid(2)\n"
      "    n, m = a.shape\n"
      "    if 0 < i < n - 1 and 0 < j < m - 1:\n"
      "        out[i, j] = w * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - 4 * a[i, j]\n",
      {array(DType::Float64, 2, false), array(DType::Float64, 2), scalar(DType::Float32)});
  const long long n = 13, m = 9;
  std::vector<double> storage(n * 2 * m);  // a is every other column of an n x 2m array
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = std::sin(0.37 * i) * 10;
  auto a = [&](long long i, long long j) { return storage[i * 2 * m + 2 * j]; };
  std::vector<double> out(n * m, 0.0);
  float w = 0.3f;
  ArrayA<double, 2> av{storage.data(), {n, m}, {static_cast<long long>(2 * m * sizeof(double)), 2 * sizeof(double)}};
  ArrayC<double, 2> ov{out.data(), {n, m}};
  k->run({(n + 3) / 4, (m + 3) / 4}, {4, 4}, {&av, &ov, &w});
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < m; ++j) {
      double expected = 0;
      if (0 < i && i < n - 1 && 0 < j && j < m - 1)
        expected = static_cast<double>(w) * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1)) - 4 * a(i, j);
      ASSERT_EQ(out[i * m + j], expected) << i << "," << j;
    }
}

TEST(EmitHost, GridStrideLoop) {
  auto k = build(
      "@jiasu.kernel\n"
      "def twice(x, out):\n"
      "    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):\n"
      "        out[i] += 2 * x[i]\n",
      {array(DType::Int64), array(DType::Int64)});
  std::vector<int64_t> x(1001), out(1001, 1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>(i) - 500;
  auto xv = view(x); auto ov = view(out);
  k->run({3}, {5}, {&xv, &ov});
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], 1 + 2 * x[i]) << i;  // each element exactly once
}

TEST(EmitHost, MathFunctions) {
  auto k = build(
      "@jiasu.kernel\n"
      "def f(x, out, ints):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        v = x[i]\n"
      "        out[i] = math.sin(v) + math.sqrt(abs(v)) * math.exp(-v * v) + math.atan2(v, 2.0) + v ** 2\n"
      "        ints[i] = math.floor(v) * 1000 + round(v) * 10 + max(min(i, 7), 3)\n",
      {array(DType::Float64), array(DType::Float64), array(DType::Int64)});
  std::vector<double> x = {-3.5, -2.5, -0.75, 0.0, 0.5, 1.5, 2.5, 7.25, 1e-3, -1e3};
  std::vector<double> out(x.size());
  std::vector<int64_t> ints(x.size());
  auto xv = view(x); auto ov = view(out); auto iv = view(ints);
  k->run({1}, {32}, {&xv, &ov, &iv});
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    EXPECT_EQ(out[i], std::sin(v) + std::sqrt(std::fabs(v)) * std::exp(-v * v) + std::atan2(v, 2.0) + v * v) << v;
    int64_t m = std::max<int64_t>(std::min<int64_t>(i, 7), 3);
    EXPECT_EQ(ints[i], static_cast<int64_t>(std::floor(v)) * 1000 + static_cast<int64_t>(std::nearbyint(v)) * 10 + m) << v;
  }
}

TEST(EmitHost, FloorDivisionAndModuloFollowPython) {
  auto k = build(
      "@jiasu.kernel\n"
      "def divmod_(a, b, q, r, fq, fr):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < a.size:\n"
      "        q[i] = a[i] // b[i]\n"
      "        r[i] = a[i] % b[i]\n"
      "        fq[i] = float(a[i]) // (b[i] * 0.5)\n"
      "        fr[i] = float(a[i]) % (b[i] * 0.5)\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Float64),
       array(DType::Float64)});
  std::vector<int32_t> a = {7, -7, 7, -7, 6, -6, 0, 5}, b = {2, 2, -2, -2, 3, -3, 5, 0};
  std::vector<int32_t> q(a.size()), r(a.size());
  std::vector<double> fq(a.size()), fr(a.size());
  auto av = view(a); auto bv = view(b); auto qv = view(q); auto rv = view(r); auto fqv = view(fq); auto frv = view(fr);
  k->run({1}, {8}, {&av, &bv, &qv, &rv, &fqv, &frv});
  EXPECT_EQ(q, (std::vector<int32_t>{3, -4, -4, 3, 2, 2, 0, 0}));   // x // 0 is 0 (NumPy)
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, -1, -1, 0, 0, 0, 0}));
  // floats: 7 // 1.0 = 7, -7 // 1.0 = -7, 7 // -1.0 = -7, ...; 6 // 1.5 = 4, -6 // -1.5 = 4, 0 // 2.5 = 0
  EXPECT_EQ(std::vector<double>(fq.begin(), fq.end() - 1), (std::vector<double>{7, -7, -7, 7, 4, 4, 0}));
  EXPECT_EQ(std::vector<double>(fr.begin(), fr.end() - 1), (std::vector<double>{0, 0, -0.0, -0.0, 0, -0.0, 0}));
  EXPECT_TRUE(std::signbit(fr[2]));
  EXPECT_TRUE(std::isinf(fq[7]));  // 5 // 0.0
  EXPECT_TRUE(std::isnan(fr[7]));  // 5 % 0.0
}

TEST(EmitHost, AtomicHistogramAcrossAllThreads) {
  auto k = build(
      "@jiasu.kernel\n"
      "def hist(x, bins, biggest, total):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        jiasu.atomic.add(bins, x[i] % bins.size, 1)\n"
      "        jiasu.atomic.max(biggest, 0, x[i])\n"
      "        jiasu.atomic.add(total, 0, np.float32(0.5))\n",
      {array(DType::Int64), array(DType::Int32), array(DType::Int64), array(DType::Float32)});
  std::vector<int64_t> x(777), biggest = {-1};
  std::vector<int32_t> bins(10, 0);
  std::vector<float> total = {0};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 7919) % 1009) - 300;
  auto xv = view(x); auto bv = view(bins); auto mv = view(biggest); auto tv = view(total);
  k->run({7}, {128}, {&xv, &bv, &mv, &tv});
  std::vector<int32_t> expected(10, 0);
  int64_t most = -1;
  for (int64_t v : x) ++expected[((v % 10) + 10) % 10], most = std::max(most, v);
  EXPECT_EQ(bins, expected);
  EXPECT_EQ(biggest[0], most);
  EXPECT_EQ(total[0], 388.5f);
}

TEST(EmitHost, DeviceFunctionsSeeTheirThread) {
  Globals globals;
  globals["clamp"] = device_function(
      "@jiasu.func\n"
      "def clamp(v, lo, hi):\n"
      "    if v < lo:\n"
      "        return lo\n"
      "    return min(v, hi)\n");
  globals["lane"] = device_function(
      "@jiasu.func\n"
      "def lane():\n"
      "    return jiasu.threadIdx.x\n");
  auto k = build(
      "@jiasu.kernel\n"
      "def k(x, y, who):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        y[i] = clamp(x[i], np.float32(0), hi=np.float32(1))\n"
      "        who[i] = lane()\n",
      {array(DType::Float32), array(DType::Float32), array(DType::Int64)}, globals);
  std::vector<float> x = {-1.0f, 0.25f, 0.5f, 2.0f, 1.0f, -0.0f, 0.75f}, y(x.size());
  std::vector<int64_t> who(x.size());
  auto xv = view(x); auto yv = view(y); auto wv = view(who);
  k->run({3}, {3}, {&xv, &yv, &wv});
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.25f, 0.5f, 1.0f, 1.0f, -0.0f, 0.75f}));
  EXPECT_EQ(who, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(EmitHost, ReturnEndsOnlyItsThread) {
  auto k = build(
      "@jiasu.kernel\n"
      "def odd(out, n):\n"
      "    i = jiasu.grid(1)\n"
      "    if i >= n:\n"
      "        return\n"
      "    if i % 2 == 0:\n"
      "        return\n"
      "    out[i] = i\n",
      {array(DType::Int64), scalar(DType::Int64)});
  std::vector<int64_t> out(10, -1);
  int64_t n = 9;
  auto ov = view(out);
  k->run({2}, {8}, {&ov, &n});
  EXPECT_EQ(out, (std::vector<int64_t>{-1, 1, -1, 3, -1, 5, -1, 7, -1, -1}));
}

TEST(EmitHost, HalfTypesRoundToNearestEven) {
  auto k = build(
      "@jiasu.kernel\n"
      "def third(a, b, h, bf):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < a.size:\n"
      "        h[i] = a[i] / b[i]\n"
      "        bf[i] = np.float32(h[i]) * np.float32(3.0)\n",
      {array(DType::Float16), array(DType::Float16), array(DType::Float16), array(DType::BFloat16)});
  // float16 bits: 1.0 = 0x3c00, 3.0 = 0x4200, 2.0 = 0x4000, 65504 = 0x7bff, 0.5 = 0x3800
  std::vector<uint16_t> a = {0x3c00, 0x4000, 0x7bff, 0x3c00}, b = {0x4200, 0x4200, 0x3800, 0x3c00};
  std::vector<uint16_t> h(4), bf(4);
  auto av = view(a); auto bv = view(b); auto hv = view(h); auto bfv = view(bf);
  k->run({1}, {4}, {&av, &bv, &hv, &bfv});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3555, 0x3955, 0x7c00, 0x3c00}));  // 1/3, 2/3, inf, 1
  // bfloat16(float(h) * 3): 0.333251953125 * 3 = 0.999755859375 -> 0x3f80 (1.0, to nearest)
  EXPECT_EQ(bf[0], 0x3f80);
  EXPECT_EQ(bf[3], 0x4040);  // 3.0
}

// ---- The block scheduler: barriers and shared memory

TEST(EmitHost, KernelsWithoutBarriersRunThreadAfterThread) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def k(out):\n"
      "    out[jiasu.grid(1)] = 1\n",
      {array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("  blocks.run_blocks(body);\n"), std::string::npos);
  EXPECT_NE(source.find("static void jiasu_kernel_blocks("), std::string::npos);
  EXPECT_EQ(source.find("blocks.run_fibers(body,"), std::string::npos);
}

// Thread loops take a condition around a barrier from the first thread: only where it is the same in every
// thread. A grid-stride loop around a barrier (each thread its own index) runs as fibers.
TEST(EmitHost, ThreadLoopsOnlyAroundBlockUniformControls) {
  auto schedule_of = [](const std::string& loop) {
    const fe::Program program = fe::check(python("@jiasu.kernel\n"
                                                 "def k(x, n):\n"
                                                 "    sh = jiasu.shared.array(32, jiasu.int64)\n"
                                                 "    s = n // 2\n" +
                                                 loop +
                                                 "        sh[jiasu.threadIdx.x] = i\n"
                                                 "        jiasu.syncthreads()\n"),
                                          {array(DType::Int64), scalar(DType::Int64)});
    const std::string source = emit::emit_host(program).source;
    const bool loops = source.find("blocks.run_blocks(body)") != std::string::npos;
    EXPECT_NE(loops, source.find("blocks.run_fibers(body,") != std::string::npos);
    return loops ? "thread loops" : "fibers";
  };
  EXPECT_EQ(schedule_of("    for i in range(s):\n"), "thread loops");
  EXPECT_EQ(schedule_of("    for i in range(0, n * jiasu.gridDim.x, jiasu.blockDim.x):\n"), "thread loops");
  EXPECT_EQ(schedule_of("    for i in range(jiasu.grid(1), n, jiasu.gridsize(1)):\n"), "fibers");
  EXPECT_EQ(schedule_of("    for i in range(x[0]):\n"), "fibers");  // memory may differ by the time
  EXPECT_EQ(schedule_of("    i = jiasu.threadIdx.x\n    while i < n:\n        i += 32\n"), "fibers");
}

TEST(EmitHost, BlockReductionInSharedMemory) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def block_sum(x, out):\n"
      "    buf = jiasu.shared.array(256, np.int64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    buf[t] = x[i] if i < x.size else 0\n"
      "    jiasu.syncthreads()\n"
      "    s = jiasu.blockDim.x // 2\n"
      "    while s > 0:\n"
      "        if t < s:\n"
      "            buf[t] += buf[t + s]\n"
      "        jiasu.syncthreads()\n"
      "        s //= 2\n"
      "    if t == 0:\n"
      "        out[jiasu.blockIdx.x] = buf[0]\n",
      {array(DType::Int64), array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("blocks.run_blocks(body)"), std::string::npos);
  const long long blocks = 7, n = blocks * 256 - 100;
  std::vector<int64_t> x(n), out(blocks, -1);
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 5000;
  auto xv = view(x); auto ov = view(out);
  k->run({blocks}, {256}, {&xv, &ov});
  const std::vector<int64_t> expected = chunk_sums(x, 256);
  for (long long b = 0; b < blocks; ++b) EXPECT_EQ(out[b], expected[b]) << b;
}

TEST(EmitHost, BarrierInABranchEveryThreadTakes) {
  Globals globals;
  globals["exchange"] = device_function(  // a barrier inside a device function
      "@jiasu.func\n"
      "def exchange(s, t, n):\n"
      "    jiasu.syncthreads()\n"
      "    return s[n - 1 - t]\n");
  auto k = build(
      "@jiasu.kernel\n"
      "def reverse(x, out, flag):\n"
      "    s = jiasu.shared.array(64, np.float64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    s[t] = x[jiasu.grid(1)]\n"
      "    if flag > 0:\n"
      "        out[jiasu.grid(1)] = exchange(s, t, jiasu.blockDim.x)\n"
      "    else:\n"
      "        out[jiasu.grid(1)] = -1.0\n",
      {array(DType::Float64), array(DType::Float64), scalar(DType::Int64)}, globals);
  std::vector<double> x(128), out(128);
  for (int i = 0; i < 128; ++i) x[i] = 0.5 * i;
  int64_t flag = 1;
  auto xv = view(x); auto ov = view(out);
  k->run({2}, {64}, {&xv, &ov, &flag});
  for (int i = 0; i < 128; ++i) ASSERT_EQ(out[i], x[(i / 64) * 64 + 63 - i % 64]) << i;
}

TEST(EmitHost, SyncthreadsCountAndOr) {
  auto k = build(
      "@jiasu.kernel\n"
      "def votes(x, out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    v = x[jiasu.blockIdx.x * jiasu.blockDim.x * jiasu.blockDim.y + t]\n"
      "    c = jiasu.syncthreads_count(v > 0)\n"
      "    a = jiasu.syncthreads_and(v > 0)\n"
      "    o = jiasu.syncthreads_or(v > 0)\n"
      "    if t == 0:\n"
      "        out[jiasu.blockIdx.x, 0] = c\n"
      "        out[jiasu.blockIdx.x, 1] = a\n"
      "        out[jiasu.blockIdx.x, 2] = o\n",
      {array(DType::Int32), array(DType::Int32, 2)});
  // 4 blocks of 8 x 4 threads: some positive, all positive, none positive, one positive
  std::vector<int32_t> x(4 * 32, 0), out(4 * 3, -1);
  for (int i = 0; i < 32; ++i) x[i] = i % 3 == 0 ? 1 : -1;  // 11 positive
  for (int i = 32; i < 64; ++i) x[i] = 5;
  x[96 + 17] = 1;
  auto xv = view(x);
  ArrayC<int32_t, 2> ov{out.data(), {4, 3}};
  k->run({4}, {8, 4}, {&xv, &ov});
  EXPECT_EQ(out, (std::vector<int32_t>{11, 0, 1, 32, 1, 1, 0, 0, 0, 1, 0, 1}));
}

TEST(EmitHost, TiledMatmulInSharedMemory) {
  auto k = build(
      "@jiasu.kernel\n"
      "def matmul(A, B, C):\n"
      "    sA = jiasu.shared.array((TILE, TILE), np.float64)\n"
      "    sB = jiasu.shared.array(shape=(TILE, TILE), dtype=np.float64)\n"
      "    x, y = jiasu.grid(2)\n"
      "    tx = jiasu.threadIdx.x\n"
      "    ty = jiasu.threadIdx.y\n"
      "    tmp = 0.0\n"
      "    for i in range((A.shape[1] + TILE - 1) // TILE):\n"
      "        sA[ty, tx] = 0\n"
      "        sB[ty, tx] = 0\n"
      "        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:\n"
      "            sA[ty, tx] = A[y, tx + i * TILE]\n"
      "        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:\n"
      "            sB[ty, tx] = B[ty + i * TILE, x]\n"
      "        jiasu.syncthreads()\n"
      "        for j in range(TILE):\n"
      "            tmp += sA[ty, j] * sB[j, tx]\n"
      "        jiasu.syncthreads()\n"
      "    if y < C.shape[0] and x < C.shape[1]:\n"
      "        C[y, x] = tmp\n",
      {array(DType::Float64, 2), array(DType::Float64, 2), array(DType::Float64, 2)}, {{"TILE", int_value(8)}});
  const long long n = 37, m = 29, p = 21;  // C (n x p) = A (n x m) B (m x p); no side a multiple of 8
  std::vector<double> a(n * m), b(m * p), c(n * p, -1);
  for (long long i = 0; i < n * m; ++i) a[i] = (i % 17) - 8;  // small integers: every sum is exact
  for (long long i = 0; i < m * p; ++i) b[i] = (i % 13) - 6;
  ArrayC<double, 2> av{a.data(), {n, m}}, bv{b.data(), {m, p}}, cv{c.data(), {n, p}};
  k->run({(p + 7) / 8, (n + 7) / 8}, {8, 8}, {&av, &bv, &cv});
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < p; ++j) {
      double expected = 0;
      for (long long q = 0; q < m; ++q) expected += a[i * m + q] * b[q * p + j];
      ASSERT_EQ(c[i * p + j], expected) << i << "," << j;
    }
}

TEST(EmitHost, DynamicSharedMemory) {
  auto k = build(
      "@jiasu.kernel\n"
      "def rotate(x, out):\n"
      "    s = jiasu.shared.array(0, np.float32)\n"
      "    t = jiasu.threadIdx.x\n"
      "    n = jiasu.blockDim.x\n"
      "    s[t] = x[jiasu.grid(1)]\n"
      "    jiasu.syncthreads()\n"
      "    out[jiasu.grid(1)] = s[(t + 1) % n]\n",
      {array(DType::Float32), array(DType::Float32)});
  std::vector<float> x(3 * 100), out(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * i;
  auto xv = view(x); auto ov = view(out);
  k->run({3}, {100}, {&xv, &ov}, 0, -1, 100 * sizeof(float));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], x[(i / 100) * 100 + (i % 100 + 1) % 100]) << i;
}

TEST(EmitHost, EarlyReturnCountsAsArrivedAtLaterBarriers) {
  auto k = build(
      "@jiasu.kernel\n"
      "def tail(x, out, counts):\n"
      "    s = jiasu.shared.array(128, np.int32)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    if i >= x.size:\n"
      "        return\n"
      "    s[t] = x[i]\n"
      "    jiasu.syncthreads()\n"
      "    c = jiasu.syncthreads_count(True)\n"
      "    out[i] = s[0] + s[t // 2]\n"
      "    if t == 0:\n"
      "        counts[jiasu.blockIdx.x] = c\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32)});
  const int n = 300;  // the last block of 128 threads has 44 running
  std::vector<int32_t> x(n), out(n, -1), counts(3, -1);
  for (int i = 0; i < n; ++i) x[i] = 3 * i + 1;
  auto xv = view(x); auto ov = view(out); auto cv = view(counts);
  k->run({3}, {128}, {&xv, &ov, &cv});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[(i / 128) * 128] + x[(i / 128) * 128 + (i % 128) / 2]) << i;
  EXPECT_EQ(counts, (std::vector<int32_t>{128, 128, 44}));
}

TEST(EmitHost, LaneIdFollowsTheLinearThreadIndex) {
  auto k = build(
      "@jiasu.kernel\n"
      "def lanes(out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    out[t] = jiasu.laneid\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(80, -1);
  auto ov = view(out);
  k->run({1}, {10, 8}, {&ov});
  for (int i = 0; i < 80; ++i) ASSERT_EQ(out[i], i % 32) << i;
}

}  // namespace
}  // namespace jiasu
