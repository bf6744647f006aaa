// Limits that every CUDA GPU sets, which the front end's checks and the generated array kernels keep (the CPU
// backend keeps them too, so that a kernel that runs on one runs on the other).
#pragma once

#include <cstdint>

namespace jiasu {

constexpr int kThreadsPerBlock = 1024;
constexpr int64_t kStaticSharedBytesPerBlock = 48 * 1024;  // without opting in to more, per kernel
constexpr int64_t kLocalBytesPerThread = 512 * 1024;
constexpr int kPrintfArguments = 32;  // device printf's values after the format (so at most 32 items per print())
// The blocks and threads a multiprocessor holds at once (Hopper's): the CPU backend's cooperative launches count
// each CPU as one multiprocessor (cpu/host_kernel).
constexpr int64_t kBlocksPerMultiprocessor = 32;
constexpr int64_t kThreadsPerMultiprocessor = 2048;

}  // namespace jiasu
