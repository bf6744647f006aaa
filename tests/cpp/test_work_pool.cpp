// The pool behind the CPU backend's blocks and the staging engine's copies: every task runs exactly once,
// from several threads, and the first exception a task throws reaches the caller after all have run.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/work_pool.hpp"

namespace jiasu {
namespace {

TEST(WorkPool, EveryTaskRunsOnce) {
  WorkPool pool(4);
  EXPECT_GE(pool.threads(), 1u);
  for (size_t tasks : {0, 1, 3, 1000}) {
    std::vector<std::atomic<int>> runs(tasks);
    pool.run(tasks, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < tasks; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i << " of " << tasks;
  }
}

TEST(WorkPool, FirstExceptionReachesTheCallerAfterEveryTaskRan) {
  WorkPool pool(3);
  std::atomic<int> ran{0};
  try {
    pool.run(100, [&](size_t i) {
      ++ran;
      if (i % 10 == 7) throw std::runtime_error("task failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task failed");
  }
  EXPECT_EQ(ran.load(), 100);
  std::atomic<int> after{0};
  pool.run(10, [&](size_t) { ++after; });  // the pool still works
  EXPECT_EQ(after.load(), 10);
}

TEST(WorkPool, CallersFromSeveralThreadsEachGetTheirJobDone) {
  WorkPool pool(2);
  std::vector<std::thread> callers;
  std::vector<long long> sums(4, 0);
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        std::atomic<long long> sum{0};
        pool.run(64, [&](size_t i) { sum += static_cast<long long>(i); });
        sums[c] += sum.load();
      }
    });
  for (std::thread& t : callers) t.join();
  for (long long s : sums) EXPECT_EQ(s, 50LL * (63 * 64 / 2));
}

}  // namespace
}  // namespace jiasu
