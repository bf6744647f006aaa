// How kernels report a `raise`, on both targets. The CPU backend formats JIASU_RAISE_FORMAT when a thread raises
// (cpu/runtime/host_blocks.h). On the GPU, a debug kernel's first raising thread fills the module's
// `jiasu_device_error` (emit/runtime/cuda_intrinsics.h), and the launch reads it after the kernel ends and
// formats the same message (program/launch.cpp). Included by kernel_runtime.h and by the launch engine; no
// includes: NVRTC reads it too.
#pragma once

// printf arguments: function, file, line, column, thread x, y, z, block x, y, z, then ": " and the message (or
// two empty strings). Numba's debug mode words it so.
#define JIASU_RAISE_FORMAT \
  "In function '%s', file %s, line %d, column %d, tid=[%lld, %lld, %lld] ctaid=[%lld, %lld, %lld]%s%s"

namespace jiasu {

struct DeviceError {
  // 0: none; 1: a thread is writing the record; 2: written (the launch may read it).
  int state;
  int line, column;
  long long exception;  // RaiseSite::exception: the handle of the exception class
  long long thread[3], block[3];
  char function[128], file[512], message[512];
};

}  // namespace jiasu
