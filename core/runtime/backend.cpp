#include "runtime/backend.hpp"

#include <atomic>
#include <cstdlib>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

constexpr int kUnset = -1;
constexpr const char* kCudaBackendNeedsGpu =
    "the CUDA backend needs a GPU, and none is visible (the CPU backend works without one)";
std::atomic<int> chosen{kUnset};

Backend initial_backend() {
  if (const char* name = std::getenv("JIASU_BACKEND"); name && *name) {
    Backend b = backend_from_name(name);
    if (b == Backend::Cuda) require_gpu(kCudaBackendNeedsGpu);
    return b;
  }
  return device_count() > 0 ? Backend::Cuda : Backend::Cpu;
}

}  // namespace

Backend active_backend() {
  int value = chosen.load(std::memory_order_relaxed);
  if (value == kUnset) {
    int expected = kUnset;
    chosen.compare_exchange_strong(expected, static_cast<int>(initial_backend()));
    value = chosen.load(std::memory_order_relaxed);
  }
  return static_cast<Backend>(value);
}

void set_active_backend(Backend backend) {
  if (backend == Backend::Cuda) require_gpu(kCudaBackendNeedsGpu);
  chosen.store(static_cast<int>(backend), std::memory_order_relaxed);
}

const char* backend_name(Backend backend) { return backend == Backend::Cpu ? "cpu" : "cuda"; }

Backend backend_from_name(const std::string& name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda" || name == "gpu") return Backend::Cuda;
  throw BadValue("unknown backend '" + name + "': use 'cpu' or 'cuda'");
}

int default_device() { return active_backend() == Backend::Cpu ? kCpuDevice : current_device(); }

}  // namespace jiasu
