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
class AccessTrace;  // cpu/access_trace.hpp

// How many OS threads the pool runs blocks on, the calling thread included: $JIASU_CPU_THREADS when
// set (a positive integer, else BadValue), else the CPUs the process may run on (usable_cpus()).
// Fixed when the pool is first used.
int host_thread_count();

// HostLaunch::fiber_stacks as launches lend them: `count` stacks of at least *bytes each (a page multiple, a
// guard page first), kept per OS thread from launch to launch; *bytes becomes their size. Null on failure.
void* lend_fiber_stacks(long long count, long long* bytes);

// The most blocks of `threads` threads (per block) a cooperative launch on the CPU may have, each fiber's stack
// holding fiber_array_bytes of local arrays beyond host_fiber_stack_bytes. Every block of such a launch runs at
// once, on an OS thread of its own; as many blocks fit as on a GPU with one multiprocessor per CPU
// (host_thread_count() of them, kBlocksPerMultiprocessor blocks and kThreadsPerMultiprocessor threads each), at
// most kMaxCooperativeBlocks, with at most kCooperativeStackBytes of fiber stacks in all, and with fibers taking
// at most half of the memory maps the system allows a process (vm.max_map_count; a stack and its guard page are
// two). At least 1, but 0 for a block of more than 1024 threads, which no launch runs.
constexpr long long kMaxCooperativeBlocks = 1024;
constexpr long long kCooperativeStackBytes = 4LL << 30;  // address space: a stack's pages are touched as used
long long host_cooperative_blocks(long long threads, long long fiber_array_bytes);

// A cooperative launch of `entry` (a host library's entry point, see emit_host) over launch's grid: every block at
// once, each on an OS thread of its own (the calling thread runs block 0), sharing the grid barrier that
// HostLaunch::grid_sync gives them; returns when every block has ended. launch.error must be set; a thread the
// system refuses fails the launch there, and the blocks started stop at their next grid barrier. A launch with an
// access_log gives block b launch.access_log[b].
void run_cooperative(const HostLaunch& launch, void (*entry)(const HostLaunch*, void* const*), void* const* params);

class HostKernel {
 public:
  // Looks entry_name up in library now (Error when it lacks it); the kernel keeps library loaded.
  // cooperative: every launch is cooperative (see run_cooperative), its fibers' stacks each holding
  // fiber_array_bytes of local arrays.
  HostKernel(std::shared_ptr<HostLibrary> library, const std::string& entry_name, bool cooperative = false,
             long long fiber_array_bytes = 0);

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
  // when it happened were skipped. A cooperative kernel's launch runs every block at once (run_cooperative);
  // a grid of more than max_cooperative_blocks(block) blocks is a LaunchError
  // (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), as on a GPU.
  // trace: the launch records its accesses there, one log per range (the library must be a traced build).
  void launch(Dim3 grid, Dim3 block, void* const* params, size_t shared_bytes, AccessTrace* trace = nullptr) const;

  bool cooperative() const { return cooperative_; }
  long long max_cooperative_blocks(Dim3 block) const {
    return host_cooperative_blocks(1LL * block.x * block.y * block.z, fiber_array_bytes_);
  }
  const std::string& entry_name() const { return entry_name_; }
  const std::shared_ptr<HostLibrary>& library() const { return library_; }

 private:
  using Entry = void (*)(const HostLaunch*, void* const*);
  std::shared_ptr<HostLibrary> library_;
  std::string entry_name_;
  Entry entry_;
  bool cooperative_;
  long long fiber_array_bytes_;
};

// emit_host(program), compiled with compile_host() through the process-wide compile_cache();
// with -march=native when $JIASU_CPU_NATIVE is 1.
std::shared_ptr<HostKernel> compile_host_kernel(const fe::Program& program, bool debug = false);
std::shared_ptr<HostKernel> compile_host_kernel(const emit::EmittedKernel& emitted);  // already emitted

}  // namespace jiasu
