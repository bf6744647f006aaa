// CUDA graphs by stream capture (jiasu.graph()): the GPU work a thread queues while it captures (kernel
// launches, device copies and fills, array operations, cuBLASLt and cuDNN calls) is recorded instead of run,
// and replay() runs all of it again as one graph launch, at a fraction of the launches' host cost.
//
// While a thread captures, work it queues on the default stream goes to the capturing stream (work_stream()):
// every launch site asks work_stream() for its stream. What cannot be recorded, because it waits for the GPU or
// moves host memory (a copy to or from the host, a synchronize), is refused with a CudaError before the driver
// sees it, so the capture stays valid and the `with` block's error says what to move out of it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/driver.hpp"

namespace jiasu {

class Allocation;
class Stream;

namespace detail {
// The stream this thread captures on, or null.
extern thread_local cu::CUstream capture_stream;
}  // namespace detail

// The stream work asked for on `stream` goes to: the same, except that the default stream (null) is the
// capturing stream while this thread captures.
[[gnu::always_inline]] inline cu::CUstream work_stream(cu::CUstream stream) {
  return stream ? stream : detail::capture_stream;
}
inline bool capturing() { return detail::capture_stream != nullptr; }
// Throws CudaError (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) while this thread captures: `what` cannot be part of
// a graph. Call it before the driver would be asked.
void refuse_in_capture(const char* what);
// Memory allocated while this thread captures: the graph reads or writes it at every replay, so it keeps it.
void keep_for_capture(const std::shared_ptr<Allocation>& memory);

class Graph {
 public:
  // A graph of GPU work on `device`, captured on `stream` (null: a stream of its own) and replayed there (null:
  // on the default stream, in order with the rest of the program's work).
  Graph(int device, cu::CUstream stream);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Starts capturing this thread's GPU work (CudaError when this thread already captures).
  void begin();
  // Ends the capture started by begin(). The first capture is instantiated; a later one updates the executable
  // graph in place when only the work's parameters changed (cuGraphExecUpdate: new arrays, new scalars), else
  // replaces it. `keep` false (the `with` block raised): the capture is dropped and the graph is as before.
  void end(bool keep = true);
  // Runs the captured work on `stream` (null: where the graph replays by default). CudaError before the first
  // capture.
  void replay(cu::CUstream stream = nullptr);

  int device() const { return device_; }
  bool is_capturing() const { return capturing_; }
  bool captured() const { return exec_ != nullptr; }
  size_t nodes() const { return nodes_; }  // operations in the last capture
  // Whether the last end() updated the executable graph in place (else it instantiated a new one).
  bool updated() const { return updated_; }

 private:
  int device_;
  cu::CUstream replay_stream_;
  Stream* own_stream_ = nullptr;  // the capture stream when the caller gave none: a pooled one, returned at the end
  cu::CUstream capture_stream_;
  cu::CUgraph graph_ = nullptr;
  cu::CUgraphExec exec_ = nullptr;
  size_t nodes_ = 0;
  bool capturing_ = false, updated_ = false;
  std::vector<std::shared_ptr<Allocation>> kept_;      // memory the captured work uses (keep_for_capture)
  std::vector<std::shared_ptr<Allocation>> capturing_kept_;  // the same for the capture under way
  friend void keep_for_capture(const std::shared_ptr<Allocation>& memory);
};

}  // namespace jiasu
