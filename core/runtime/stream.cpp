#include "runtime/stream.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/device.hpp"
#include "runtime/graph.hpp"
#include "runtime/memory.hpp"
#include "support/error.hpp"
#include "support/interrupt.hpp"

namespace jiasu {
namespace {

// Polls done() until it holds: spinning for the first 100 us (short waits end as fast as the driver's own), then
// every 20 us; Ctrl-C raises Interrupted.
template <typename Done>
void wait_until(Done done, const char* what) {
  if (done()) return;
  watch_interrupts();
  const auto start = std::chrono::steady_clock::now();
  while (!done()) {
    if (interrupted()) throw Interrupted(std::string("interrupted (Ctrl-C) while waiting for ") + what);
    if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(100))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool stream_done(cu::CUstream stream) {
  const cu::CUresult r = cu::driver().cuStreamQuery(stream);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  cu::check(r, "cuStreamQuery");
  return true;
}

}  // namespace

void wait_for_stream(cu::CUstream stream) {
  if (!stream || stream == detail::capture_stream) refuse_in_capture("waiting for the GPU");
  wait_until([stream] { return stream_done(stream); }, "the GPU");
}

Stream::Stream(int device, bool non_blocking, int priority) : device_(device) {
  if (device == kCpuDevice) return;
  activate(device);
  cu::check(cu::driver().cuStreamCreateWithPriority(&handle_, non_blocking ? cu::kStreamNonBlocking : 0, priority),
            "cuStreamCreateWithPriority");
}

Stream::~Stream() {
  if (handle_) cu::driver().cuStreamDestroy(handle_);
}

void Stream::synchronize() const {
  if (device_ == kCpuDevice) return;
  activate(device_);
  wait_for_stream(handle_);
}

bool Stream::done() const { return device_ == kCpuDevice || stream_done(handle_); }

void Stream::wait(const Event& event) const {
  if (device_ == kCpuDevice || event.handle() == nullptr) return;
  cu::check(cu::driver().cuStreamWaitEvent(handle_, event.handle(), 0), "cuStreamWaitEvent");
}

Event::Event(int device, bool timing) : device_(device), timing_(timing) {
  if (device == kCpuDevice) return;
  activate(device);
  cu::check(cu::driver().cuEventCreate(&handle_, timing ? 0 : cu::kEventDisableTiming), "cuEventCreate");
}

Event::~Event() {
  if (handle_) cu::driver().cuEventDestroy(handle_);
}

void Event::record(cu::CUstream stream) {
  if (device_ == kCpuDevice) {
    host_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    recorded_ = true;
    return;
  }
  activate(device_);
  cu::check(cu::driver().cuEventRecord(handle_, work_stream(stream)), "cuEventRecord");
  recorded_ = true;
}

void Event::synchronize() const {
  if (device_ == kCpuDevice) return;
  activate(device_);
  wait_until([this] { return done(); }, "an event");
}

bool Event::done() const {
  if (device_ == kCpuDevice) return true;
  cu::CUresult r = cu::driver().cuEventQuery(handle_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  cu::check(r, "cuEventQuery");
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw BadValue("elapsed_time needs two events created with timing=True");
  if (!recorded_ || !end.recorded_) throw BadValue("elapsed_time needs two recorded events");
  if ((device_ == kCpuDevice) != (end.device_ == kCpuDevice))
    throw BadValue("elapsed_time needs two events of the same backend (the CPU's or a GPU's)");
  if (device_ == kCpuDevice) return static_cast<float>(end.host_ms_ - host_ms_);
  float ms = 0;
  cu::check(cu::driver().cuEventElapsedTime(&ms, handle_, end.handle_), "cuEventElapsedTime");
  return ms;
}

double gpu_ms_per_call(int device, const std::function<void()>& run) {
  constexpr double kBurstMs = 0.5;  // long enough that the gaps between launches stop counting
  constexpr int kMaxCalls = 16, kBursts = 3;
  Event start(device, true), end(device, true);
  const auto burst = [&](int calls) {
    run();
    start.record(nullptr);
    for (int i = 0; i < calls; ++i) run();
    end.record(nullptr);
    end.synchronize();
    return static_cast<double>(start.elapsed_ms(end)) / calls;
  };
  run();
  double best = burst(1);
  const int calls = static_cast<int>(std::clamp(kBurstMs / std::max(best, 1e-3), 1.0, double{kMaxCalls}));
  for (int i = 1; i < kBursts; ++i) best = std::min(best, burst(calls));
  return best;
}

}  // namespace jiasu
