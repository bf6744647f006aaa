// What crosses the dlopen boundary between the core (cpu/host_kernel) and a host library that emit_host()
// wrote: defined once here, compiled into the core and embedded into every host library's source.
#pragma once

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
struct HostError {
  int failed;
  char message[512];
};
struct HostLaunch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
  HostError* error;
  void* (*fiber_stacks)(long long count, long long* bytes);
};

}  // namespace jiasu
