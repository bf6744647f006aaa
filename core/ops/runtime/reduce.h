// What each reduction computes, once for both backends: the accumulator operations that the CPU loops
// (ops/reduce_cpu.cpp) and the generated CUDA kernels (ops/runtime/reduce_cuda.h, through NVRTC) combine
// elements with. Accumulators are wide types only (long long, unsigned long long, float, double, bool):
// narrower inputs, half types included, are widened when loaded, so nothing here needs <cuda_fp16.h>.
//
// NumPy's rules kept here:
//   max, min        NaN propagates (the first NaN met wins); ties keep either (they are equal).
//   argmax, argmin  the first occurrence of the extreme, and the first NaN if there is one.
//   any, all        an element counts as true when it is not zero (NaN is true).
//   var             two passes: the mean, then the sum of squared deviations from it.
// Combining is associative, so partial results of any split of the elements may be combined in any
// grouping; argmax/argmin pairs break ties by the smaller index, which makes them order-free as well.
#pragma once

#ifdef __CUDACC__
#define JIASU_REDUCE_FN __device__ __forceinline__
#define JIASU_REDUCE_INF_F __int_as_float(0x7f800000)
#define JIASU_REDUCE_INF __longlong_as_double(0x7ff0000000000000LL)
#else
#define JIASU_REDUCE_FN inline
#define JIASU_REDUCE_INF_F __builtin_huge_valf()
#define JIASU_REDUCE_INF __builtin_huge_val()
#endif

namespace jiasu {
namespace reduce {

template <typename T> JIASU_REDUCE_FN bool is_nan(T x) { return x != x; }  // false for every integer

// The extreme values of the accumulator types (NVRTC has no <limits>).
template <typename A> struct bounds;
template <> struct bounds<long long> {
  static JIASU_REDUCE_FN long long lowest() { return -9223372036854775807LL - 1; }
  static JIASU_REDUCE_FN long long highest() { return 9223372036854775807LL; }
};
template <> struct bounds<unsigned long long> {
  static JIASU_REDUCE_FN unsigned long long lowest() { return 0; }
  static JIASU_REDUCE_FN unsigned long long highest() { return ~0ULL; }
};
template <> struct bounds<float> {
  static JIASU_REDUCE_FN float lowest() { return -JIASU_REDUCE_INF_F; }
  static JIASU_REDUCE_FN float highest() { return JIASU_REDUCE_INF_F; }
};
template <> struct bounds<double> {
  static JIASU_REDUCE_FN double lowest() { return -JIASU_REDUCE_INF; }
  static JIASU_REDUCE_FN double highest() { return JIASU_REDUCE_INF; }
};
template <> struct bounds<bool> {
  static JIASU_REDUCE_FN bool lowest() { return false; }
  static JIASU_REDUCE_FN bool highest() { return true; }
};

struct Sum {
  template <typename A> static JIASU_REDUCE_FN A identity() { return A(0); }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return a + b; }
};

struct Prod {
  template <typename A> static JIASU_REDUCE_FN A identity() { return A(1); }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return a * b; }
};

struct Max {
  template <typename A> static JIASU_REDUCE_FN A identity() { return bounds<A>::lowest(); }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return (is_nan(a) || a >= b) ? a : b; }
};

struct Min {
  template <typename A> static JIASU_REDUCE_FN A identity() { return bounds<A>::highest(); }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return (is_nan(a) || a <= b) ? a : b; }
};

// Elements are loaded as bool (x != 0) for these two.
struct Any {
  template <typename A> static JIASU_REDUCE_FN A identity() { return false; }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return a || b; }
};

struct All {
  template <typename A> static JIASU_REDUCE_FN A identity() { return true; }
  template <typename A> static JIASU_REDUCE_FN A combine(A a, A b) { return a && b; }
};

// An element and its index (C order over the reduced dimensions), for argmax and argmin.
template <typename A> struct Indexed {
  A value;
  long long index;
};

// index = highest() marks the identity: any real element wins against it.
template <bool kMax> struct ArgExtreme {
  template <typename A> static JIASU_REDUCE_FN Indexed<A> identity() {
    return Indexed<A>{kMax ? bounds<A>::lowest() : bounds<A>::highest(), bounds<long long>::highest()};
  }
  template <typename A> static JIASU_REDUCE_FN Indexed<A> combine(Indexed<A> a, Indexed<A> b) {
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan || b_nan) return (a_nan && (!b_nan || a.index <= b.index)) ? a : b;
    const bool b_better = kMax ? b.value > a.value : b.value < a.value;
    return (b_better || (b.value == a.value && b.index < a.index)) ? b : a;
  }
};
using ArgMax = ArgExtreme<true>;
using ArgMin = ArgExtreme<false>;

// The second pass of var/std: what one element adds, given the mean of its output.
template <typename A> JIASU_REDUCE_FN A squared_deviation(A x, A mean) {
  const A d = x - mean;
  return d * d;
}

// var's divisor: n - ddof, or 0 when that is negative (NumPy's; the result is then inf or nan).
JIASU_REDUCE_FN double var_divisor(long long n, long long ddof) { return n > ddof ? double(n - ddof) : 0.0; }

// ---- The parameters of a generated CUDA reduction kernel (ops/runtime/reduce_cuda.h), packed by the core
// (ops/reduce_cuda.cpp) from this one definition. Addresses are integers: the same bytes on both sides.
constexpr int kMaxWalkDims = 16;

// How a kernel turns its accumulated value into a result, and what it accumulates per element.
enum Finish { kValue = 0, kIndex = 1, kDivide = 2, kSqrtDivide = 3 };
enum Elem { kPlain = 0, kSquaredDeviation = 1 };  // collapsed dimensions per group

// A group of collapsed dimensions, outermost first, with byte strides in the input and the result.
struct Walk {
  long long size[kMaxWalkDims];
  long long stride[kMaxWalkDims];
  long long out_stride[kMaxWalkDims];
  int ndim;
};

struct KernelParams {
  unsigned long long in, out;  // element [0...] of each
  Walk kept, reduced;
  long long results;           // kept positions
  long long count;             // elements per result
  long long blocks_per_result; // Rows: blocks that share one result's runs; Columns: blocks that share a tile's
                               // rows
  long long slices;            // Rows: blocks that share one run (taking its tiles in turn); a block takes every
                               // (blocks_per_result / slices)-th run
  long long runs, run_length;  // Rows: each result's runs (the innermost reduced dimension, contiguous) and their
                               // length
  long long chunk;             // Columns: reduced rows per block
  unsigned long long partials; // Rows with blocks_per_result > 1: one partial per block
  unsigned long long counters; // ... and one zeroed counter per result (left zeroed)
  unsigned long long means;    // var/std's second pass: the mean of each result, as the accumulator type
  double divisor;              // mean, var, std: the result is the accumulated value over this
};

}  // namespace reduce
}  // namespace jiasu
