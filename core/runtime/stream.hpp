// Streams and events.
#pragma once

#include <functional>

#include "runtime/driver.hpp"

namespace jiasu {

class Event;

// Waits until the work queued on `stream` (null: the legacy default stream) has finished, as
// cuStreamSynchronize does, except that Ctrl-C ends the wait with Interrupted (the work goes on).
void wait_for_stream(cu::CUstream stream);

// On the CPU device (kCpuDevice) work is done when its call returns: a stream there has no handle and nothing to
// wait for, and an event records the host clock, so programs that use them run unchanged on the CPU backend.
class Stream {
 public:
  // A new stream on `device`; non_blocking streams do not synchronize with the legacy default stream.
  Stream(int device, bool non_blocking, int priority = 0);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cu::CUstream handle() const { return handle_; }
  int device() const { return device_; }
  void synchronize() const;
  bool done() const;  // all work queued so far has finished
  void wait(const Event& event) const;

 private:
  cu::CUstream handle_ = nullptr;
  int device_;
};

class Event {
 public:
  Event(int device, bool timing);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cu::CUevent handle() const { return handle_; }
  void record(cu::CUstream stream);
  void synchronize() const;
  bool done() const;
  // Milliseconds from this event to `end`; both recorded and completed.
  float elapsed_ms(const Event& end) const;

 private:
  cu::CUevent handle_ = nullptr;
  int device_;
  bool timing_;
  bool recorded_ = false;
  double host_ms_ = 0;  // on the CPU device: the host clock when recorded
};

// The GPU milliseconds one call of `run` takes on the legacy default stream, for benchmark mode's choices: after
// a warm-up call (which may load kernels), the best of a few bursts of back-to-back calls, each burst queued
// behind one untimed call so that the GPU is busy while the timed calls are launched. A single timed call would
// also count the host's launch latency, which favours plans of fewer kernels over faster ones.
double gpu_ms_per_call(int device, const std::function<void()>& run);

}  // namespace jiasu
