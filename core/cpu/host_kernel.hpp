// The CPU backend's kernels: a host library's entry point (see emit_host) run over a grid whose blocks
// are spread across a process-wide pool of OS threads.
//   front end (parse, check) → emit host C++ → compile_host (disk cache) → HostKernel → thread pool
#pragma once

#include <memory>
#include <string>

#include "emit/emit.hpp"
#include "frontend/check.hpp"
#include "runtime/module.hpp"
#include "toolchain/host_compiler.hpp"

namespace jiasu {

struct HostLaunch;  // the entry point's first argument (as the host runtime header declares it)

// How many OS threads the pool runs blocks on, the calling thread included: $JIASU_CPU_THREADS when
// set (a positive integer, else BadValue), else the CPUs the process may run on (usable_cpus()).
// Fixed when the pool is first used.
int host_thread_count();

// HostLaunch::fiber_stacks as launches lend them: `count` stacks of at least *bytes each (a page multiple, a
// guard page first), kept per OS thread from launch to launch; *bytes becomes their size. Null on failure.
void* lend_fiber_stacks(long long count, long long* bytes);

class HostKernel {
 public:
  // Looks entry_name up in library now (Error when it lacks it); the kernel keeps library loaded.
  HostKernel(std::shared_ptr<HostLibrary> library, const std::string& entry_name);

  // Runs every block of the grid and returns when all are done. The linear blocks are split into
  // contiguous ranges, one per participating thread (at most host_thread_count(), never more than
  // there are blocks), run on the pool's workers and the calling thread. Each OS thread runs one block
  // at a time, so shared arrays (per OS thread) are each block's own. params[i] points at parameter i,
  // packed as emit_host() describes; shared_bytes is each block's dynamic shared memory.
  // Throws LaunchError (CUDA_ERROR_INVALID_VALUE) for a block a CUDA GPU refuses (over 1024 threads, or
  // z over 64), and BadValue when a grid or block dimension is 0. Launches from several threads are
  // serialised on the pool (a launch the calling thread runs alone, e.g. of a single block, is not).
  // Throws LaunchError (CUDA_ERROR_LAUNCH_FAILED, "kernel NAME (CPU): deadlock in block ...", "... out of
  // memory ...") when the library reports a failure: the first of the launch; blocks not yet started
  // when it happened were skipped.
  void launch(Dim3 grid, Dim3 block, void* const* params, size_t shared_bytes) const;

  const std::string& entry_name() const { return entry_name_; }
  const std::shared_ptr<HostLibrary>& library() const { return library_; }

 private:
  using Entry = void (*)(const HostLaunch*, void* const*);
  std::shared_ptr<HostLibrary> library_;
  std::string entry_name_;
  Entry entry_;
};

// emit_host(program), compiled with compile_host() through the process-wide compile_cache();
// with -march=native when $JIASU_CPU_NATIVE is 1.
std::shared_ptr<HostKernel> compile_host_kernel(const fe::Program& program, bool debug = false);
std::shared_ptr<HostKernel> compile_host_kernel(const emit::EmittedKernel& emitted);  // already emitted

}  // namespace jiasu
