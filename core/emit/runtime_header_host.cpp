// The host part of the runtime header (pasted into it, in the #else of #ifdef __CUDACC__): what the device
// part gets from CUDA, written for a host C++17 compiler (GCC or Clang: it uses their __atomic and bit
// builtins), plus the structs of the host entry point that emit_host() writes.
#include "emit/cuda_emitter.hpp"

namespace jiasu::emit::cuda {

const char* host_runtime_part() {
  return R"JIASU(namespace jiasu {

// ---- Half types in software: the bits of an IEEE binary16 / bfloat16, converted with round to nearest even.
}  // namespace jiasu
struct __half { unsigned short bits; };
struct __nv_bfloat16 { unsigned short bits; };
namespace jiasu {

namespace detail {
// The float nearest d, rounded to odd (truncated, lowest bit set when inexact): rounding that float to
// a narrower type then rounds d correctly (no double rounding).
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (!isfinite(f) || static_cast<double>(f) == d) return f;
  unsigned bits = bit_cast<unsigned>(f);
  if (fabs(static_cast<double>(f)) > fabs(d)) bits -= 1;  // toward zero: the truncation
  return bit_cast<float>(bits | 1u);
}

inline unsigned short float_to_half_bits(float f) {
  unsigned x = bit_cast<unsigned>(f);
  unsigned short sign = static_cast<unsigned short>((x >> 16) & 0x8000u);
  unsigned ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);  // inf, nan
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds to 65520 or more: inf
  if (ax < 0x38800000u) {  // below 2**-14: a subnormal half, in units of 2**-24 (rintf rounds to even)
    return sign | static_cast<unsigned short>(rintf(bit_cast<float>(ax) * 16777216.0f));
  }
  unsigned h = ((((ax >> 23) - 127u + 15u) << 10) | ((ax & 0x7fffffu) >> 13));
  unsigned rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may reach the exponent: right
  return static_cast<unsigned short>(sign | h);
}

inline float half_bits_to_float(unsigned short h) {
  unsigned sign = static_cast<unsigned>(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2**-24
    return sign ? -magnitude : magnitude;
  }
  unsigned bits = exponent == 31 ? (0x7f800000u | (mantissa << 13)) : (((exponent + 112u) << 23) | (mantissa << 13));
  return bit_cast<float>(sign | bits);
}

inline unsigned short float_to_bfloat16_bits(float f) {
  unsigned x = bit_cast<unsigned>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<unsigned short>(x >> 16);
}
}  // namespace detail

template <> struct traits<__half> : half_number {};
template <> struct traits<__nv_bfloat16> : half_number {};
template <> struct half_ops<__half> {
  static inline float to_float(__half v) { return detail::half_bits_to_float(v.bits); }
  static inline __half from_float(float v) { return __half{detail::float_to_half_bits(v)}; }
  static inline __half from_double(double v) { return from_float(detail::round_to_odd_float(v)); }
};
template <> struct half_ops<__nv_bfloat16> {
  static inline float to_float(__nv_bfloat16 v) { return bit_cast<float>(static_cast<unsigned>(v.bits) << 16); }
  static inline __nv_bfloat16 from_float(float v) { return __nv_bfloat16{detail::float_to_bfloat16_bits(v)}; }
  static inline __nv_bfloat16 from_double(double v) { return from_float(detail::round_to_odd_float(v)); }
};

// ---- Atomics: each returns the old value; sequentially consistent __atomic builtins.
template <int Bytes> struct bits_of;
template <> struct bits_of<1> { using type = unsigned char; };
template <> struct bits_of<2> { using type = unsigned short; };
template <> struct bits_of<4> { using type = unsigned int; };
template <> struct bits_of<8> { using type = unsigned long long; };
template <typename T> constexpr bool is_integer_v = traits<T>::is_signed || traits<T>::is_unsigned;

