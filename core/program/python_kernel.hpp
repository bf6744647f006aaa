// A kernel written in Python: its source, and one compiled specialisation per argument signature.
//   front end (parse, check) → emit CUDA C++ → SourceModule (NVRTC, disk cache) → Kernel per device
//                            → emit host C++ → compile_host (C++ compiler, disk cache) → HostKernel
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "emit/emit.hpp"
#include "frontend/check.hpp"
#include "program/source_module.hpp"
#include "runtime/occupancy.hpp"

namespace jiasu {

class Specialization {
 public:
  // debug: both builds check array and tuple indices and integer divisors and report a raise (see emit_cuda).
  Specialization(std::string key, fe::Program program, bool debug);

  const std::string& key() const { return key_; }
  const std::string& name() const { return program_.kernel().name; }  // the Python function's
  const fe::Function& function() const { return program_.kernel(); }  // the typed kernel: its name and parameters
  std::string origin() const;  // "file:line" of the kernel's def
  const std::string& cuda_source() const { return emitted_.source; }
  // Per parameter: true when the kernel may store into it (NumPy arguments are copied back only then).
  const std::vector<bool>& written() const { return written_; }
  const std::vector<bool>& read() const { return read_; }  // per parameter: true when the kernel may load from it
  // Whether the CUDA build records a raise or failed check in `jiasu_device_error` for the launch to report.
  bool device_errors() const { return emitted_.device_errors; }
  // Whether the kernel or a device function it calls prints: its CPU launches flush C's stdout at the end.
  bool prints() const { return prints_; }
  // Whether the kernel calls jiasu.cg.this_grid(): its launches are cooperative (every block resident at once).
  bool cooperative() const { return program_.kernel().cooperative; }
  // Compiled and loaded for `device` on first use (set to launch cooperatively when the kernel is).
  Kernel& kernel(int device);
  // The largest grid of blocks of `block` threads a cooperative launch on `device` (kCpuDevice: the CPU backend)
  // may have: what the occupancy API says is resident at once on a GPU, host_cooperative_blocks on the CPU; 0 for
  // blocks of more threads than the kernel can run.
  int64_t max_cooperative_blocks(int device, Dim3 block, size_t shared_bytes);
  // What the kernel uses on `device`: the driver's account on a GPU (compiling and loading it there first), what
  // the source declares on the CPU device.
  KernelResources resources(int device);
  SourceModule& module() { return module_; }
  // The CPU backend's build, compiled on first use (a C++ compiler runs then, or its disk cache answers).
  const HostKernel& host_kernel();
  std::string host_source();  // the host C++ it compiles
  // The CPU backend's build that records memory accesses (k.analyze; emit_host's trace_accesses), compiled on
  // first use; sites: its access sites.
  const HostKernel& traced_host_kernel(std::vector<emit::AccessSite>& sites);

 private:
  std::string key_;
  fe::Program program_;
  bool debug_;
  std::mutex host_mutex_;  // guards the two below
  std::optional<emit::EmittedKernel> host_emitted_;
  std::shared_ptr<HostKernel> host_;
  std::shared_ptr<HostKernel> traced_host_;
  std::vector<emit::AccessSite> access_sites_;  // traced_host_'s
  const emit::EmittedKernel& host_emitted_locked();
  emit::EmittedKernel emitted_;
  std::vector<bool> written_, read_;
  bool prints_;
  SourceModule module_;
  std::atomic<Kernel*> last_kernel_{nullptr};  // the launch path's cache; module_ owns the kernels
};

// JIASU_DEBUG=1 in the environment (read once): every kernel is a debug kernel. Throws BadValue for a value other
// than 1, 0 or empty.
bool debug_everywhere();

class PythonKernel {
 public:
  // debug: its builds check what debug mode checks (emit_cuda); JIASU_DEBUG=1 in the environment makes every
  // kernel a debug kernel (debug_everywhere).
  explicit PythonKernel(std::shared_ptr<const fe::FunctionSource> source, bool debug = false);

  // The specialisation for signature `key` (see signature.hpp), running the front end on first use.
  // Throws fe::CompileError for a kernel that cannot be compiled for these argument types, BadArgument
  // for arguments it cannot take (see fe::check).
  Specialization& specialization(const std::string& key);
  std::vector<Specialization*> specializations();
  // The specialisation launched (or made) last; null before the first.
  Specialization* last() const { return last_.load(std::memory_order_acquire); }

 private:
  std::shared_ptr<const fe::FunctionSource> source_;
  bool debug_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Specialization>> specializations_;
  std::atomic<Specialization*> last_{nullptr};  // the launch path checks this one first, without locking
};

}  // namespace jiasu
