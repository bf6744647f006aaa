// jiasu.benchmark's core: the statistics and the timing loop on the CPU device (the GPU's is in
// tests/python/gpu/test_benchmark_gpu.py).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "runtime/benchmark.hpp"
#include "runtime/memory.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

TEST(Benchmark, StatisticsOfOddAndEvenCounts) {
  // 1, 2, 4, 9 (given out of order): median (2 + 4) / 2 = 3, mean 4, deviations -3 -2 0 5: variance 38 / 4 = 9.5.
  const TimingStats s = timing_stats({4, 1, 9, 2});
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(9.5));
  const TimingStats odd = timing_stats({5, 3, 7});
  EXPECT_DOUBLE_EQ(odd.median, 5);
  EXPECT_DOUBLE_EQ(odd.std, std::sqrt(8.0 / 3));
  const TimingStats one = timing_stats({0.25});
  EXPECT_DOUBLE_EQ(one.min, 0.25);
  EXPECT_DOUBLE_EQ(one.median, 0.25);
  EXPECT_DOUBLE_EQ(one.std, 0);
  EXPECT_THROW(timing_stats({}), BadValue);
}

TEST(Benchmark, CallsWarmUpThenTimedCalls) {
  int calls = 0;
  BenchmarkOptions options;
  options.n_repeat = 7;
  options.n_warmup = 3;
  const BenchmarkTimes t = benchmark(kCpuDevice, [&] { ++calls; }, options);
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(t.cpu_ms.size(), 7u);
  EXPECT_TRUE(t.gpu_ms.empty());
  for (double ms : t.cpu_ms) EXPECT_GE(ms, 0);
}

TEST(Benchmark, MeasuresTheCall) {
  BenchmarkOptions options;
  options.n_repeat = 3;
  options.n_warmup = 0;
  const BenchmarkTimes t =
      benchmark(kCpuDevice, [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, options);
  for (double ms : t.cpu_ms) {
    EXPECT_GE(ms, 2.0);
    EXPECT_LT(ms, 1000.0);
  }
}

TEST(Benchmark, RefusesBadCountsAndPassesErrorsOn) {
  BenchmarkOptions options;
  options.n_repeat = 0;
  EXPECT_THROW(benchmark(kCpuDevice, [] {}, options), BadValue);
  options.n_repeat = 1;
  options.n_warmup = -1;
  EXPECT_THROW(benchmark(kCpuDevice, [] {}, options), BadValue);
  options.n_warmup = 0;
  EXPECT_THROW(benchmark(kCpuDevice, [] { throw std::runtime_error("from the work"); }, options), std::runtime_error);
}

}  // namespace
}  // namespace jiasu
