#include "dnn/convolution_cudnn.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "runtime/graph.hpp"
#include "runtime/profiler.hpp"
#include "runtime/stream.hpp"
#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "support/library_finder.hpp"

namespace jiasu::dnn {
namespace {

std::atomic<bool> tf32{false};
std::atomic<bool> benchmarking{false};

struct Library {
  bool loaded = false;
  std::string path, version, why_not;
};

// libcudnn, found and handed to the frontend once (a later failure to find it is not retried).
const Library& library() {
  static const Library lib = [] {
    Library l;
    if (!cudnn::built()) {
      l.why_not = "jiasu was built without the cudnn-frontend headers (pip install nvidia-cudnn-frontend, then "
                  "reinstall jiasu)";
      return l;
    }
    try {
      const LibraryReport report = inspect_cuda_library("cudnn");
      l.path = report.library.path;
      l.version = report.version;
      if (report.version.empty() || std::stoi(report.version) < 9) {
        l.why_not = "jiasu.nn needs cuDNN 9, found " + (report.version.empty() ? "an unknown version" : report.version) +
                    " at " + report.library.path;
        return l;
      }
      cudnn::set_library(report.library.handle);
      l.loaded = true;
    } catch (const LibraryNotFound& e) {
      l.why_not = e.what();
    }
    return l;
  }();
  return lib;
}

// A cuDNN handle per device, and a lock per handle (a handle serves one call at a time).
struct DeviceHandle {
  void* handle = nullptr;
  std::mutex lock;
};
DeviceHandle& device_handle(int device) {
  static std::mutex mutex;
  static auto* handles = new std::map<int, std::unique_ptr<DeviceHandle>>();  // never freed: used until exit
  std::lock_guard<std::mutex> guard(mutex);
  std::unique_ptr<DeviceHandle>& slot = (*handles)[device];
  if (!slot) {
    activate(device);
    auto made = std::make_unique<DeviceHandle>();
    made->handle = cudnn::create_handle();
    slot = std::move(made);
  }
  return *slot;
}

struct Counters {
  std::mutex mutex;
  int64_t passes = 0, fallbacks = 0;
  std::string last_fallback;
};
Counters& counters() {
  static auto* c = new Counters;
  return *c;
}
bool declined(const std::string& why) {
  Counters& c = counters();
  std::lock_guard<std::mutex> guard(c.mutex);
  ++c.fallbacks;
  c.last_fallback = why;
  return false;
}

cudnn::Tensor tensor_of(const Array& a) {
  cudnn::Tensor t;
  for (int d = 0; d < 4; ++d) {
    t.dims[d] = a.shape()[d];
    t.strides[d] = a.strides()[d] / a.layout().itemsize;
  }
  return t;
}

int alignment_of(const Array& a) {
  const uint64_t address = a.data();
  int alignment = 16;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

}  // namespace

bool cudnn_convolution(cudnn::Pass pass, const Array& x, const Array& w, const Array& y, const ConvParams& p) {
  if (x.on_host()) return false;
  const Library& lib = library();
  if (!lib.loaded) return declined(lib.why_not);
  cudnn::ConvProblem problem;
  problem.pass = pass;
  switch (x.dtype()) {
    case DType::Float16: problem.type = cudnn::Type::Half; break;
    case DType::BFloat16: problem.type = cudnn::Type::BFloat16; break;
    case DType::Float32: problem.type = cudnn::Type::Float; break;
    default: return declined(std::string("cuDNN's graphs have no ") + info(x.dtype()).name + " convolution");
  }
  if (x.size() == 0 || w.size() == 0 || y.size() == 0) return declined("an empty tensor");
  for (const Array* a : {&x, &w, &y})
    for (int64_t s : a->strides())
      if (s < 0) return declined("a negative stride");
  problem.x = tensor_of(x), problem.w = tensor_of(w), problem.y = tensor_of(y);
  problem.stride = p.stride, problem.dilation = p.dilation;
  problem.pad_before = p.pad_before, problem.pad_after = p.pad_after;
  problem.allow_tf32 = allow_tf32();
  problem.benchmark = benchmark();
  problem.device = x.device();
  problem.sm_version = device_properties(x.device()).arch();
  problem.alignment[0] = alignment_of(x), problem.alignment[1] = alignment_of(w), problem.alignment[2] = alignment_of(y);
  DeviceHandle& handle = device_handle(x.device());
  std::lock_guard<std::mutex> guard(handle.lock);
  activate(x.device());
  const int device = x.device();
  const cudnn::GpuTimer timer = [device](const std::function<void()>& run) { return gpu_ms_per_call(device, run); };
  try {
    const size_t bytes = cudnn::prepare(problem, handle.handle);
    const std::shared_ptr<Allocation> workspace = bytes ? allocate_device(x.device(), bytes) : nullptr;
    // While a graph captures, the handle works on its capture stream, and on the default stream again after: the
    // capture stream ends with its graph, and the handle must not keep pointing at it.
    struct OnWorkStream {
      void* handle;
      explicit OnWorkStream(void* h) : handle(h) { cudnn::set_stream(handle, work_stream(nullptr)); }
      ~OnWorkStream() {
        if (!capturing()) return;
        try {
          cudnn::set_stream(handle, nullptr);
        } catch (...) {  // the next call sets the stream again
        }
      }
    } on_work_stream(handle.handle);
    const ProfiledCall timed("conv2d (cuDNN)", device, work_stream(nullptr));
    const auto held_x = x.memory()->hold(), held_w = w.memory()->hold(), held_y = y.memory()->hold();
    cudnn::execute(problem, handle.handle, reinterpret_cast<void*>(x.data()), reinterpret_cast<void*>(w.data()),
                   reinterpret_cast<void*>(y.data()), workspace ? reinterpret_cast<void*>(workspace->ptr()) : nullptr,
                   timer);
  } catch (const cudnn::Unsupported& e) {
    return declined(e.what());
  } catch (const cudnn::Failure& e) {
    throw CudaError(0, "CUDNN_STATUS_EXECUTION_FAILED", e.what());
  } catch (const Error&) {  // jiasu's own (no memory for the workspace, a fault or Ctrl-C while timing): as it is
    throw;
  } catch (const std::runtime_error& e) {  // the frontend's own (a missing symbol, a failed dlopen)
    throw CudaError(0, "CUDNN_FRONTEND_ERROR", std::string("cuDNN: ") + e.what());
  }
  Counters& c = counters();
  std::lock_guard<std::mutex> count(c.mutex);
  ++c.passes;
  return true;
}

CudnnReport cudnn_report() {
  CudnnReport r;
  r.built = cudnn::built();
  r.frontend = cudnn::frontend_version();
  const Library& lib = library();
  r.loaded = lib.loaded;
  r.library = lib.path;
  r.version = lib.version;
  r.why_not = lib.why_not;
  Counters& c = counters();
  std::lock_guard<std::mutex> guard(c.mutex);
  r.passes = c.passes;
  r.fallbacks = c.fallbacks;
  r.last_fallback = c.last_fallback;
  return r;
}

void set_allow_tf32(bool allow) { tf32 = allow; }
bool allow_tf32() { return tf32; }

void set_benchmark(bool on) { benchmarking = on; }
bool benchmark() { return benchmarking; }

}  // namespace jiasu::dnn