// *p = update(*p) atomically with a compare-and-swap loop; no store when the value would not change.
template <typename T, typename F>
inline T atomic_update(T* p, F update) {
  using Bits = typename bits_of<sizeof(T)>::type;
  Bits* address = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(address, __ATOMIC_SEQ_CST);
  for (;;) {
    Bits desired = bit_cast<Bits>(update(bit_cast<T>(old)));
    if (desired == old) break;
    if (__atomic_compare_exchange_n(address, &old, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
  }
  return bit_cast<T>(old);
}

template <typename T>
inline T atomic_add(T* p, T v) {
  if constexpr (is_integer_v<T>) return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);  // wraps
  else return atomic_update(p, [v](T old) { return cast<T>(widen(old) + widen(v)); });
}
template <typename T>
inline T atomic_sub(T* p, T v) {
  if constexpr (is_integer_v<T>) return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
  else return atomic_update(p, [v](T old) { return cast<T>(widen(old) - widen(v)); });
}
// max/min keep Python's max(old, v) (v only when strictly larger, so a stored nan stays).
template <typename T> inline T atomic_max(T* p, T v) { return atomic_update(p, [v](T old) { return max_(old, v); }); }
template <typename T> inline T atomic_min(T* p, T v) { return atomic_update(p, [v](T old) { return min_(old, v); }); }
template <typename T> inline T atomic_and(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <typename T> inline T atomic_or(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T> inline T atomic_xor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <typename T>
inline T atomic_exch(T* p, T v) {
  using Bits = typename bits_of<sizeof(T)>::type;
  return bit_cast<T>(__atomic_exchange_n(reinterpret_cast<Bits*>(p), bit_cast<Bits>(v), __ATOMIC_SEQ_CST));
}
// Numba's inc/dec with a wrap bound (CUDA's atomicInc/atomicDec).
template <typename T>
inline T atomic_inc(T* p, T bound) { return atomic_update(p, [bound](T old) { return old >= bound ? T(0) : T(old + 1); }); }
template <typename T>
inline T atomic_dec(T* p, T bound) {
  return atomic_update(p, [bound](T old) { return (old == 0 || old > bound) ? bound : T(old - 1); });
}
template <typename T>
inline T atomic_cas(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the old value either way
}

// ---- Fences: every host thread sees memory in one order.
inline void threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- Bits: popc, clz and ffs count in the width of the argument's own type (as the device part).
template <typename T>
inline unsigned long long unsigned_bits(T x) { return static_cast<typename traits<T>::unsigned_type>(x); }
template <typename T> inline int popc(T x) { return __builtin_popcountll(unsigned_bits(x)); }
template <typename T>
inline int clz(T x) {
  unsigned long long u = unsigned_bits(x);
  return u == 0 ? 8 * static_cast<int>(sizeof(T)) : __builtin_clzll(u) - (64 - 8 * static_cast<int>(sizeof(T)));
}
template <typename T> inline int ffs(T x) { return __builtin_ffsll(static_cast<long long>(unsigned_bits(x))); }
inline unsigned long long reverse_bits(unsigned long long x, int width) {
  unsigned long long out = 0;
  for (int i = 0; i < width; ++i, x >>= 1) out = (out << 1) | (x & 1);
  return out;
}
template <typename T> inline unsigned brev(T x) { return static_cast<unsigned>(reverse_bits(unsigned_bits(x) & 0xffffffffULL, 32)); }
inline unsigned long long brev(long long x) { return reverse_bits(unsigned_bits(x), 64); }
inline unsigned long long brev(unsigned long long x) { return reverse_bits(x, 64); }

// ---- The host entry point: extern "C" void <entry>(const jiasu::HostLaunch*, void* const* params) runs
// blocks [block_begin, block_end) of the grid (linear block b is x = b % grid[0], y = b / grid[0] % grid[1],
// z = b / (grid[0] * grid[1])), one block after another on the calling OS thread; params[i] points at
// argument i, packed as for CUDA (arrays as ArrayC/ArrayA, scalars as their C type). shared_bytes is the
// dynamic shared memory of each block (the extent of shape-0 shared arrays), as CUDA's launch gives it.
struct HostLaunch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
};
struct HostDim3 { long long x, y, z; };
// What one thread of the kernel sees: every emitted function takes it first.
struct HostThread { HostDim3 threadIdx, blockIdx, blockDim, gridDim; };

}  // namespace jiasu
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
namespace jiasu {
namespace detail {

// ---- The block scheduler. A kernel without barriers or warp operations runs the threads of a block one
// after another. Any other kernel runs them as fibers (ucontext), one stack each from one mapping with a
// guard page below every stack.
//
// Block barriers: each fiber runs until it reaches a barrier or ends; once every fiber still running has
// reached it, the barrier opens and they all continue. A thread that has returned counts as arrived at
// every later barrier (what CUDA does in practice when all remaining threads reach it); its predicate is
// not counted.
//
// Warps: 32 consecutive linear threads of the block (x fastest), the last warp possibly partial. A warp
// operation (shuffle, vote, syncwarp) is a rendezvous of the warp's live lanes (those that exist and have
// not returned): each lane deposits its value and switches away until the last one arrives, which computes
// every lane's result; the others then continue with theirs. Masks are taken as naming the whole warp (a
// rendezvous waits for every live lane); ballot/any/all only count the lanes of the mask. A shuffle from a
// lane that does not take part (absent or returned) gives the lane its own value. activemask is a soft
// rendezvous: it gives the lanes that reach it before the warp can go no further (all the live lanes when
// the warp runs in step; those of one branch when the others wait at a barrier, at another warp operation
// or have returned).
//
// The scheduler runs each warp until all its lanes wait at the block barrier or have ended (lanes in
// thread order, again and again while warp rendezvous complete), warp after warp, then opens the barrier.
// Lanes of one warp waiting, some at a warp operation and some at a block barrier, or lanes reaching
// different warp operations together (activemask aside), are a deadlock on the device: here they abort
// with a message.
enum : unsigned char { fiber_ready = 0, fiber_done = 1, fiber_at_barrier = 2, fiber_at_warp = 3 };
enum class WarpOp : int { shfl_idx, shfl_up, shfl_down, shfl_xor, ballot, any, all, sync, active };

struct HostWarp {
  int live = 0;              // lanes that exist and have not returned
  int arrived = 0;           // lanes waiting at the rendezvous being formed
  unsigned arrived_mask = 0;
  WarpOp op = WarpOp::sync;
  unsigned long long value[32];
  long long arg[32];         // source lane, delta or lane mask
  unsigned mask[32];
  unsigned long long result[32];
};

struct HostBlock {
  unsigned char* dynamic_shared = nullptr;
  long long shared_bytes = 0;
  // fibers
  ucontext_t scheduler;
  ucontext_t* contexts = nullptr;
  HostThread* threads = nullptr;
  unsigned char* state = nullptr;  // fiber_ready, fiber_done, ...
  HostWarp* warps = nullptr;
  long long current = 0;
  long long arrived = 0, votes = 0;            // the barrier being reached
  long long opened_arrived = 0, opened_votes = 0;  // the barrier that last opened
  void (*invoke)(void* body, const HostThread& thread) = nullptr;
  void* body = nullptr;
};
inline thread_local HostBlock* current_block = nullptr;

[[noreturn]] inline void scheduler_failure(const char* what, long long warp) {
  fprintf(stderr, "jiasu (CPU backend): warp %lld of block (%lld, %lld, %lld): %s\n", warp,
          current_block->threads[0].blockIdx.x, current_block->threads[0].blockIdx.y,
          current_block->threads[0].blockIdx.z, what);
  abort();
}

inline void fiber_main() {
  HostBlock& block = *current_block;
  long long i = block.current;
  block.invoke(block.body, block.threads[i]);
  block.state[i] = fiber_done;  // uc_link resumes the scheduler
}

// Waits until every running thread of the block has reached a barrier; `vote` is this thread's predicate.
inline void barrier(bool vote) {
  HostBlock& block = *current_block;
  if (!block.contexts) return;  // threads run one after another: no barrier in the kernel (cannot happen)
  block.arrived += 1;
  block.votes += vote ? 1 : 0;
  block.state[block.current] = fiber_at_barrier;
  swapcontext(&block.contexts[block.current], &block.scheduler);
}

// Every live lane of warp w has arrived: each one's result, then they all may continue.
inline void complete_warp(HostBlock& block, long long w) {
  HostWarp& warp = block.warps[w];
  const unsigned present = warp.arrived_mask;
  unsigned ballot = 0;
  for (int l = 0; l < 32; ++l)
    if ((present >> l & 1u) && warp.value[l]) ballot |= 1u << l;
  for (int l = 0; l < 32; ++l) {
    if (!(present >> l & 1u)) continue;
    const long long a = warp.arg[l];
    const unsigned m = warp.mask[l];
    long long source = l;  // as PTX's shfl.sync with a width of 32: out of range gives the own value
    switch (warp.op) {
      case WarpOp::shfl_idx: source = a & 31; break;
      case WarpOp::shfl_up: source = l - static_cast<long long>(static_cast<unsigned>(a)); break;
      case WarpOp::shfl_down: source = l + static_cast<long long>(static_cast<unsigned>(a)); break;
      case WarpOp::shfl_xor: source = l ^ static_cast<long long>(static_cast<unsigned>(a)); break;
      default: break;
    }
    if (source < 0 || source > 31 || !(present >> source & 1u)) source = l;
    switch (warp.op) {
      case WarpOp::ballot: warp.result[l] = ballot & m; break;
      case WarpOp::any: warp.result[l] = (ballot & m) != 0; break;
      case WarpOp::all: warp.result[l] = (ballot & m) == (present & m); break;
      case WarpOp::sync: warp.result[l] = 0; break;
      case WarpOp::active: warp.result[l] = present; break;
      default: warp.result[l] = warp.value[source]; break;
    }
  }
  warp.arrived = 0;
  warp.arrived_mask = 0;
  for (int l = 0; l < 32; ++l)
    if ((present >> l & 1u) && block.state[w * 32 + l] == fiber_at_warp) block.state[w * 32 + l] = fiber_ready;
}

// This lane's part of a warp operation: its value and argument in, its result out.
inline unsigned long long warp_exchange(WarpOp op, unsigned mask, unsigned long long value, long long arg) {
  HostBlock& block = *current_block;
  const long long i = block.current, w = i / 32;
  const int lane = static_cast<int>(i % 32);
  HostWarp& warp = block.warps[w];
  if (warp.arrived > 0 && warp.op != op) {
    if (warp.op == WarpOp::active) complete_warp(block, w);  // the lanes there ran apart from this one
    else if (op == WarpOp::active) return 1u << lane;         // this lane runs apart from the waiting ones
    else scheduler_failure("lanes reached different warp operations together", w);
  }
  if (warp.arrived == 0) warp.op = op;
  warp.value[lane] = value;
  warp.arg[lane] = arg;
  warp.mask[lane] = mask;
  warp.arrived_mask |= 1u << lane;
  if (++warp.arrived == warp.live) {
    complete_warp(block, w);
  } else {
    block.state[i] = fiber_at_warp;
    swapcontext(&block.contexts[i], &block.scheduler);
  }
  return warp.result[lane];
}

// A lane of warp w has returned: a rendezvous may now have all the live lanes it waits for.
inline void lane_returned(HostBlock& block, long long w) {
  HostWarp& warp = block.warps[w];
  --warp.live;
  if (warp.arrived > 0 && warp.arrived == warp.live) complete_warp(block, w);
}

template <typename T> inline unsigned long long to_bits(T v) {
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <typename T> inline T from_bits(unsigned long long bits) {
  T v;
  __builtin_memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace detail

inline void syncthreads() { detail::barrier(false); }
inline int syncthreads_count(bool p) {
  detail::barrier(p);
  return static_cast<int>(detail::current_block->opened_votes);
}
inline int syncthreads_and(bool p) {
  detail::barrier(p);
  return detail::current_block->opened_votes == detail::current_block->opened_arrived;
}
inline int syncthreads_or(bool p) {
  detail::barrier(p);
  return detail::current_block->opened_votes != 0;
}
inline long long dynamic_shared_bytes() { return detail::current_block->shared_bytes; }
inline unsigned char* dynamic_shared_memory() { return detail::current_block->dynamic_shared; }

// ---- Warp operations (the kernel runs as fibers)
template <typename T> inline T shfl_sync(unsigned mask, T v, int src_lane) {
  return detail::from_bits<T>(detail::warp_exchange(detail::WarpOp::shfl_idx, mask, detail::to_bits(v), src_lane));
}
template <typename T> inline T shfl_up_sync(unsigned mask, T v, int delta) {
  return detail::from_bits<T>(detail::warp_exchange(detail::WarpOp::shfl_up, mask, detail::to_bits(v), delta));
}
template <typename T> inline T shfl_down_sync(unsigned mask, T v, int delta) {
  return detail::from_bits<T>(detail::warp_exchange(detail::WarpOp::shfl_down, mask, detail::to_bits(v), delta));
}
template <typename T> inline T shfl_xor_sync(unsigned mask, T v, int lane_mask) {
  return detail::from_bits<T>(detail::warp_exchange(detail::WarpOp::shfl_xor, mask, detail::to_bits(v), lane_mask));
}
inline unsigned ballot_sync(unsigned mask, bool p) {
  return static_cast<unsigned>(detail::warp_exchange(detail::WarpOp::ballot, mask, p, 0));
}
inline int any_sync(unsigned mask, bool p) {
  return static_cast<int>(detail::warp_exchange(detail::WarpOp::any, mask, p, 0));
}
inline int all_sync(unsigned mask, bool p) {
  return static_cast<int>(detail::warp_exchange(detail::WarpOp::all, mask, p, 0));
}
inline void syncwarp(unsigned mask = 0xffffffffu) { detail::warp_exchange(detail::WarpOp::sync, mask, 0, 0); }
inline unsigned activemask() {
  return static_cast<unsigned>(detail::warp_exchange(detail::WarpOp::active, 0xffffffffu, 0, 0));
}

// Runs the blocks of a launch; body(thread) runs one thread of the kernel.
class HostBlocks {
 public:
  static constexpr long long fiber_stack_bytes = 64 * 1024;

  explicit HostBlocks(const HostLaunch* launch) : launch_(*launch), previous_(detail::current_block) {
    thread_.gridDim = {launch_.grid[0], launch_.grid[1], launch_.grid[2]};
    thread_.blockDim = {launch_.block[0], launch_.block[1], launch_.block[2]};
    threads_ = launch_.block[0] * launch_.block[1] * launch_.block[2];
    if (launch_.shared_bytes > 0) {
      state_.shared_bytes = launch_.shared_bytes;
      state_.dynamic_shared = static_cast<unsigned char*>(aligned_alloc(64, (launch_.shared_bytes + 63) / 64 * 64));
    }
    detail::current_block = &state_;
  }
  ~HostBlocks() {
    detail::current_block = previous_;
    free(state_.dynamic_shared);
    if (stacks_ != MAP_FAILED) munmap(stacks_, static_cast<size_t>(mapped_));
    delete[] state_.contexts;
    delete[] state_.threads;
    delete[] state_.state;
    delete[] state_.warps;
  }
  HostBlocks(const HostBlocks&) = delete;
  HostBlocks& operator=(const HostBlocks&) = delete;

  // Threads one after another (kernels without barriers).
  template <typename Body>
  void run(Body& body) {
    for (long long b = launch_.block_begin; b < launch_.block_end; ++b) {
      thread_.blockIdx = block_index(b);
      for (long long z = 0; z < launch_.block[2]; ++z)
        for (long long y = 0; y < launch_.block[1]; ++y)
          for (long long x = 0; x < launch_.block[0]; ++x) {
            thread_.threadIdx = {x, y, z};
            body(static_cast<const HostThread&>(thread_));
          }
    }
  }

  // Threads as fibers that switch at barriers and warp operations.
  template <typename Body>
  void run_fibers(Body& body) {
    if (threads_ <= 0 || launch_.block_begin >= launch_.block_end) return;
    if (!allocate_fibers()) {
      __builtin_trap();  // out of memory for the fiber stacks
    }
    state_.invoke = [](void* f, const HostThread& thread) { (*static_cast<Body*>(f))(thread); };
    state_.body = &body;
    ucontext_t pattern;
    getcontext(&pattern);
    const long long page = 4096, slot = fiber_stack_bytes + page;
    for (long long b = launch_.block_begin; b < launch_.block_end; ++b) {
      thread_.blockIdx = block_index(b);
      for (long long i = 0; i < threads_; ++i) {
        HostThread& t = state_.threads[i];
        t = thread_;
        t.threadIdx = {i % launch_.block[0], i / launch_.block[0] % launch_.block[1],
                       i / (launch_.block[0] * launch_.block[1])};
        ucontext_t& c = state_.contexts[i];
        c = pattern;
        c.uc_stack.ss_sp = static_cast<unsigned char*>(stacks_) + i * slot + page;
        c.uc_stack.ss_size = static_cast<size_t>(fiber_stack_bytes);
        c.uc_link = &state_.scheduler;
        makecontext(&c, &detail::fiber_main, 0);
        state_.state[i] = detail::fiber_ready;
      }
      for (long long w = 0; w < warps_; ++w) {
        detail::HostWarp& warp = state_.warps[w];
        warp.live = static_cast<int>((w + 1) * 32 <= threads_ ? 32 : threads_ - w * 32);
        warp.arrived = 0;
        warp.arrived_mask = 0;
      }
      for (long long running = threads_; running > 0;) {
        state_.arrived = state_.votes = 0;
        for (long long w = 0; w < warps_; ++w) {  // each warp until its lanes wait at the barrier or ended
          const long long first = w * 32, last = first + 32 < threads_ ? first + 32 : threads_;
          for (bool resumed = true; resumed;) {
            resumed = false;
            for (long long i = first; i < last; ++i) {
              if (state_.state[i] != detail::fiber_ready) continue;
              resumed = true;
              state_.current = i;
              swapcontext(&state_.scheduler, &state_.contexts[i]);
              if (state_.state[i] == detail::fiber_done) {
                --running;
                detail::lane_returned(state_, w);
              }
            }
            detail::HostWarp& warp = state_.warps[w];
            if (!resumed && warp.arrived > 0 && warp.op == detail::WarpOp::active) {  // no lane can join them
              detail::complete_warp(state_, w);
              resumed = true;
            }
          }
          for (long long i = first; i < last; ++i)
            if (state_.state[i] == detail::fiber_at_warp)
              detail::scheduler_failure("lanes wait at a warp operation while others wait at a block barrier", w);
        }
        state_.opened_arrived = state_.arrived;  // every running fiber waits at the barrier: open it
        state_.opened_votes = state_.votes;
        for (long long i = 0; i < threads_; ++i)
          if (state_.state[i] == detail::fiber_at_barrier) state_.state[i] = detail::fiber_ready;
      }
    }
  }

 private:
  HostDim3 block_index(long long b) const {
    return {b % launch_.grid[0], b / launch_.grid[0] % launch_.grid[1], b / (launch_.grid[0] * launch_.grid[1])};
  }
  bool allocate_fibers() {
    const long long page = 4096, slot = fiber_stack_bytes + page;
    mapped_ = threads_ * slot;
    stacks_ = mmap(nullptr, static_cast<size_t>(mapped_), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stacks_ == MAP_FAILED) return false;
    for (long long i = 0; i < threads_; ++i)  // a guard page below each stack: an overflow faults
      mprotect(static_cast<unsigned char*>(stacks_) + i * slot, static_cast<size_t>(page), PROT_NONE);
    state_.contexts = new ucontext_t[threads_];
    state_.threads = new HostThread[threads_];
    state_.state = new unsigned char[threads_];
    warps_ = (threads_ + 31) / 32;
    state_.warps = new detail::HostWarp[warps_];
    return true;
  }

  HostLaunch launch_;
  detail::HostBlock* previous_;
  detail::HostBlock state_;
  HostThread thread_{};
  long long threads_ = 0, warps_ = 0, mapped_ = 0;
  void* stacks_ = MAP_FAILED;
};

}  // namespace jiasu
)JIASU";
}

}  // namespace jiasu::emit::cuda
