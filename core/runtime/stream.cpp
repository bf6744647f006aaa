#include "runtime/stream.hpp"

#include "runtime/device.hpp"
#include "support/error.hpp"

namespace jiasu {

Stream::Stream(int device, bool non_blocking, int priority) : device_(device) {
  activate(device);
  cu::check(cu::driver().cuStreamCreateWithPriority(&handle_, non_blocking ? cu::kStreamNonBlocking : 0, priority),
            "cuStreamCreateWithPriority");
}

Stream::~Stream() {
  if (handle_) cu::driver().cuStreamDestroy(handle_);
}

void Stream::synchronize() const { cu::check(cu::driver().cuStreamSynchronize(handle_), "cuStreamSynchronize"); }

bool Stream::done() const {
  cu::CUresult r = cu::driver().cuStreamQuery(handle_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  cu::check(r, "cuStreamQuery");
  return true;
}

void Stream::wait(const Event& event) const {
  cu::check(cu::driver().cuStreamWaitEvent(handle_, event.handle(), 0), "cuStreamWaitEvent");
}

Event::Event(int device, bool timing) : device_(device), timing_(timing) {
  activate(device);
  cu::check(cu::driver().cuEventCreate(&handle_, timing ? 0 : cu::kEventDisableTiming), "cuEventCreate");
}

Event::~Event() {
  if (handle_) cu::driver().cuEventDestroy(handle_);
}

void Event::record(cu::CUstream stream) {
  activate(device_);
  cu::check(cu::driver().cuEventRecord(handle_, stream), "cuEventRecord");
  recorded_ = true;
}

void Event::synchronize() const { cu::check(cu::driver().cuEventSynchronize(handle_), "cuEventSynchronize"); }

bool Event::done() const {
  cu::CUresult r = cu::driver().cuEventQuery(handle_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  cu::check(r, "cuEventQuery");
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw BadValue("elapsed_time needs two events created with timing=True");
  if (!recorded_ || !end.recorded_) throw BadValue("elapsed_time needs two recorded events");
  float ms = 0;
  cu::check(cu::driver().cuEventElapsedTime(&ms, handle_, end.handle_), "cuEventElapsedTime");
  return ms;
}

}  // namespace jiasu
