#include "runtime/device_peaks.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/stream.hpp"

namespace jiasu {
namespace {

constexpr size_t kCopyBytes = size_t(256) << 20;  // far beyond every cache

// GB/s of a device-to-device copy (each byte read once and written once), the best of a few after a warm-up.
double measure_gpu(int device) {
  const auto from = allocate_device(device, kCopyBytes), to = allocate_device(device, kCopyBytes);
  Event start(device, true), end(device, true);
  double best_ms = 0;
  for (int i = 0; i < 6; ++i) {
    start.record(nullptr);
    copy_device_to_device(to->ptr(), from->ptr(), kCopyBytes, nullptr, false);
    end.record(nullptr);
    end.synchronize();
    const double ms = start.elapsed_ms(end);
    if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  return 2.0 * kCopyBytes / (best_ms * 1e-3) / 1e9;
}

// GB/s of host memory copied by one thread per core, each its own slice, the best of a few.
double measure_cpu() {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<char> from(kCopyBytes, 1), to(kCopyBytes, 0);
  const size_t slice = kCopyBytes / threads;
  double best = 0;
  for (int round = 0; round < 4; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        const size_t begin = t * slice, bytes = t + 1 == threads ? kCopyBytes - begin : slice;
        std::memcpy(to.data() + begin, from.data() + begin, bytes);
      });
    for (auto& w : workers) w.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (round > 0) best = std::max(best, 2.0 * kCopyBytes / seconds / 1e9);
  }
  return best;
}

}  // namespace

int fp32_lanes_per_multiprocessor(int major, int minor) {
  if (major == 7 || (major == 8 && minor == 0) || major == 6) return 64;
  if (major >= 8) return 128;  // 8.6, 8.7, 8.9, 9.0, 10.x, 12.x
  return 0;
}

const DevicePeaks& device_peaks(int device) {
  static std::mutex mutex;
  static auto* known = new std::map<int, std::unique_ptr<DevicePeaks>>();  // kept until exit
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<DevicePeaks>& slot = (*known)[device];
  if (slot) return *slot;
  auto peaks = std::make_unique<DevicePeaks>();
  if (device == kCpuDevice) {
    peaks->bandwidth_gbs = measure_cpu();
    peaks->bandwidth_method = "host memory copied by one thread per CPU (256 MiB)";
  } else {
    const DeviceProperties& p = device_properties(device);
    peaks->bandwidth_gbs = measure_gpu(device);
    peaks->bandwidth_method = "device-to-device copy of 256 MiB, timed with CUDA events";
    peaks->theoretical_bandwidth_gbs = 2.0 * p.memory_clock_rate_khz * 1e3 * (p.memory_bus_width / 8.0) / 1e9;
    peaks->fp32_gflops = double(p.multiprocessor_count) *
                         fp32_lanes_per_multiprocessor(p.compute_capability_major, p.compute_capability_minor) * 2.0 *
                         p.clock_rate_khz * 1e3 / 1e9;
  }
  slot = std::move(peaks);
  return *slot;
}

}  // namespace jiasu
