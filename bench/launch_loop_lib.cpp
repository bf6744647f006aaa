// launch_loop_lib: the C++ anchor of bench/launch.py, run inside the benchmark's own process.
//
// The same plain cuLaunchKernel loop as launch_loop.cpp, but called through ctypes with the CUfunction and
// device pointers that jiasu already holds, on the calling thread's current context (the primary context
// that jiasu made current). So the anchor and the Python contenders share one process, context, module and
// arrays, and their repetitions interleave.
//
// Build:  nvcc -O2 -shared -Xcompiler -fPIC -o launch_loop_lib.so bench/launch_loop_lib.cpp -lcuda
#include <cuda.h>

#include <chrono>

// One repetition: synchronize; t0; `launches` launches of f<<<blocks, threads>>>(x, y, out, n) on the legacy
// stream; synchronize; t1. Returns microseconds per launch, or -(CUresult) when a CUDA call fails.
extern "C" double launch_loop_rep(void* function, unsigned blocks, unsigned threads, unsigned long long x,
                                  unsigned long long y, unsigned long long out, int n, long launches) {
  CUdeviceptr px = x, py = y, pout = out;
  void* params[] = {&px, &py, &pout, &n};
  auto f = static_cast<CUfunction>(function);
  CUresult status = cuCtxSynchronize();
  if (status != CUDA_SUCCESS) return -static_cast<double>(status);
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) {
    status = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
    if (status != CUDA_SUCCESS) return -static_cast<double>(status);
  }
  status = cuCtxSynchronize();
  if (status != CUDA_SUCCESS) return -static_cast<double>(status);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(launches);
}
