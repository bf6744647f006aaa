// The CPU backend's kernels: Python kernels checked, emitted as host C++, compiled (through the disk
// cache) and launched with their blocks spread over the process-wide thread pool; results checked exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "frontend_test_support.hpp"
#include "host_test_support.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using fe::Type;
using host_test::chunk_sums;
using host_test::view;
using testing::array;
using testing::python;
using testing::scalar;

std::shared_ptr<HostKernel> build(const std::string& text, const std::vector<Type>& signature) {
  return compile_host_kernel(fe::check(python(text), signature));
}

const char* const kAdd =
    "@jiasu.kernel\n"
    "def add(x, y, out):\n"
    "    i = jiasu.grid(1)\n"
    "    if i < out.size:\n"
    "        out[i] = x[i] + y[i]\n";

std::vector<Type> add_signature() {
  const Type f32 = array(DType::Float32);
  return {f32, f32, f32};
}

TEST(HostKernel, SeedKernelOverAMillionElements) {
  auto k = build(kAdd, add_signature());
  EXPECT_GE(host_thread_count(), 1);
  const long long n = 1000003;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (long long i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(i % 4099), y[i] = 1.0f / static_cast<float>(i + 1);
  auto xv = view(x); auto yv = view(y); auto ov = view(out);
  void* params[] = {&xv, &yv, &ov};
  const unsigned threads = 256, blocks = static_cast<unsigned>((n + threads - 1) / threads);
  k->launch({blocks, 1, 1}, {threads, 1, 1}, params, 0);
  for (long long i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;

  // Again (the pool is reused), as a 2-d grid of the same blocks.
  std::fill(out.begin(), out.end(), -1.0f);
  auto k2 = build(
      "@jiasu.kernel\n"
      "def add2(x, y, out):\n"
      "    i = (jiasu.blockIdx.y * jiasu.gridDim.x + jiasu.blockIdx.x) * jiasu.blockDim.x + jiasu.threadIdx.x\n"
      "    if i < out.size:\n"
      "        out[i] = x[i] + y[i]\n",
      add_signature());
  k2->launch({977, (blocks + 976) / 977, 1}, {threads, 1, 1}, params, 0);
  for (long long i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(HostKernel, BlockReductionInSharedMemoryWithAnAtomicTotal) {
  auto k = build(
      "@jiasu.kernel\n"
      "def block_sum(x, partial, total):\n"
      "    buf = jiasu.shared.array(128, np.int64)\n"
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
      "        partial[jiasu.blockIdx.x] = buf[0]\n"
      "        jiasu.atomic.add(total, 0, buf[0])\n",
      {array(DType::Int64), array(DType::Int64), array(DType::Int64)});
  const long long blocks = 500, n = blocks * 128 - 37;
  std::vector<int64_t> x(n), partial(blocks, -1), total = {0};
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 5000;
  auto xv = view(x); auto pv = view(partial); auto tv = view(total);
  void* params[] = {&xv, &pv, &tv};
  const std::vector<int64_t> expected = chunk_sums(x, 128);
  const int64_t expected_total = std::accumulate(expected.begin(), expected.end(), int64_t{0});
  for (int round = 0; round < 3; ++round) {  // shared memory holds the last block's values between launches
    total[0] = 0;
    k->launch({static_cast<unsigned>(blocks), 1, 1}, {128, 1, 1}, params, 0);
    for (long long b = 0; b < blocks; ++b) ASSERT_EQ(partial[b], expected[b]) << b;
    EXPECT_EQ(total[0], expected_total);
  }
}

TEST(HostKernel, GridOfOneBlock) {
  auto k = build(kAdd, add_signature());
  std::vector<float> x(100), y(100), out(100, -1.0f);
  for (int i = 0; i < 100; ++i) x[i] = static_cast<float>(i), y[i] = 0.5f;
  auto xv = view(x); auto yv = view(y); auto ov = view(out);
  void* params[] = {&xv, &yv, &ov};
  k->launch({1, 1, 1}, {128, 1, 1}, params, 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
  // Fewer blocks than pool threads.
  std::fill(out.begin(), out.end(), -1.0f);
  k->launch({2, 1, 1}, {50, 1, 1}, params, 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(HostKernel, BadDimensions) {
  auto k = build(kAdd, add_signature());
  std::vector<float> x(4), y(4), out(4);
  auto xv = view(x); auto yv = view(y); auto ov = view(out);
  void* params[] = {&xv, &yv, &ov};
  EXPECT_THROW(k->launch({0, 1, 1}, {4, 1, 1}, params, 0), BadValue);
  EXPECT_THROW(k->launch({1, 1, 0}, {4, 1, 1}, params, 0), BadValue);
  EXPECT_THROW(k->launch({1, 1, 1}, {0, 1, 1}, params, 0), BadValue);
  EXPECT_THROW(k->launch({1, 1, 1}, {4, 0, 1}, params, 0), BadValue);
  EXPECT_THROW(HostKernel(nullptr, "x"), BadValue);
}

// ---- Fibers (kernels with barriers or warp operations) over the pool

TEST(HostKernel, ManyBarriersInALoop) {
  // Each round every thread reads its neighbour's value of the last round: wrong at once if a barrier
  // let a thread through early or late.
  auto k = build(
      "@jiasu.kernel\n"
      "def rounds(x, out, n):\n"
      "    s = jiasu.shared.array(256, np.int64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    v = x[jiasu.grid(1)]\n"
      "    for r in range(n):\n"
      "        s[t] = v\n"
      "        jiasu.syncthreads()\n"
      "        v = v + s[(t + 1) % jiasu.blockDim.x] * (r % 3 - 1)\n"
      "        jiasu.syncthreads()\n"
      "    out[jiasu.grid(1)] = v\n",
      {array(DType::Int64), array(DType::Int64), scalar(DType::Int64)});
  const long long blocks = 300, threads = 256, rounds = 100;
  std::vector<int64_t> x(blocks * threads), out(x.size(), -1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 7919) % 1009) - 500;
  auto xv = view(x); auto ov = view(out);
  int64_t n = rounds;
  void* params[] = {&xv, &ov, &n};
  k->launch({static_cast<unsigned>(blocks), 1, 1}, {static_cast<unsigned>(threads), 1, 1}, params, 0);
  for (long long b = 0; b < blocks; ++b) {
    std::vector<int64_t> v(x.begin() + b * threads, x.begin() + (b + 1) * threads), next(threads);
    for (long long r = 0; r < rounds; ++r) {
      for (long long t = 0; t < threads; ++t) next[t] = v[t] + v[(t + 1) % threads] * (r % 3 - 1);
      v.swap(next);
    }
    for (long long t = 0; t < threads; ++t) ASSERT_EQ(out[b * threads + t], v[t]) << b << "," << t;
  }
}

TEST(HostKernel, WarpShufflesOverThePool) {
  // A warp sum (shfl_xor), an inclusive scan (shfl_up) and a broadcast (shfl) per warp; blocks of 3-d
  // threads with a partial last warp.
  auto k = build(
      "@jiasu.kernel\n"
      "def warps(x, sums, scans, firsts):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * (jiasu.threadIdx.y + jiasu.blockDim.y * jiasu.threadIdx.z)\n"
      "    i = jiasu.blockIdx.x * jiasu.blockDim.x * jiasu.blockDim.y * jiasu.blockDim.z + t\n"
      "    v = x[i]\n"
      "    s = v\n"
      "    m = 16\n"
      "    while m > 0:\n"
      "        s += jiasu.shfl_xor_sync(0xffffffff, s, m)\n"
      "        m //= 2\n"
      "    c = v\n"
      "    d = 1\n"
      "    while d < 32:\n"
      "        u = jiasu.shfl_up_sync(0xffffffff, c, d)\n"
      "        if jiasu.laneid >= d:\n"
      "            c += u\n"
      "        d *= 2\n"
      "    sums[i] = s\n"
      "    scans[i] = c\n"
      "    firsts[i] = jiasu.shfl_sync(0xffffffff, v, 0)\n",
      {array(DType::Int64), array(DType::Int64), array(DType::Int64), array(DType::Int64)});
  const long long blocks = 200, per_block = 8 * 4 * 3;  // 96 threads: 3 full warps
  std::vector<int64_t> x(blocks * per_block), sums(x.size(), -1), scans(x.size(), -1), firsts(x.size(), -1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 31) % 97) - 40;
  auto xv = view(x); auto sv = view(sums); auto cv = view(scans); auto fv = view(firsts);
  void* params[] = {&xv, &sv, &cv, &fv};
  k->launch({static_cast<unsigned>(blocks), 1, 1}, {8, 4, 3}, params, 0);
  const std::vector<int64_t> warp_sums = chunk_sums(x, 32);
  for (size_t w = 0; w < x.size() / 32; ++w) {
    const int64_t sum = warp_sums[w];
    int64_t prefix = 0;
    for (size_t l = 0; l < 32; ++l) {
      const size_t i = w * 32 + l;
      ASSERT_EQ(sums[i], sum) << i;
      ASSERT_EQ(scans[i], prefix += x[i]) << i;
      ASSERT_EQ(firsts[i], x[w * 32]) << i;
    }
  }
}

const char* const kSplit =
    "@jiasu.kernel\n"
    "def split(out, bad):\n"
    "    i = jiasu.grid(1)\n"
    "    if jiasu.blockIdx.x == bad and jiasu.laneid < 16:\n"
    "        jiasu.syncthreads()\n"
    "    else:\n"
    "        out[i] += jiasu.shfl_down_sync(0xffffffff, 1, 1)\n"
    "        jiasu.syncthreads()\n"
    "    out[i] += 1\n";

TEST(HostKernel, ADeadlockIsAnExceptionNotAnAbort) {
  auto k = build(kSplit, {array(DType::Int64), scalar(DType::Int64)});
  const long long blocks = 1000, threads = 64;
  std::vector<int64_t> out(blocks * threads, 0);
  auto ov = view(out);
  int64_t bad = 0;
  void* params[] = {&ov, &bad};
  try {
    k->launch({static_cast<unsigned>(blocks), 1, 1}, {static_cast<unsigned>(threads), 1, 1}, params, 0);
    FAIL() << "no exception";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.name(), "CUDA_ERROR_LAUNCH_FAILED");
    EXPECT_EQ(std::string(e.what()),
              "kernel split (CPU): deadlock in block (0, 0, 0): threads (0, 0, 0)-(15, 0, 0) wait at a block barrier "
              "(syncthreads) that threads (16, 0, 0)-(31, 0, 0) of their warp never reach: those wait at "
              "shfl_down_sync for the first ones");
  }
  // Block 0 starts the first range, which stops there: block 1 (in it unless there are 500 or more
  // threads in the pool) never ran.
  EXPECT_EQ(out[0], 0);
  if (host_thread_count() < 500) EXPECT_EQ(out[threads], 0);

  // The pool and the lent fiber stacks still work: the same kernel without the deadlock, then with it
  // in the last block only (another range, another OS thread when there are several).
  std::fill(out.begin(), out.end(), 0);
  bad = -1;
  k->launch({static_cast<unsigned>(blocks), 1, 1}, {static_cast<unsigned>(threads), 1, 1}, params, 0);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 2) << i;  // the last lane of a warp shuffles its own 1
  bad = blocks - 1;
  EXPECT_THROW(k->launch({static_cast<unsigned>(blocks), 1, 1}, {static_cast<unsigned>(threads), 1, 1}, params, 0),
               LaunchError);
  // A grid of one block runs on the calling thread alone: reported the same way.
  bad = 0;
  EXPECT_THROW(k->launch({1, 1, 1}, {static_cast<unsigned>(threads), 1, 1}, params, 0), LaunchError);
}

// Debug mode: the first index out of bounds is an OutOfRange (Python's IndexError) naming the array, the
// index, the shape and the Python line; indices in bounds (negative ones too) run as without it.
TEST(HostKernel, DebugModeReportsTheFirstIndexOutOfBounds) {
  const char* const shift =
      "@jiasu.kernel\n"
      "def shift(x, out, k):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i + k]\n";
  const Type f32 = array(DType::Float32);
  const std::vector<Type> signature = {f32, f32, scalar(DType::Int64)};
  auto checked = compile_host_kernel(fe::check(python(shift), signature), true);
  std::vector<float> x(8), out(8, -1.0f);
  for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i);
  auto xv = view(x); auto ov = view(out);
  long long k = -8;  // x[i - 8]: all valid NumPy indices
  void* params[] = {&xv, &ov, &k};
  checked->launch({1, 1, 1}, {8, 1, 1}, params, 0);
  EXPECT_EQ(out, x);
  k = 1;
  try {
    checked->launch({2, 1, 1}, {4, 1, 1}, params, 0);
    FAIL() << "no error";
  } catch (const OutOfRange& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kernel 'shift' (debug): index 8 is out of bounds for axis 0 with size 8: x[8] of "
                           "shape (8,) at k.py:5:18 (thread (3, 0, 0) of block (1, 0, 0))"),
              std::string::npos) << message;
  }
  // Without debug mode the same kernel has no checks at all.
  auto plain = compile_host_kernel(fe::check(python(shift), signature), false);
  EXPECT_NE(plain->library()->path(), checked->library()->path());
}

}  // namespace
}  // namespace jiasu
