// Timing a piece of work repeatedly (jiasu.benchmark): the GPU's time between CUDA events and the host's wall clock.
#pragma once

#include <functional>
#include <vector>

namespace jiasu {

struct TimingStats {
  double min = 0, median = 0, mean = 0, max = 0;
  double std = 0;  // the population standard deviation, as NumPy's std
};
// Of at least one time.
TimingStats timing_stats(const std::vector<double>& times);

struct BenchmarkOptions {
  int n_repeat = 100;  // timed calls, at least 1
  int n_warmup = 10;   // untimed calls first (compilation, caches, clocks), at least 0
  // Before each timed call, overwrite a buffer twice the size of the GPU's L2 cache, so that no call finds the
  // previous one's data there. Ignored on the CPU device.
  bool flush_l2 = false;
};

struct BenchmarkTimes {
  std::vector<double> cpu_ms;  // per timed call: the wall clock of the call itself
  std::vector<double> gpu_ms;  // per timed call, on a GPU: from an event before the call to one after it; else empty
};

// Calls `run` n_warmup + n_repeat times on `device` (a GPU or kCpuDevice). On a GPU each timed call sits between two
// timing events on the legacy default stream, which is waited for after the call, so a call's GPU time is the
// work it queued there (or on streams that synchronise with it) and nothing of the calls before. Throws BadValue
// for options out of range; what `run` throws goes through.
BenchmarkTimes benchmark(int device, const std::function<void()>& run, const BenchmarkOptions& options);

}  // namespace jiasu
