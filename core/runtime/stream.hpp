// Streams and events.
#pragma once

#include "runtime/driver.hpp"

namespace jiasu {

class Event;

// Waits until the work queued on `stream` (null: the legacy default stream) has finished, as
// cuStreamSynchronize does, except that Ctrl-C ends the wait with Interrupted (the work goes on).
void wait_for_stream(cu::CUstream stream);

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
};

}  // namespace jiasu
