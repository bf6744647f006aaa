// The grid-wide barrier of CUDA kernels whose blocks are all resident at once (a cooperative launch), for
// jiasu.cg's g.sync() (cuda_intrinsics.h) and jiasu.nn's fused batch-norm (dnn/runtime/batch_norm_cuda.h).
// NVRTC only.
#pragma once

namespace jiasu {

// Waits until the `expected` blocks of lowest linear index (block (0, 0, 0) among them) have arrived at the
// counter `arrivals`. A barrier adds 2^31 to the counter in all: block (0, 0, 0) adds 2^31 - (expected - 1), each
// other block 1, so the top bit flips when the last block arrives and the low bits come back to where they were;
// the same counter serves barrier after barrier and launch after launch without being reset (it starts at 0).
// What the blocks wrote before the barrier is visible to every thread after it: thread (0, 0, 0) of each block
// publishes its block's writes with a fence before arriving, and fences again once it sees the flip; the block
// barriers around that pass it on to the block's other threads.
__device__ __forceinline__ void grid_barrier(unsigned* arrivals, unsigned expected) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    __threadfence();
    const unsigned before = atomicAdd(arrivals, first ? 0x80000000u - (expected - 1) : 1u);
    while (((before ^ *static_cast<volatile unsigned*>(arrivals)) & 0x80000000u) == 0) {
    }
    __threadfence();
  }
  __syncthreads();
}

}  // namespace jiasu
