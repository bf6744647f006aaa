// Debug mode's checks (@jiasu.kernel(debug=True), or JIASU_DEBUG=1), on both targets. The emitter routes every
// array element access through at_checked, a tuple indexed at run time through tuple_item_checked and the divisor
// of an integer // or % through divisor_checked. The launch's first failure becomes a DeviceError
// (device_error.h), which the launch raises as IndexError or ZeroDivisionError with the same message on both
// backends. On the GPU the failing thread then ends, as a `raise` ends it; on the CPU it goes on with a scratch
// element (or the divisor 0, whose quotient and remainder are 0) while the launch winds down.
// Included by cuda_runtime.h after cuda_intrinsics.h and by host_runtime.h after host_blocks.h.
#pragma once

#include "emit/runtime/kernel_runtime.h"

namespace jiasu {

// Where a check sits in the Python source. array: the array indexed ("tuple" for a tuple, "" for a division).
struct CheckSite {
  const char* array;
  const char* file;
  int line, column;
};

JIASU_FN void copy_text(char* to, const char* from, int size) {
  int i = 0;
  for (; i + 1 < size && from[i]; ++i) to[i] = from[i];
  to[i] = 0;
}

// Whether each index is within its axis of `a` (NumPy's negative indices count from the end). Recursive rather than
// a loop over an array of the indices, which the GPU compiler would keep in local memory.
template <int D, typename A>
JIASU_FN bool in_bounds(const A&) {
  return true;
}
template <int D, typename A, typename I, typename... Rest>
JIASU_FN bool in_bounds(const A& a, I index, Rest... rest) {
  const long long i = static_cast<long long>(index);
  return i >= -a.shape[D] && i < a.shape[D] && in_bounds<D + 1>(a, rest...);
}

// The first axis whose index is out of bounds, of n.
JIASU_FN int axis_out_of_bounds(const long long* index, const long long* shape, int n) {
  for (int d = 0; d < n; ++d)
    if (index[d] < -shape[d] || index[d] >= shape[d]) return d;
  return 0;
}

// Fills what the failure is and where in the source; the caller adds the thread and block.
JIASU_FN void describe_failure(DeviceError& e, int kind, CheckSite site, const long long* index,
                               const long long* shape, int rank, int axis) {
  e.kind = kind;
  e.line = site.line;
  e.column = site.column;
  copy_text(e.array, site.array, sizeof e.array);
  copy_text(e.file, site.file, sizeof e.file);
  e.rank = rank < kMaxErrorRank ? rank : kMaxErrorRank;
  e.axis = axis;
  for (int k = 0; k < e.rank; ++k) e.index[k] = index[k], e.shape[k] = shape[k];
}

}  // namespace jiasu

