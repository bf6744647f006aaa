// What crosses the dlopen boundary between the core (cpu/host_kernel) and a host library that emit_host()
// wrote: defined once here, compiled into the core and embedded into every host library's source.
#pragma once

#include <setjmp.h>
#include <signal.h>

namespace jiasu {

// ---- The host entry point: extern "C" void <entry>(const jiasu::HostLaunch*, void* const* params) runs
// blocks [block_begin, block_end) of the grid (linear block b is x = b % grid[0], y = b / grid[0] % grid[1],
// z = b / (grid[0] * grid[1])), one block after another on the calling OS thread; params[i] points at
// argument i, packed as for CUDA (arrays as ArrayC/ArrayA, scalars as their C type). shared_bytes is the
// dynamic shared memory of each block (the extent of shape-0 shared arrays), as CUDA's launch gives it.
//
// The entry point always returns: a failure (a deadlock, no memory for fiber stacks, ...) is written to
// *error, which every range of one launch shares. The first failure of the launch wins (`failed` goes
// from 0 to 1 atomically and only that block writes `message`); blocks not yet started then are skipped.
// With error null, a failure is printed to stderr and aborts the process.
//
// fiber_stacks lends the fiber stacks of a range (mapping, guarding and first touching them per launch costs
// more than running a small block): fiber_stacks(count, &bytes) gives count slots of at least bytes each
// (bytes becomes their size), the first page of each a guard page, valid until the entry point returns;
// null when out of memory. A kernel that runs fibers fails without it.
//
// arm(&trap) makes a memory fault of this OS thread (SIGSEGV, SIGBUS, SIGFPE) jump to trap.jump, with
// trap.signal and trap.address set; arm(nullptr) ends that. A range runs armed, so a fault fails the launch
// (HostError::failed == host_fault) instead of ending the process.
// *stop turns nonzero when the user presses Ctrl-C: kernels check it at their loops' back-edges and at
// barriers, and stop (HostError::failed == host_interrupted).
//
// A cooperative launch (of a kernel that calls jiasu.cg.this_grid()) runs every block of the grid at once, each
// on an OS thread of its own (block_end == block_begin + 1), so that they can wait for each other:
// grid_sync(grid_barrier) returns once every block has called it (grid_opened), or the answer why not: another
// block failed (grid_failed: the launch reports that failure), Ctrl-C (grid_interrupted), or a positive count of
// blocks that ended without reaching it (a deadlock). Both null in other launches.
//
// access_log (null but in a launch that analyses memory accesses, k.analyze): the log this range (this block, in
// a cooperative launch) records each element access of global and shared arrays into; the library of such a
// launch is emitted for it (emit_host's trace_accesses). record() answers nonzero when the log is full, and the
// block then fails.
struct HostError {
  int failed;  // 0, or one of the HostFailure values
  char message[512];
  long long exception;  // host_raised: the handle of the exception class the kernel raised (RaiseSite::exception)
};
enum HostFailure : int { host_launch_failed = 1, host_index_error = 2, host_interrupted = 3, host_fault = 4,
                         host_raised = 5, host_zero_division = 6 };
enum : long long { grid_opened = 0, grid_failed = -1, grid_interrupted = -2 };
struct HostTrap {
  sigjmp_buf jump;
  int signal;     // 0 for an interrupt
  void* address;  // of a fault
};
// One element access of a thread: its address, the access site (EmittedKernel::access_sites), the thread's
// linear index in its block (x + y * blockDim.x + z * blockDim.x * blockDim.y) and the element's bytes.
struct HostAccess {
  unsigned long long address;
  int site;
  unsigned short thread;
  unsigned short bytes;
};
struct HostAccessLog {
  int (*record)(void* recorder, long long block, const HostAccess* access);  // block: its linear index
  void* recorder;
};
struct HostLaunch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
  HostError* error;
  void* (*fiber_stacks)(long long count, long long* bytes);
  void (*arm)(HostTrap* trap);
  const volatile sig_atomic_t* stop;
  void* grid_barrier;
  long long (*grid_sync)(void* grid_barrier);
  HostAccessLog* access_log;
};

// A fiber's stack holds this much for the kernel's calls and scalars, plus the kernel's local arrays.
constexpr long long host_fiber_stack_bytes = 64 * 1024;

}  // namespace jiasu
