// The CPU backend's kernels: Python kernels checked, emitted as host C++, compiled (through the disk
// cache) and launched with their blocks spread over the process-wide thread pool; results checked exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "cpu/host_kernel.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using fe::GlobalValue;
using fe::Type;

using testing::python;

// The packing the entry point reads for a contiguous 1-d array (jiasu::ArrayC<T, 1>).
template <typename T> struct ArrayC1 { T* data; long long shape[1]; };
template <typename T>
ArrayC1<T> view(std::vector<T>& v) { return {v.data(), {static_cast<long long>(v.size())}}; }

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
  const Type f32 = Type::array(DType::Float32, 1, true);
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
      {Type::array(DType::Int64, 1, true), Type::array(DType::Int64, 1, true), Type::array(DType::Int64, 1, true)});
  const long long blocks = 500, n = blocks * 128 - 37;
  std::vector<int64_t> x(n), partial(blocks, -1), total = {0};
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 5000;
  auto xv = view(x); auto pv = view(partial); auto tv = view(total);
  void* params[] = {&xv, &pv, &tv};
  for (int round = 0; round < 3; ++round) {  // shared memory holds the last block's values between launches
    total[0] = 0;
    k->launch({static_cast<unsigned>(blocks), 1, 1}, {128, 1, 1}, params, 0);
    int64_t expected_total = 0;
    for (long long b = 0; b < blocks; ++b) {
      int64_t expected = 0;
      for (long long i = b * 128; i < std::min(n, (b + 1) * 128); ++i) expected += x[i];
      ASSERT_EQ(partial[b], expected) << b;
      expected_total += expected;
    }
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

}  // namespace
}  // namespace jiasu
