// The runtime that every host C++ translation unit jiasu emits for the CPU backend starts with (embedded at
// build time as emit::host_runtime_header()).
#pragma once

// Before any system header: a fault or Ctrl-C leaves a fiber's stack by siglongjmp for the OS thread's,
// which glibc's fortified longjmp would take for a jump into a dead frame.
#undef _FORTIFY_SOURCE

#include "emit/runtime/kernel_runtime.h"
#include "cpu/runtime/host_intrinsics.h"
#include "emit/runtime/half_math.h"
#include "cpu/runtime/host_abi.h"
#include "cpu/runtime/host_blocks.h"
#include "emit/runtime/debug_checks.h"
#include "cpu/runtime/host_trace.h"

#undef JIASU_FN
