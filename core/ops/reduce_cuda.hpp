// The generated CUDA sources of the GPU reductions (ops/reduce_cuda.cpp), exposed so that tests can compile
// them with NVRTC on machines without a GPU.
#pragma once

#include <string>

#include "ops/reduce.hpp"

namespace jiasu::ops {

enum class KernelKind { Rows, Runs, Columns, Strided, Cumsum };  // the kernels of ops/runtime/reduce_cuda.h

// What one generated kernel is specialised for.
struct ReduceKernelKey {
  ReduceOp op;  // mean, var and std run Sum's kernels
  DType in;
  AccType acc;
  DType out;
  KernelKind kind;
  int finish = 0;  // reduce::Finish (not for cumsum)
  int elem = 0;    // reduce::Elem (not for cumsum)
  int vector = 1;  // Columns: neighbouring results per thread, read in one load (1, 2, 4, 8 or 16)
};

std::string reduce_kernel_name(const ReduceKernelKey& key);
// The full CUDA C++ source: the embedded kernels and an extern "C" entry jiasu_reduce(KernelParams).
std::string reduce_cuda_source(const ReduceKernelKey& key);

}  // namespace jiasu::ops