#ifdef __CUDACC__
// ---- GPU: the record. A kernel's raise ends the thread. Outside debug mode nothing is reported, as in Numba's CUDA
// target; a debug kernel (the emitter defines JIASU_DEVICE_ERRORS) records the first raise or failed check for the
// launch to report.
#ifdef JIASU_DEVICE_ERRORS
extern "C" {
__device__ jiasu::DeviceError jiasu_device_error;
}
namespace jiasu {

// The record when this thread's failure is the launch's first (later ones are dropped), its thread and block set;
// publish_record() once the rest is written.
JIASU_FN DeviceError* claim_record() {
  DeviceError& e = jiasu_device_error;
  if (atomicCAS(&e.state, 0, 1) != 0) return nullptr;
  e.thread[0] = threadIdx.x, e.thread[1] = threadIdx.y, e.thread[2] = threadIdx.z;
  e.block[0] = blockIdx.x, e.block[1] = blockIdx.y, e.block[2] = blockIdx.z;
  return &e;
}
JIASU_FN void publish_record(DeviceError& e) {
  __threadfence();
  atomicExch(&e.state, 2);
}

JIASU_FN void raise_exception(const RaiseSite& site) {
  if (DeviceError* e = claim_record()) {
    e->kind = error_raise;
    e->line = site.line;
    e->column = site.column;
    e->exception = site.exception;
    copy_text(e->function, site.function, sizeof e->function);
    copy_text(e->file, site.file, sizeof e->file);
    copy_text(e->message, site.message, sizeof e->message);
    publish_record(*e);
  }
  asm volatile("exit;");
}

// A failed check: recorded, and the thread ends. Out of line, so that the checks inline as a compare and a branch.
__device__ __noinline__ void fail_check(int kind, CheckSite site, const long long* index, const long long* shape,
                                        int rank, int axis) {
  if (DeviceError* e = claim_record()) {
    describe_failure(*e, kind, site, index, shape, rank, axis);
    publish_record(*e);
  }
  asm volatile("exit;");
}

template <typename A, typename... I>
JIASU_FN auto& at_checked(CheckSite site, const A& a, I... indices) {
  constexpr int n = sizeof...(I);
  if constexpr (n > 0) {
    if (!in_bounds<0>(a, indices...)) {
      const long long index[n] = {static_cast<long long>(indices)...};
      long long shape[n];
      for (int d = 0; d < n; ++d) shape[d] = a.shape[d];
      fail_check(error_index, site, index, shape, n, axis_out_of_bounds(index, shape, n));
    }
  }
  return at(a, indices...);
}

template <typename T, int N>
JIASU_FN T tuple_item_checked(CheckSite site, const T (&items)[N], long long index) {
  if (index < -N || index >= N) {
    long long where[1] = {index}, length[1] = {N};
    fail_check(error_tuple_index, site, where, length, 1, 0);
  }
  return tuple_item(items, index);
}

template <typename T>
JIASU_FN T divisor_checked(CheckSite site, T divisor) {
  if (divisor == 0) fail_check(error_zero_division, site, nullptr, nullptr, 0, 0);
  return divisor;
}

}  // namespace jiasu
#else
namespace jiasu {
JIASU_FN void raise_exception(const RaiseSite&) { asm volatile("exit;"); }
}  // namespace jiasu
#endif

#else
// ---- CPU: the launch's HostError. A raise is reported by raise_exception (host_blocks.h).
namespace jiasu {

// Reports a failed check (the launch's first failure wins); the thread goes on.
inline void report_check_failure(const HostThread& thread, int kind, CheckSite site, const long long* index,
                                 const long long* shape, int rank, int axis) {
  static thread_local DeviceError e;  // large: kept off the fiber's stack
  e = DeviceError{};
  describe_failure(e, kind, site, index, shape, rank, axis);
  e.thread[0] = thread.threadIdx.x, e.thread[1] = thread.threadIdx.y, e.thread[2] = thread.threadIdx.z;
  e.block[0] = thread.blockIdx.x, e.block[1] = thread.blockIdx.y, e.block[2] = thread.blockIdx.z;
  char message[sizeof(HostError::message)];
  format_check_failure(e, message, sizeof message);
  detail::fail_as(*detail::current_block, kind == error_zero_division ? host_zero_division : host_index_error, "%s",
                  message);
}

template <typename A, typename... I>
inline auto& at_checked(const HostThread& thread, CheckSite site, const A& a, I... indices) {
  constexpr int n = sizeof...(I);
  if constexpr (n > 0) {
    if (!in_bounds<0>(a, indices...)) {
      const long long index[n] = {static_cast<long long>(indices)...};
      report_check_failure(thread, error_index, site, index, a.shape, n, axis_out_of_bounds(index, a.shape, n));
      // What the thread reads and writes instead, touching no memory of the arrays.
      static thread_local std::remove_reference_t<decltype(at(a, indices...))> scratch;
      scratch = {};
      return scratch;
    }
  }
  return at(a, indices...);
}

template <typename T, int N>
inline T tuple_item_checked(const HostThread& thread, CheckSite site, const T (&items)[N], long long index) {
  if (index < -N || index >= N) {
    const long long where[1] = {index}, length[1] = {N};
    report_check_failure(thread, error_tuple_index, site, where, length, 1, 0);
  }
  return tuple_item(items, index);
}

template <typename T>
inline T divisor_checked(const HostThread& thread, CheckSite site, T divisor) {
  if (divisor == 0) report_check_failure(thread, error_zero_division, site, nullptr, nullptr, 0, 0);
  return divisor;
}

}  // namespace jiasu
#endif
