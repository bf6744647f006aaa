#include "program/python_kernel.hpp"

#include <cstdint>
#include <cstdlib>

#include "program/signature.hpp"
#include "runtime/memory.hpp"
#include "support/cuda_limits.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// The file name NVRTC reports and the cache key carry: the Python file, so its messages point there.
std::string cuda_file_name(const fe::SourceText& source) { return source.file + ".cu"; }

std::vector<bool> params_where(const fe::Function& kernel, bool fe::Param::*flag) {
  std::vector<bool> out;
  for (const auto& p : kernel.params) out.push_back(p.*flag);
  return out;
}

bool any_prints(const fe::Program& program) {
  for (const auto& fn : program.functions)
    if (fn->prints) return true;
  return false;
}

}  // namespace

Specialization::Specialization(std::string key, fe::Program program, bool debug)
    : key_(std::move(key)),
      program_(std::move(program)),
      debug_(debug),
      emitted_(emit::emit_cuda(program_, debug)),
      written_(params_where(program_.kernel(), &fe::Param::written)),
      read_(params_where(program_.kernel(), &fe::Param::read)),
      prints_(any_prints(program_)),
      module_(emitted_.source, {}, cuda_file_name(program_.sources.back()->source)) {}

const emit::EmittedKernel& Specialization::host_emitted_locked() {
  if (!host_emitted_) host_emitted_ = emit::emit_host(program_, debug_);
  return *host_emitted_;
}

std::string Specialization::host_source() {
  std::lock_guard<std::mutex> lock(host_mutex_);
  return host_emitted_locked().source;
}

const HostKernel& Specialization::host_kernel() {
  std::lock_guard<std::mutex> lock(host_mutex_);
  if (!host_) host_ = compile_host_kernel(host_emitted_locked());
  return *host_;
}

const HostKernel& Specialization::traced_host_kernel(std::vector<emit::AccessSite>& sites) {
  std::lock_guard<std::mutex> lock(host_mutex_);
  if (!traced_host_) {
    emit::EmittedKernel traced = emit::emit_host(program_, debug_, true);
    traced_host_ = compile_host_kernel(traced);
    access_sites_ = std::move(traced.access_sites);
  }
  sites = access_sites_;
  return *traced_host_;
}

Kernel& Specialization::kernel(int device) {
  Kernel* last = last_kernel_.load(std::memory_order_acquire);
  if (last && last->device() == device) return *last;
  Kernel* found = module_.kernel(emitted_.entry_name, device).get();  // the module keeps it alive
  if (cooperative()) found->set_cooperative();
  if (emitted_.waits_for_prior_grid) found->set_waits_for_prior_grid();
  last_kernel_.store(found, std::memory_order_release);
  return *found;
}

int64_t Specialization::max_cooperative_blocks(int device, Dim3 block, size_t shared_bytes) {
  const bool small = block.x <= 1024 && block.y <= 1024 && block.z <= 1024;  // else the product could overflow
  const int64_t threads = small ? int64_t(block.x) * block.y * block.z : INT64_MAX;
  if (device != kCpuDevice) return kernel(device).max_cooperative_blocks(threads, shared_bytes);
  std::lock_guard<std::mutex> lock(host_mutex_);
  return host_cooperative_blocks(threads, host_emitted_locked().fiber_array_bytes);
}

std::string Specialization::origin() const {
  return program_.sources.back()->source.file + ":" + std::to_string(program_.kernel().loc.line);
}

KernelResources Specialization::resources(int device) {
  if (device != kCpuDevice) return kernel_resources(kernel(device));
  const fe::Function& k = program_.kernel();
  KernelResources r;
  r.device = kCpuDevice;
  r.shared_bytes = k.shared_array_bytes;
  r.local_bytes = k.local_array_bytes;
  r.max_threads_per_block = kThreadsPerBlock;
  return r;
}

bool debug_everywhere() {
  static const bool on = [] {
    const char* text = std::getenv("JIASU_DEBUG");
    if (!text || !*text || std::string(text) == "0") return false;
    if (std::string(text) == "1") return true;
    throw BadValue("JIASU_DEBUG must be 1 (every kernel in debug mode) or 0, not '" + std::string(text) + "'");
  }();
  return on;
}

PythonKernel::PythonKernel(std::shared_ptr<const fe::FunctionSource> source, bool debug)
    : source_(std::move(source)), debug_(debug || debug_everywhere()) {}

Specialization& PythonKernel::specialization(const std::string& key) {
  Specialization* last = last_.load(std::memory_order_acquire);
  if (last && last->key() == key) return *last;  // specialisations live as long as the kernel
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = specializations_.find(key);
    if (it != specializations_.end()) {
      last_.store(it->second.get(), std::memory_order_release);
      return *it->second;
    }
  }
  // The front end runs unlocked: it calls back into Python (the resolver), which may let another thread
  // run and launch this kernel. Two threads compiling one signature keep the first result.
  auto made = std::make_unique<Specialization>(key, fe::check(source_, signature_types(key)), debug_);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = specializations_.emplace(key, std::move(made)).first;
  last_.store(it->second.get(), std::memory_order_release);
  return *it->second;
}

std::vector<Specialization*> PythonKernel::specializations() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Specialization*> out;
  for (auto& [key, spec] : specializations_) out.push_back(spec.get());
  return out;
}

}  // namespace jiasu
