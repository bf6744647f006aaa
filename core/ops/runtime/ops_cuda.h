// The runtime every generated array-operation kernel starts with under NVRTC (embedded at build time as
// ops::ops_cuda_header()): the kernel runtime's CUDA part, the elementwise functors and their kernels' helpers.
#pragma once

#include "emit/runtime/kernel_runtime.h"
#include "emit/runtime/cuda_intrinsics.h"
#include "emit/runtime/half_math.h"
#include "ops/runtime/ufuncs.h"
#include "ops/runtime/elementwise_cuda.h"

#undef JIASU_FN
