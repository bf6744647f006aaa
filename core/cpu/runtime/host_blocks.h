// The CPU backend's block scheduler: barriers, warp rendezvous and deadlock reports over the fibers of
// cpu/runtime/fiber.h, and jiasu::HostBlocks, which runs a launch's range of blocks as thread loops or as
// fibers. The entry point that emit_host() writes calls it.
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/runtime/fiber.h"
#include "cpu/runtime/host_abi.h"
#include "cpu/runtime/host_intrinsics.h"

namespace jiasu {
namespace detail {

// ---- The block scheduler. A kernel without barriers or warp operations runs the threads of a block one
// after another. Any other kernel runs them as fibers, one stack each in the slots HostLaunch::fiber_stacks
// lends (a guard page below every stack).
//
// Block barriers: each fiber runs until it reaches a barrier or ends; once every fiber still running has
// reached it, the barrier opens and they all continue. A thread that has returned counts as arrived at
// every later barrier (what CUDA does in practice when all remaining threads reach it); its predicate is
// not counted. A grid barrier (g.sync() of a cooperative launch, whose blocks all run at once, each on an OS
// thread of its own) is a block barrier at which the block then waits for the other blocks
// (HostLaunch::grid_sync) before it opens; threads of one block waiting some at a grid barrier and some at a
// block barrier are a deadlock.
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
// A fiber that stops switches straight to the next one to run (next_fiber), and to the scheduler's own
// stack only when the barrier can open or the block failed: one switch per stop, not two.
// Lanes of one warp waiting, some at a warp operation and some at a block barrier, or lanes reaching
// different warp operations together (activemask aside), are a deadlock on the device: here the block
// stops (its fibers are dropped, never unwound) and the launch reports it (HostLaunch::error).
// Lanes of different branches run apart, as on the GPU, which runs one branch's lanes together, then the other's:
// fiber_deferred: reached a warp operation while lanes of its warp gather at an activemask; waits until that
//   completes (so the lanes of one branch all reach their activemask);
// fiber_held: left an activemask that deferred lanes waited for; waits until those have caught up (reached a
//   warp operation or barrier of their own, or ended).
enum : unsigned char {
  fiber_ready = 0, fiber_done = 1, fiber_at_barrier = 2, fiber_at_warp = 3, fiber_deferred = 4, fiber_held = 5
};
enum class WarpOp : int { shfl_idx, shfl_up, shfl_down, shfl_xor, ballot, any, all, sync, active };

inline const char* warp_op_name(WarpOp op) {
  static const char* const names[] = {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync",
                                      "any_sync",  "all_sync",     "syncwarp",       "activemask"};
  return names[static_cast<int>(op)];
}

struct HostWarp {
  int live;                  // lanes that exist and have not returned
  int arrived;               // lanes waiting at the rendezvous being formed
  unsigned arrived_mask;
  int site;                  // of an activemask rendezvous: lanes at another activemask call ran apart
  WarpOp op;
  unsigned long long value[32];
  long long arg[32];         // source lane, delta or lane mask
  unsigned mask[32];
  unsigned long long result[32];
};

struct HostBlock {
  unsigned char* dynamic_shared = nullptr;
  long long shared_bytes = 0;
  HostError* error = nullptr;
  bool failed = false;        // this block failed (or could not start): its OS thread runs no more blocks
  HostDim3 block_index{};     // of the block running, for messages
  // fibers (null when the threads run one after another)
  FiberContext* contexts = nullptr;
  HostThread* threads = nullptr;
  unsigned char* state = nullptr;  // fiber_ready, fiber_done, ... (apart: next_fiber scans it)
  HostWarp* warps = nullptr;
  long long thread_count = 0, warp_count = 0;
  FiberContext scheduler;
  long long current = 0, running = 0;
  long long scan_warp = 0, scan_next = 0;  // next_fiber looks at lane scan_next of warp scan_warp next
  bool scan_resumed = false;               // a lane of the current pass over the warp ran
  long long arrived = 0, votes = 0;                // the barrier being reached
  long long grid_arrived = 0;                      // those of `arrived` at a grid barrier
  long long opened_arrived = 0, opened_votes = 0;  // the barrier that last opened
  void (*invoke)(void* body, const HostThread& thread) = nullptr;
  void* body = nullptr;
  HostTrap* trap = nullptr;  // where a fault or an interrupt leaves the range being run
  HostAccessLog* access_log = nullptr;  // HostLaunch::access_log
};
inline thread_local HostBlock* current_block = nullptr;

// HostLaunch::stop of the launch running (one flag serves every launch): read at every loop back-edge and
// barrier, so it is a plain global rather than a thread-local.
inline const volatile sig_atomic_t no_stop = 0;
inline const volatile sig_atomic_t* stop_flag = &no_stop;

// Ctrl-C: leaves the range (HostBlocks::guarded reports it).
inline void stop_now() {
  HostTrap* trap = current_block->trap;
  if (!trap) return;  // a caller that lends no trap: it cannot be stopped
  trap->signal = 0;
  siglongjmp(trap->jump, 1);
}
inline void poll_stop() {
  if (__builtin_expect(*__atomic_load_n(&stop_flag, __ATOMIC_RELAXED) != 0, 0)) stop_now();
}

// Records a failure of the launch (the first one wins) and marks the block failed: a fiber stops at its
// next barrier, warp operation or end (the block's other fibers never run again), thread loops finish
// the block (a debug-mode check hands out a scratch element, so that is harmless); no later block of this
// OS thread runs, and other OS threads skip the blocks they have not started.
// kind: what HostError::failed becomes (a HostFailure). True when this failure is the one the launch reports.
inline bool vfail(HostBlock& block, const char* format, va_list args, int kind = host_launch_failed) {
  block.failed = true;
  HostError fallback{};
  HostError* error = block.error ? block.error : &fallback;
  if (__atomic_exchange_n(&error->failed, kind, __ATOMIC_ACQ_REL) != 0) return false;  // another failure came first
  vsnprintf(error->message, sizeof error->message, format, args);
  if (!block.error) {
    fprintf(stderr, "jiasu (CPU backend): %s\n", error->message);
    abort();
  }
  return true;
}
inline bool fail_as(HostBlock& block, int kind, const char* format, ...) __attribute__((format(printf, 3, 4)));
inline bool fail_as(HostBlock& block, int kind, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const bool reported = vfail(block, format, args, kind);
  va_end(args);
  return reported;
}
inline void fail(HostBlock& block, const char* format, ...) __attribute__((format(printf, 2, 3)));
inline void fail(HostBlock& block, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vfail(block, format, args);
  va_end(args);
}

// Threads (x, y, z) of warp w named by the lanes of `lanes`, runs of consecutive ones as first-last.
inline const char* describe_lanes(const HostBlock& block, long long w, unsigned lanes, char* out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int l = 0; l < 32 && used < size;) {
    if (!(lanes >> l & 1u)) { ++l; continue; }
    int end = l;
    while (end + 1 < 32 && (lanes >> (end + 1) & 1u)) ++end;
    const HostDim3& a = block.threads[w * 32 + l].threadIdx;
    const HostDim3& b = block.threads[w * 32 + end].threadIdx;
    int n = end == l ? snprintf(out + used, size - used, "%s(%lld, %lld, %lld)", used ? ", " : "", a.x, a.y, a.z)
                     : snprintf(out + used, size - used, "%s(%lld, %lld, %lld)-(%lld, %lld, %lld)", used ? ", " : "",
                                a.x, a.y, a.z, b.x, b.y, b.z);
    used += n > 0 ? static_cast<size_t>(n) : 0;
    l = end + 1;
  }
  return out;
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
  const long long first = w * 32, last = first + 32 < block.thread_count ? first + 32 : block.thread_count;
  bool deferred = false;
  for (long long i = first; i < last; ++i) deferred |= block.state[i] == fiber_deferred;
  for (long long i = first; i < last; ++i) {  // every lane present waited there; deferred ones try again first
    if (present >> (i - first) & 1u) block.state[i] = deferred ? fiber_held : fiber_ready;
    else if (block.state[i] == fiber_deferred) block.state[i] = fiber_ready;
  }
}

// The next fiber to run, or -1 when every warp waits at the block barrier or has ended (or the block
// failed). Resumes the scan where it stopped: passes over the lanes of one warp in thread order until a
// pass runs none, then the next warp.
inline long long next_fiber(HostBlock& block) {
  while (!block.failed) {
    const long long w = block.scan_warp, first = w * 32;
    const long long last = first + 32 < block.thread_count ? first + 32 : block.thread_count;
    for (long long i = block.scan_next; i < last; ++i)
      if (block.state[i] == fiber_ready) {
        block.scan_next = i + 1;
        block.scan_resumed = true;
        return i;
      }
    HostWarp& warp = block.warps[w];
    const bool again = block.scan_resumed;
    block.scan_resumed = false;
    block.scan_next = first;
    if (again) continue;
    if (warp.arrived > 0 && warp.op == WarpOp::active) {  // no lane can join them: activemask gives those there
      complete_warp(block, w);
      continue;
    }
    bool held = false;  // the deferred lanes have caught up: the lanes that waited for them go on
    for (long long i = first; i < last; ++i)
      if (block.state[i] == fiber_held) block.state[i] = fiber_ready, held = true;
    if (held) continue;
    if (warp.arrived > 0) {  // the others wait at the block barrier (none is ready, the returned are not live)
      unsigned at_barrier = 0;
      for (long long i = first; i < last; ++i)
        if (block.state[i] == fiber_at_barrier) at_barrier |= 1u << (i - first);
      char waiting[160], barrier[160];
      fail(block,
           "deadlock in block (%lld, %lld, %lld): threads %s wait at a block barrier (syncthreads) that threads %s "
           "of their warp never reach: those wait at %s for the first ones",
           block.block_index.x, block.block_index.y, block.block_index.z,
           describe_lanes(block, w, at_barrier, barrier, sizeof barrier), describe_lanes(block, w, warp.arrived_mask, waiting, sizeof waiting),
           warp_op_name(warp.op));
      break;
    }
    if (w + 1 == block.warp_count) break;
    block.scan_warp = w + 1;
    block.scan_next = first + 32;
  }
  return -1;
}

// The running fiber stops (its state says why): on to the next fiber, or to the scheduler's stack.
inline void yield(HostBlock& block) {
  const long long self = block.current, next = next_fiber(block);
  if (next == self) return;  // an activemask that only this lane reached
  if (next < 0) {
    fiber_switch(block.contexts[self], block.scheduler);
  } else {
    block.current = next;
    fiber_switch(block.contexts[self], block.contexts[next]);
  }
}

// Where every fiber starts: the thread's body, then never back (a done fiber is never picked again).
inline void fiber_main() {
  HostBlock& block = *current_block;
  const long long i = block.current;
  block.invoke(block.body, block.threads[i]);
  block.state[i] = fiber_done;
  --block.running;
  HostWarp& warp = block.warps[i / 32];  // a rendezvous may now have all the live lanes it waits for
  if (--warp.live == warp.arrived && warp.arrived > 0) complete_warp(block, i / 32);
  yield(block);
}

// Waits until every running thread of the block has reached a barrier; `vote` is this thread's predicate.
// grid: a grid barrier, which every block of the grid reaches before it opens.
inline void barrier(bool vote, bool grid = false) {
  poll_stop();
  HostBlock& block = *current_block;
  if (!block.contexts) return;  // threads run one after another: no barrier in the kernel (cannot happen)
  block.arrived += 1;
  block.votes += vote ? 1 : 0;
  block.grid_arrived += grid ? 1 : 0;
  block.state[block.current] = fiber_at_barrier;
  yield(block);
}

// This lane's part of a warp operation: its value and argument in, its result out.
inline unsigned long long warp_exchange(WarpOp op, unsigned mask, unsigned long long value, long long arg,
                                         int site = 0) {
  HostBlock& block = *current_block;
  const long long i = block.current, w = i / 32;
  const int lane = static_cast<int>(i % 32);
  HostWarp& warp = block.warps[w];
  while (warp.arrived > 0 && warp.op == WarpOp::active && (op != WarpOp::active || warp.site != site)) {
    block.state[i] = fiber_deferred;  // until no more lanes can join that activemask
    yield(block);
  }
  if (warp.arrived > 0 && (warp.op != op || (op == WarpOp::active && warp.site != site))) {
    if (op == WarpOp::active) {
      return 1u << lane;  // this lane runs apart from the waiting ones
    } else {
      char waiting[160];
      const HostDim3& t = block.threads[i].threadIdx;
      fail(block,
           "deadlock in block (%lld, %lld, %lld): threads %s wait at %s while thread (%lld, %lld, %lld) of their "
           "warp reaches %s (the lanes of a warp must meet at the same warp operation)",
           block.block_index.x, block.block_index.y, block.block_index.z,
           describe_lanes(block, w, warp.arrived_mask, waiting, sizeof waiting), warp_op_name(warp.op), t.x, t.y, t.z,
           warp_op_name(op));
      block.state[i] = fiber_at_warp;
      yield(block);  // to the scheduler, which drops the block
    }
  }
  if (warp.arrived == 0) warp.op = op, warp.site = site;
  warp.value[lane] = value;
  warp.arg[lane] = arg;
  warp.mask[lane] = mask;
  warp.arrived_mask |= 1u << lane;
  if (++warp.arrived == warp.live) {
    complete_warp(block, w);
  } else {
    block.state[i] = fiber_at_warp;
    yield(block);
  }
  return warp.result[lane];
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
inline void grid_sync(GridGroup) { detail::barrier(false, true); }
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
// For checks in emitted code (debug mode): reports a failure of the launch, as detail::fail does, and
// returns, so the caller goes on with a harmless value.
inline void report_failure(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline void report_failure(const char* format, ...) {
  va_list args;
  va_start(args, format);
  detail::vfail(*detail::current_block, format, args);
  va_end(args);
}

// A kernel's raise: the launch fails with the exception (host_raised), its message saying where, as Numba's debug
// mode does: "In function 'f', file F, line L, column C, tid=[x, y, z] ctaid=[x, y, z]: message". The range
// stops at once, through its trap (the guarded() frame reports nothing more); a caller that lends no trap gets
// back here, and the emitted code ends the thread.
inline void raise_exception(const HostThread& thread, const RaiseSite& site) {
  detail::HostBlock& block = *detail::current_block;
  if (detail::fail_as(block, host_raised, JIASU_RAISE_FORMAT, site.function, site.file, site.line, site.column,
                      thread.threadIdx.x, thread.threadIdx.y, thread.threadIdx.z, thread.blockIdx.x,
                      thread.blockIdx.y, thread.blockIdx.z, *site.message ? ": " : "", site.message))
    block.error->exception = site.exception;
  if (HostTrap* trap = block.trap) {
    trap->signal = -1;
    siglongjmp(trap->jump, 1);
  }
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
// site: which activemask() call of the kernel (lanes in different branches reach different ones); the
// emitted code calls JIASU_ACTIVEMASK(), which numbers the call sites.
inline unsigned activemask(int site = 0) {
  return static_cast<unsigned>(detail::warp_exchange(detail::WarpOp::active, 0xffffffffu, 0, 0, site));
}
#define JIASU_ACTIVEMASK() ::jiasu::activemask(__COUNTER__ + 1)

// Runs the blocks of a launch; body(thread) runs one thread of the kernel. Failures go to launch->error
// (see HostLaunch): nothing here throws or aborts (unless error is null).
class HostBlocks {
 public:
  static constexpr long long base_stack_bytes = host_fiber_stack_bytes;

  explicit HostBlocks(const HostLaunch* launch) : launch_(*launch), previous_(detail::current_block) {
    thread_.gridDim = {launch_.grid[0], launch_.grid[1], launch_.grid[2]};
    thread_.blockDim = {launch_.block[0], launch_.block[1], launch_.block[2]};
    threads_ = launch_.block[0] * launch_.block[1] * launch_.block[2];
    state_.error = launch_.error;
    state_.access_log = launch_.access_log;
    detail::current_block = &state_;
    __atomic_store_n(&detail::stop_flag, launch_.stop ? launch_.stop : &detail::no_stop, __ATOMIC_RELAXED);
    if (launch_.shared_bytes > 0) {
      state_.shared_bytes = launch_.shared_bytes;
      state_.dynamic_shared = static_cast<unsigned char*>(aligned_alloc(64, (launch_.shared_bytes + 63) / 64 * 64));
      if (!state_.dynamic_shared)
        detail::fail(state_, "out of memory: no room for %lld bytes of dynamic shared memory", launch_.shared_bytes);
    }
  }
  ~HostBlocks() {
    detail::current_block = previous_;
    free(state_.dynamic_shared);
    free(state_.contexts);
    free(state_.threads);
    free(state_.state);
    free(state_.warps);
  }
  HostBlocks(const HostBlocks&) = delete;
  HostBlocks& operator=(const HostBlocks&) = delete;

  // Each block once: the emitted kernel loops over the block's threads itself (thread loops).
  template <typename Body>
  void run_blocks(Body& body) {
    guarded([](HostBlocks& self, void* f) {
      for (long long b = self.launch_.block_begin; b < self.launch_.block_end && !self.stopped(); ++b) {
        detail::poll_stop();
        self.thread_.blockIdx = self.state_.block_index = self.block_index(b);
        self.thread_.threadIdx = {0, 0, 0};
        (*static_cast<Body*>(f))(static_cast<const HostThread&>(self.thread_));
      }
    }, &body);
  }

  // Threads as fibers that switch at barriers and warp operations.
  template <typename Body>
  void run_fibers(Body& body, long long array_bytes) {
    if (threads_ <= 0 || launch_.block_begin >= launch_.block_end || stopped() || !allocate_fibers(array_bytes))
      return;
    state_.invoke = [](void* f, const HostThread& thread) { (*static_cast<Body*>(f))(thread); };
    state_.body = &body;
    guarded([](HostBlocks& self, void*) { self.fiber_blocks(); }, nullptr);
  }

 private:
  // The blocks of the range, each as fibers (run_fibers prepared them).
  void fiber_blocks() {
    const detail::FiberStarter starter;
    for (long long b = launch_.block_begin; b < launch_.block_end && !stopped(); ++b) {
      detail::poll_stop();
      state_.block_index = block_index(b);
      for (long long i = 0; i < threads_; ++i) {
        state_.threads[i].blockIdx = state_.block_index;
        starter.prepare(state_.contexts[i], static_cast<unsigned char*>(stacks_) + i * slot_ + page_,
                        static_cast<size_t>(stack_bytes_), &detail::fiber_main);
        state_.state[i] = detail::fiber_ready;
      }
      for (long long w = 0; w < state_.warp_count; ++w) {
        detail::HostWarp& warp = state_.warps[w];
        warp.live = static_cast<int>((w + 1) * 32 <= threads_ ? 32 : threads_ - w * 32);
        warp.arrived = 0;
        warp.arrived_mask = 0;
      }
      state_.running = threads_;
      state_.arrived = state_.votes = state_.grid_arrived = 0;
      state_.scan_warp = state_.scan_next = 0;
      state_.scan_resumed = false;
      for (;;) {  // one phase: every warp runs until its lanes wait at the barrier or have ended
        const long long next = detail::next_fiber(state_);
        if (next >= 0) {  // back here when the phase is over
          state_.current = next;
          detail::fiber_switch(state_.scheduler, state_.contexts[next]);
        }
        if (state_.failed || state_.running == 0 || !grid_barrier_opens()) break;
        state_.opened_arrived = state_.arrived;  // every running fiber waits at the barrier: open it
        state_.opened_votes = state_.votes;
        state_.arrived = state_.votes = 0;
        for (long long i = 0; i < threads_; ++i)
          if (state_.state[i] == detail::fiber_at_barrier) state_.state[i] = detail::fiber_ready;
        state_.scan_warp = state_.scan_next = 0;
      }
    }
  }

  // Every running fiber waits at a barrier: at a grid barrier, until every block of the grid has reached it
  // (grid_sync). False when the block stops there instead (it failed, or another block did).
  bool grid_barrier_opens() {
    if (state_.grid_arrived == 0) return true;
    const HostDim3& b = state_.block_index;
    if (state_.grid_arrived != state_.arrived) {
      detail::fail(state_, "deadlock in block (%lld, %lld, %lld): %lld threads wait at a grid barrier (g.sync()) and "
                   "%lld at a block barrier (syncthreads); the threads of a block meet at the same barrier",
                   b.x, b.y, b.z, state_.grid_arrived, state_.arrived - state_.grid_arrived);
      return false;
    }
    state_.grid_arrived = 0;
    if (!launch_.grid_sync) {
      detail::fail(state_, "a grid barrier (g.sync()) in a launch that is not cooperative");
      return false;
    }
    const long long answer = launch_.grid_sync(launch_.grid_barrier);
    if (answer == grid_opened) return true;
    if (answer == grid_interrupted) {
      detail::stop_now();  // leaves through the trap, which reports it; without one, reported here
      detail::fail_as(state_, host_interrupted, "interrupted (Ctrl-C) in block (%lld, %lld, %lld)", b.x, b.y, b.z);
    } else if (answer > 0) {
      detail::fail(state_, "deadlock: block (%lld, %lld, %lld) waits at a grid barrier (g.sync()) that %lld block%s of "
                   "the grid ended without reaching; every block of the grid must reach it", b.x, b.y, b.z, answer,
                   answer == 1 ? "" : "s");
    }
    state_.failed = true;  // grid_failed: another block failed, and the launch reports that
    return false;
  }

  // Runs run(*this, context) with this OS thread's trap armed: a memory fault, or Ctrl-C, in a kernel ends
  // it, as a failure of the launch. Nothing run() changes is read after a jump but through memory.
  void guarded(void (*run)(HostBlocks&, void*), void* context) {
    HostTrap trap;
    if (!launch_.arm) {  // a caller that lends no trap: faults end the process
      run(*this, context);
      return;
    }
    if (sigsetjmp(trap.jump, 0) == 0) {
      state_.trap = &trap;
      launch_.arm(&trap);
      run(*this, context);
      launch_.arm(nullptr);
      state_.trap = nullptr;
      return;
    }
    launch_.arm(nullptr);
    state_.trap = nullptr;
    if (trap.signal < 0) return;  // the kernel raised (raise_exception): reported already
    const HostDim3& b = state_.block_index;
    if (trap.signal == 0) {
      detail::fail_as(state_, host_interrupted, "interrupted (Ctrl-C) in block (%lld, %lld, %lld)", b.x, b.y, b.z);
      return;
    }
    const char* what = trap.signal == SIGSEGV ? "an invalid memory access (SIGSEGV)"
                       : trap.signal == SIGBUS ? "a bus error (SIGBUS)"
                                               : "an arithmetic fault (SIGFPE)";
    // Near address 0 with no dynamic shared memory: most likely a shared array of size 0 used without it.
    const bool no_dynamic = launch_.shared_bytes == 0 && reinterpret_cast<unsigned long>(trap.address) < (1ul << 20);
    detail::fail_as(state_, host_fault,
                    "%s at address %p in block (%lld, %lld, %lld): an index out of bounds, or a stack or shared "
                    "array too large?%s @jiasu.kernel(debug=True) checks every index",
                    what, trap.address, b.x, b.y, b.z,
                    no_dynamic ? " This launch has no dynamic shared memory, which a shared array of shape 0 needs "
                                 "(the launch's shared memory argument, k[grid, block, stream, bytes])."
                               : "");
  }

  HostDim3 block_index(long long b) const {
    return {b % launch_.grid[0], b / launch_.grid[0] % launch_.grid[1], b / (launch_.grid[0] * launch_.grid[1])};
  }
  // This block failed, or another block of the launch did.
  bool stopped() const {
    return state_.failed || (state_.error && __atomic_load_n(&state_.error->failed, __ATOMIC_RELAXED));
  }
  bool allocate_fibers(long long array_bytes) {
    page_ = sysconf(_SC_PAGESIZE);
    const bool sized = array_bytes >= 0 && array_bytes <= (1LL << 40);  // more is no room anyway
    stack_bytes_ = sized ? (base_stack_bytes + array_bytes + page_ - 1) / page_ * page_ : array_bytes;
    slot_ = stack_bytes_ + page_;  // a guard page below each stack
    if (sized && launch_.fiber_stacks) {
      stacks_ = launch_.fiber_stacks(threads_, &slot_);  // slots may come larger: the stacks get the room
      stack_bytes_ = slot_ - page_;
    }
    state_.warp_count = (threads_ + 31) / 32;
    state_.contexts = static_cast<detail::FiberContext*>(calloc(static_cast<size_t>(threads_), sizeof(detail::FiberContext)));
    state_.threads = static_cast<HostThread*>(calloc(static_cast<size_t>(threads_), sizeof(HostThread)));
    state_.state = static_cast<unsigned char*>(calloc(static_cast<size_t>(threads_), 1));
    state_.warps = static_cast<detail::HostWarp*>(calloc(static_cast<size_t>(state_.warp_count), sizeof(detail::HostWarp)));
    if (!stacks_ || !state_.contexts || !state_.threads || !state_.state || !state_.warps) {
      detail::fail(state_, "out of memory: no room for the fiber stacks of a block of %lld threads (%lld KiB each)",
                   threads_, stack_bytes_ / 1024);
      return false;
    }
    state_.thread_count = threads_;
    for (long long i = 0; i < threads_; ++i) {  // only blockIdx changes from block to block
      HostThread& t = state_.threads[i];
      t = thread_;
      t.threadIdx = {i % launch_.block[0], i / launch_.block[0] % launch_.block[1], i / (launch_.block[0] * launch_.block[1])};
    }
    return true;
  }

  HostLaunch launch_;
  detail::HostBlock* previous_;
  detail::HostBlock state_;
  HostThread thread_{};
  long long threads_ = 0, page_ = 0, stack_bytes_ = 0, slot_ = 0;
  void* stacks_ = nullptr;  // lent: valid until the entry point returns
};

}  // namespace jiasu
