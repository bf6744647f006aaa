// The kernel runtime's CUDA part (NVRTC only): half types, thread queries, atomics, warp and bit intrinsics on
// CUDA's own functions. cpu/runtime/host_intrinsics.h is its host counterpart.
#pragma once

#include "emit/runtime/kernel_runtime.h"
#include "emit/runtime/grid_barrier.h"

namespace jiasu {

// ---- Half types
template <> struct traits<__half> : half_number {};
template <> struct traits<__nv_bfloat16> : half_number {};
template <> struct half_ops<__half> {
  static JIASU_FN float to_float(__half v) { return __half2float(v); }
  static JIASU_FN __half from_float(float v) { return __float2half_rn(v); }
  static JIASU_FN __half from_double(double v) { return __double2half(v); }
};
template <> struct half_ops<__nv_bfloat16> {
  static JIASU_FN float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static JIASU_FN __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  static JIASU_FN __nv_bfloat16 from_double(double v) { return __double2bfloat16(v); }
};

// ---- Thread and shared-memory queries
JIASU_FN long long laneid() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// The dynamic shared memory the launch asked for, in bytes: the extent of shape-0 shared arrays.
JIASU_FN long long dynamic_shared_bytes() {
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// The first statement of every kernel. A launch that may overlap the kernel before it (programmatic dependent
// launch, compute capability 9.0 and up: graphs jiasu captures) waits here until that grid has finished and its
// writes are visible; for any other launch it returns at once.
JIASU_FN void wait_for_prior_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// ---- Atomics: each returns the old value. int64 goes through CUDA's unsigned long long overloads
// (two's complement makes add, exch and cas bit-identical).
JIASU_FN unsigned long long* as_u64(long long* p) { return reinterpret_cast<unsigned long long*>(p); }

template <int Bytes> struct bits_of;
template <> struct bits_of<2> { using type = unsigned short; };
template <> struct bits_of<4> { using type = unsigned int; };
template <> struct bits_of<8> { using type = unsigned long long; };

// *p = update(*p) atomically with a compare-and-swap loop; no store when the value would not change.
template <typename T, typename F>
JIASU_FN T atomic_update(T* p, F update) {
  using Bits = typename bits_of<sizeof(T)>::type;
  Bits* address = reinterpret_cast<Bits*>(p);
  Bits old = *address, assumed;
  do {
    assumed = old;
    Bits desired = bit_cast<Bits>(update(bit_cast<T>(assumed)));
    if (desired == assumed) break;
    old = atomicCAS(address, assumed, desired);
  } while (old != assumed);
  return bit_cast<T>(old);
}

JIASU_FN int atomic_add(int* p, int v) { return atomicAdd(p, v); }
JIASU_FN unsigned atomic_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
JIASU_FN long long atomic_add(long long* p, long long v) {
  return static_cast<long long>(atomicAdd(as_u64(p), static_cast<unsigned long long>(v)));
}
JIASU_FN unsigned long long atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
JIASU_FN float atomic_add(float* p, float v) { return atomicAdd(p, v); }
JIASU_FN double atomic_add(double* p, double v) { return atomicAdd(p, v); }
JIASU_FN __half atomic_add(__half* p, __half v) { return atomicAdd(p, v); }

JIASU_FN int atomic_sub(int* p, int v) { return atomicSub(p, v); }
JIASU_FN unsigned atomic_sub(unsigned* p, unsigned v) { return atomicSub(p, v); }
JIASU_FN long long atomic_sub(long long* p, long long v) { return atomic_add(p, wrapping_negate(v)); }
JIASU_FN unsigned long long atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0 - v); }
JIASU_FN float atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
JIASU_FN double atomic_sub(double* p, double v) { return atomicAdd(p, -v); }

// max/min: integers natively; floats keep Python's max(old, v) (v only when strictly larger, so a
// stored nan stays and a nan v is ignored).
#define JIASU_ATOMIC_NATIVE(name, cuda_name) \
  JIASU_FN int name(int* p, int v) { return cuda_name(p, v); } \
  JIASU_FN unsigned name(unsigned* p, unsigned v) { return cuda_name(p, v); } \
  JIASU_FN long long name(long long* p, long long v) { return cuda_name(p, v); } \
  JIASU_FN unsigned long long name(unsigned long long* p, unsigned long long v) { return cuda_name(p, v); }
JIASU_ATOMIC_NATIVE(atomic_max, atomicMax)
JIASU_ATOMIC_NATIVE(atomic_min, atomicMin)
JIASU_ATOMIC_NATIVE(atomic_and, atomicAnd)
JIASU_ATOMIC_NATIVE(atomic_or, atomicOr)
JIASU_ATOMIC_NATIVE(atomic_xor, atomicXor)

template <typename T> JIASU_FN T atomic_max(T* p, T v) { return atomic_update(p, [v](T old) { return max_(old, v); }); }
template <typename T> JIASU_FN T atomic_min(T* p, T v) { return atomic_update(p, [v](T old) { return min_(old, v); }); }
template <typename T>
JIASU_FN T atomic_nanmax(T* p, T v) { return atomic_update(p, [v](T old) { return nanmax_(old, v); }); }
template <typename T>
JIASU_FN T atomic_nanmin(T* p, T v) { return atomic_update(p, [v](T old) { return nanmin_(old, v); }); }

