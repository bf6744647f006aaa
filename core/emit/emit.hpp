// Emitters: a typed Program becomes target source text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/check.hpp"

namespace jiasu::emit {

// An element access in the Python source that a build tracing memory accesses records (emit_host's
// trace_accesses): where it is, and what it does to global or shared memory.
enum class AccessKind : uint8_t { Load, Store, LoadStore, Atomic };  // LoadStore: a[i] += v
struct AccessSite {
  std::string file;
  int line = 0, column = 0;
  std::string source;  // the Python line, without its indentation
  std::string array;   // the array's name ("array" for an expression)
  bool shared = false; // a shared array (jiasu.shared.array), else global memory
  AccessKind kind = AccessKind::Load;
};
const char* access_kind_name(AccessKind kind);  // "load", "store", "load+store", "atomic"

struct EmittedKernel {
  std::string source;       // a complete translation unit, runtime header included
  std::string entry_name;   // the extern "C" name of the kernel entry point
  // CUDA: the module defines `jiasu_device_error` (emit/runtime/device_error.h), which the launch reads after
  // the kernel ends; set for a debug kernel.
  bool device_errors = false;
  bool cooperative = false;        // launched cooperatively (fe::Function::cooperative)
  bool waits_for_prior_grid = false;  // CUDA: the kernel starts with jiasu::wait_for_prior_grid()
  int64_t fiber_array_bytes = 0;   // host: the local arrays a fiber's stack holds beyond host_fiber_stack_bytes
  std::vector<AccessSite> access_sites;  // host, trace_accesses: HostAccess::site indexes it
};

// CUDA C++ for NVRTC. Each statement carries a `// file.py:LINE  <python source>` comment.
// Kernel parameters, in order: each array as jiasu::ArrayC<T, N> (data pointer, then shape[N]) when
// contiguous, else jiasu::ArrayA<T, N> (data, shape[N], strides[N] in bytes); each scalar as its C type.
// debug: the checks of emit/runtime/debug_checks.h (array and tuple indices, integer divisors) and `raise` are
// recorded on the device for the launch to report (EmittedKernel::device_errors); else a raising thread ends
// silently, as in Numba's CUDA target, and nothing is checked.
EmittedKernel emit_cuda(const fe::Program& program, bool debug = false);

// Host C++17 for the CPU backend (g++/clang++ -std=c++17), the runtime header included. The entry point:
//   extern "C" void <entry_name>(const jiasu::HostLaunch* launch, void* const* params);
// runs every thread of blocks [launch->block_begin, launch->block_end) of the grid (linear block b is
// x = b % grid[0], y = b / grid[0] % grid[1], z = b / (grid[0] * grid[1])); params[i] points at parameter
// i packed as for emit_cuda(); launch->shared_bytes sizes dynamic shared memory. A kernel without barriers
// or warp operations runs its threads one after another; any other runs them as fibers that switch at each
// barrier, and whose warps (32 consecutive linear threads) meet at each warp operation (shuffles, votes,
// syncwarp; masks are taken as the whole warp). A `return` ends its thread only.
// debug: the checks of emit/runtime/debug_checks.h; the first failure is reported (HostLaunch::error).
// trace_accesses: debug's checks, and every element access of a global or shared array (not local or constant
// arrays) is recorded in the launch's HostLaunch::access_log, as an access of its site in access_sites (one site
// per place in the Python source and kind of access).
EmittedKernel emit_host(const fe::Program& program, bool debug = false, bool trace_accesses = false);

// A scalar function (fe::check_scalar_function) with the device functions it calls, as definitions for a
// translation unit whose runtime header is already in place. On CUDA, `name(args...)` is a __device__ function;
// on the host, `name(thread, args...)` takes a `const jiasu::HostThread&` first.
struct EmittedFunction {
  std::string definitions;
  std::string name;
  DType result;
};
EmittedFunction emit_cuda_function(const fe::Program& program);
EmittedFunction emit_host_function(const fe::Program& program);

// The runtime header each target's translation units start with: array views, Python semantics for //, %,
// **, casts, the math and intrinsic functions named in builtins.def (emit/runtime/kernel_runtime.h, shared),
// then the target's part: CUDA's (emit/runtime/cuda_runtime.h) or the CPU backend's, with its block
// scheduler (cpu/runtime/host_runtime.h). Embedded at build time.
const std::string& cuda_runtime_header();
const std::string& host_runtime_header();

}  // namespace jiasu::emit
