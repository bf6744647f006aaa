// The runtime that every host C++ translation unit jiasu emits for the CPU backend starts with (embedded at
// build time as emit::host_runtime_header()).
#pragma once

#include "emit/runtime/kernel_runtime.h"
#include "cpu/runtime/host_intrinsics.h"
#include "emit/runtime/half_math.h"
#include "cpu/runtime/host_abi.h"
#include "cpu/runtime/host_blocks.h"

#undef JIASU_FN
