#include "runtime/graph.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {

namespace detail {
thread_local cu::CUstream capture_stream = nullptr;
}  // namespace detail

namespace {

thread_local Graph* capturing_graph = nullptr;

[[noreturn]] void throw_capture_error(const std::string& message) {
  throw CudaError(cu::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", message);
}

// Graphs' own capture streams, by device: pooled and never destroyed, because the libraries that ran work on one
// (cuDNN's handle, cuBLASLt) may keep its handle, and a destroyed stream's handle can come back as another's.
std::mutex pool_mutex;
auto* free_capture_streams = new std::map<int, std::vector<Stream*>>();  // leaked: streams outlive teardown

Stream* take_capture_stream(int device) {
  {
    std::lock_guard<std::mutex> lock(pool_mutex);
    std::vector<Stream*>& free = (*free_capture_streams)[device];
    if (!free.empty()) {
      Stream* stream = free.back();
      free.pop_back();
      return stream;
    }
  }
  // Non-blocking: the default stream's own work (frees in stream order) may go on while this one captures.
  return new Stream(device, /*non_blocking=*/true);
}

void return_capture_stream(Stream* stream) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  (*free_capture_streams)[stream->device()].push_back(stream);
}

}  // namespace

void refuse_in_capture(const char* what) {
  if (!capturing()) return;
  throw_capture_error(std::string(what) + " cannot be part of a CUDA graph: inside `with jiasu.graph()` the GPU's "
                      "work is recorded, not run, so nothing can wait for it or move host memory (do it before or "
                      "after the block)");
}

void keep_for_capture(const std::shared_ptr<Allocation>& memory) {
  if (capturing_graph) capturing_graph->capturing_kept_.push_back(memory);
}

Graph::Graph(int device, cu::CUstream stream) : device_(device), replay_stream_(stream) {
  if (device == kCpuDevice) throw BadValue("CUDA graphs need a GPU");
  if (stream) {
    capture_stream_ = stream;
  } else {
    own_stream_ = take_capture_stream(device);
    capture_stream_ = own_stream_->handle();
  }
}

Graph::~Graph() {
  if (capturing_) end(false);
  const auto& d = cu::driver();
  if (exec_) d.cuGraphExecDestroy(exec_);
  if (graph_) d.cuGraphDestroy(graph_);
  if (own_stream_) return_capture_stream(own_stream_);
}

void Graph::begin() {
  if (capturing()) throw_capture_error("this thread is already capturing a CUDA graph: graphs do not nest");
  activate(device_);
  cu::check(cu::driver().cuStreamBeginCapture(capture_stream_, cu::kStreamCaptureModeRelaxed), "cuStreamBeginCapture");
  detail::capture_stream = capture_stream_;
  capturing_graph = this;
  capturing_ = true;
  capturing_kept_.clear();
}

void Graph::end(bool keep) {
  if (!capturing_) throw BadValue("the graph is not capturing");
  const auto& d = cu::driver();
  detail::capture_stream = nullptr;
  capturing_graph = nullptr;
  capturing_ = false;
  activate(device_);
  cu::CUgraph graph = nullptr;
  const cu::CUresult r = d.cuStreamEndCapture(capture_stream_, &graph);
  std::vector<std::shared_ptr<Allocation>> kept = std::move(capturing_kept_);
  capturing_kept_.clear();
  if (!keep || r != cu::CUDA_SUCCESS) {
    if (graph) d.cuGraphDestroy(graph);
    if (!keep) return;
    if (r == cu::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
      throw CudaError(r, cu::error_name(r),
                      "the CUDA graph capture was invalidated: work inside `with jiasu.graph()` waited for the GPU or "
                      "used a stream the capture does not include");
    cu::throw_error(r, "cuStreamEndCapture");
  }
  size_t count = 0;
  cu::check(d.cuGraphGetNodes(graph, nullptr, &count), "cuGraphGetNodes");
  updated_ = false;
  if (exec_) {
    struct {
      int result;
      void* error_node;
      void* error_from_node;
    } info{};
    const cu::CUresult u = d.cuGraphExecUpdate(exec_, graph, &info);
    if (u == cu::CUDA_SUCCESS) {
      updated_ = true;
    } else if (u != cu::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
      d.cuGraphDestroy(graph);
      cu::throw_error(u, "cuGraphExecUpdate");
    }
  }
  if (!updated_) {  // the first capture, or work of another shape: a new executable graph
    cu::CUgraphExec exec = nullptr;
    const cu::CUresult i = d.cuGraphInstantiateWithFlags(&exec, graph, 0);
    if (i != cu::CUDA_SUCCESS) {
      d.cuGraphDestroy(graph);
      cu::throw_error(i, "cuGraphInstantiateWithFlags");
    }
    if (exec_) d.cuGraphExecDestroy(exec_);
    exec_ = exec;
  }
  if (graph_) d.cuGraphDestroy(graph_);
  graph_ = graph;
  nodes_ = count;
  kept_ = std::move(kept);  // the executable graph now uses the new capture's memory alone
}

void Graph::replay(cu::CUstream stream) {
  if (capturing_) throw BadValue("a graph cannot replay inside its own capture");
  if (!exec_) throw BadValue("the graph has nothing to replay yet: capture work with `with g:` first");
  activate(device_);
  cu::check(cu::driver().cuGraphLaunch(exec_, work_stream(stream ? stream : replay_stream_)), "cuGraphLaunch");
}

}  // namespace jiasu
