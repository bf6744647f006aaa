// How kernels report a `raise` and, in debug mode, a failed check (emit/runtime/debug_checks.h), on both targets.
// The CPU backend formats the message when a thread fails (cpu/runtime/host_blocks.h, debug_checks.h). On the GPU,
// a debug kernel's first failing thread fills the module's `jiasu_device_error`, and the launch reads it after the
// kernel ends and formats the same message (program/launch.cpp). Included by kernel_runtime.h and by the launch
// engine; NVRTC reads it too, so it includes nothing there.
#pragma once

// printf arguments: function, file, line, column, thread x, y, z, block x, y, z, then ": " and the message (or
// two empty strings). Numba's debug mode words it so.
#define JIASU_RAISE_FORMAT \
  "In function '%s', file %s, line %d, column %d, tid=[%lld, %lld, %lld] ctaid=[%lld, %lld, %lld]%s%s"

namespace jiasu {

// What failed (DeviceError::kind).
enum DeviceErrorKind : int {
  error_raise = 1,          // a `raise`: exception, function, message
  error_index = 2,          // an array index out of bounds: array, rank, axis, index, shape
  error_tuple_index = 3,    // a tuple index out of range: index[0], and shape[0] the tuple's length
  error_zero_division = 4,  // an integer // or % by zero
};

constexpr int kMaxErrorRank = 64;  // NumPy's limit on dimensions

struct DeviceError {
  // 0: none; 1: a thread is writing the record; 2: written (the launch may read it).
  int state;
  int kind;  // a DeviceErrorKind
  int line, column;
  long long exception;  // error_raise: RaiseSite::exception, the handle of the exception class
  long long thread[3], block[3];
  int rank, axis;
  long long index[kMaxErrorRank], shape[kMaxErrorRank];
  char function[128], array[128], file[512], message[512];
};

}  // namespace jiasu

#ifndef __CUDACC__
#include <stdarg.h>
#include <stdio.h>

namespace jiasu {

namespace detail {
inline void append(char* out, size_t size, size_t& used, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
inline void append(char* out, size_t size, size_t& used, const char* format, ...) {
  if (used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(out + used, size - used, format, args);
  va_end(args);
  if (n > 0) used = used + static_cast<size_t>(n) < size ? used + static_cast<size_t>(n) : size - 1;
}
}  // namespace detail

// The message of a failed check (not a raise: JIASU_RAISE_FORMAT), the one wording of both backends: an index
// out of bounds as NumPy words it, a tuple index and a division by zero as Python does, then where it is in the
// Python source and which thread of which block met it.
inline void format_check_failure(const DeviceError& e, char* out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  if (e.kind == error_index) {
    const int rank = e.rank < kMaxErrorRank ? e.rank : kMaxErrorRank;
    detail::append(out, size, used, "index %lld is out of bounds for axis %d with size %lld: %.128s[", e.index[e.axis],
                   e.axis, e.shape[e.axis], e.array);
    for (int k = 0; k < rank; ++k) detail::append(out, size, used, "%s%lld", k ? ", " : "", e.index[k]);
    detail::append(out, size, used, "] of shape (");
    for (int k = 0; k < rank; ++k) detail::append(out, size, used, "%s%lld", k ? ", " : "", e.shape[k]);
    detail::append(out, size, used, rank == 1 ? ",)" : ")");
  } else if (e.kind == error_tuple_index) {
    detail::append(out, size, used, "tuple index out of range: index %lld of a tuple of %lld items", e.index[0],
                   e.shape[0]);
  } else {
    detail::append(out, size, used, "integer division or modulo by zero");
  }
  detail::append(out, size, used, " at %.512s:%d:%d (thread (%lld, %lld, %lld) of block (%lld, %lld, %lld))", e.file,
                 e.line, e.column, e.thread[0], e.thread[1], e.thread[2], e.block[0], e.block[1], e.block[2]);
}

}  // namespace jiasu
#endif
