#include "runtime/benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {

TimingStats timing_stats(const std::vector<double>& times) {
  if (times.empty()) throw BadValue("timing statistics need at least one time");
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  TimingStats s;
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double sum = 0;
  for (double t : sorted) sum += t;
  s.mean = sum / n;
  double squares = 0;
  for (double t : sorted) squares += (t - s.mean) * (t - s.mean);
  s.std = std::sqrt(squares / n);
  return s;
}

BenchmarkTimes benchmark(int device, const std::function<void()>& run, const BenchmarkOptions& options) {
  if (options.n_repeat < 1) throw BadValue("n_repeat must be at least 1, not " + std::to_string(options.n_repeat));
  if (options.n_warmup < 0) throw BadValue("n_warmup must be at least 0, not " + std::to_string(options.n_warmup));
  const bool gpu = device != kCpuDevice;
  std::optional<Event> start, end;
  std::shared_ptr<Allocation> flush;
  if (gpu) {
    start.emplace(device, true);
    end.emplace(device, true);
    if (options.flush_l2)
      flush = allocate_device(device, 2 * static_cast<size_t>(std::max(device_properties(device).l2_cache_size, 1)));
  }
  for (int i = 0; i < options.n_warmup; ++i) run();
  if (gpu) synchronize_device(device);  // the timed calls start on an idle GPU

  BenchmarkTimes times;
  times.cpu_ms.reserve(options.n_repeat);
  if (gpu) times.gpu_ms.reserve(options.n_repeat);
  for (int i = 0; i < options.n_repeat; ++i) {
    if (flush) {
      const unsigned char zero = 0;
      activate(device);
      fill_device(flush->ptr(), &zero, 1, flush->bytes(), nullptr);
    }
    if (gpu) start->record(nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const auto t1 = std::chrono::steady_clock::now();
    times.cpu_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (gpu) {
      end->record(nullptr);
      end->synchronize();
      times.gpu_ms.push_back(start->elapsed_ms(*end));
    }
  }
  return times;
}

}  // namespace jiasu