JIASU_FN int atomic_exch(int* p, int v) { return atomicExch(p, v); }
JIASU_FN unsigned atomic_exch(unsigned* p, unsigned v) { return atomicExch(p, v); }
JIASU_FN long long atomic_exch(long long* p, long long v) {
  return static_cast<long long>(atomicExch(as_u64(p), static_cast<unsigned long long>(v)));
}
JIASU_FN unsigned long long atomic_exch(unsigned long long* p, unsigned long long v) { return atomicExch(p, v); }
JIASU_FN float atomic_exch(float* p, float v) { return atomicExch(p, v); }
JIASU_FN double atomic_exch(double* p, double v) {
  return __longlong_as_double(static_cast<long long>(
      atomicExch(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(__double_as_longlong(v)))));
}

// Numba's inc/dec with a wrap bound: inc stores (old >= bound ? 0 : old + 1), dec stores
// (old == 0 || old > bound ? bound : old - 1). CUDA's 32-bit atomicInc/atomicDec are exactly these.
JIASU_FN unsigned atomic_inc(unsigned* p, unsigned bound) { return atomicInc(p, bound); }
JIASU_FN unsigned atomic_dec(unsigned* p, unsigned bound) { return atomicDec(p, bound); }
JIASU_FN unsigned long long atomic_inc(unsigned long long* p, unsigned long long bound) {
  return atomic_update(p, [bound](unsigned long long old) { return old >= bound ? 0ULL : old + 1; });
}
JIASU_FN unsigned long long atomic_dec(unsigned long long* p, unsigned long long bound) {
  return atomic_update(p, [bound](unsigned long long old) { return (old == 0 || old > bound) ? bound : old - 1; });
}

JIASU_FN int atomic_cas(int* p, int expected, int desired) { return atomicCAS(p, expected, desired); }
JIASU_FN unsigned atomic_cas(unsigned* p, unsigned expected, unsigned desired) { return atomicCAS(p, expected, desired); }
JIASU_FN long long atomic_cas(long long* p, long long expected, long long desired) {
  return static_cast<long long>(atomicCAS(as_u64(p), static_cast<unsigned long long>(expected),
                                          static_cast<unsigned long long>(desired)));
}
JIASU_FN unsigned long long atomic_cas(unsigned long long* p, unsigned long long expected, unsigned long long desired) {
  return atomicCAS(p, expected, desired);
}

// ---- Warp shuffles of 32- and 64-bit values (CUDA's overloads)
template <typename T> JIASU_FN T shfl_sync(unsigned mask, T v, int src_lane) { return __shfl_sync(mask, v, src_lane); }
template <typename T> JIASU_FN T shfl_up_sync(unsigned mask, T v, int delta) { return __shfl_up_sync(mask, v, delta); }
template <typename T> JIASU_FN T shfl_down_sync(unsigned mask, T v, int delta) { return __shfl_down_sync(mask, v, delta); }
template <typename T> JIASU_FN T shfl_xor_sync(unsigned mask, T v, int lane_mask) { return __shfl_xor_sync(mask, v, lane_mask); }

// ---- Bits: popc, clz and ffs count in the width of the argument's own type.
template <typename T>
JIASU_FN unsigned long long unsigned_bits(T x) { return static_cast<typename traits<T>::unsigned_type>(x); }

template <typename T>
JIASU_FN int popc(T x) {
  if constexpr (sizeof(T) == 8) return __popcll(unsigned_bits(x));
  else return __popc(static_cast<unsigned>(unsigned_bits(x)));
}
template <typename T>
JIASU_FN int clz(T x) {
  if constexpr (sizeof(T) == 8) return __clzll(static_cast<long long>(unsigned_bits(x)));
  else return __clz(static_cast<int>(unsigned_bits(x))) - (32 - 8 * static_cast<int>(sizeof(T)));
}
template <typename T>
JIASU_FN int ffs(T x) {  // 1-based position of the lowest set bit; 0 for 0
  if constexpr (sizeof(T) == 8) return __ffsll(static_cast<long long>(unsigned_bits(x)));
  else return __ffs(static_cast<int>(unsigned_bits(x)));
}
// CUDA's __brev: the 32 bits of a (zero-extended) value up to 32 bits reversed, or the 64 bits of a 64-bit one.
template <typename T>
JIASU_FN unsigned brev(T x) { return __brev(static_cast<unsigned>(unsigned_bits(x))); }
JIASU_FN unsigned long long brev(long long x) { return __brevll(unsigned_bits(x)); }
JIASU_FN unsigned long long brev(unsigned long long x) { return __brevll(x); }

// ---- Cooperative groups
// g.sync() of the grid, whose blocks a cooperative launch keeps resident (runtime/module.cpp). The counter is the
// module's, so one per compiled kernel: cooperative launches of one kernel on different streams must not overlap.
__device__ unsigned grid_sync_arrivals;
JIASU_FN void grid_sync(GridGroup) { grid_barrier(&grid_sync_arrivals, gridDim.x * gridDim.y * gridDim.z); }

}  // namespace jiasu

#undef JIASU_ATOMIC_NATIVE
