// The runtime that every CUDA C++ translation unit jiasu emits starts with (embedded at build time as
// emit::cuda_runtime_header()).
#pragma once

#include "emit/runtime/kernel_runtime.h"
#include "emit/runtime/cuda_intrinsics.h"
#include "emit/runtime/half_math.h"
#include "emit/runtime/debug_checks.h"

#undef JIASU_FN
