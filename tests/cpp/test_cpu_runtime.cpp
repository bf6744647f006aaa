// The CPU backend's runtime (cpu/runtime/), compiled into this test as a real header rather than through a
// generated kernel, so that the build's compiler and sanitizers check the scheduler itself: fibers, barriers,
// warp rendezvous, grid barriers of cooperative launches, the fault trap, Ctrl-C's stop flag, and the lent fiber
// stacks.
#include "cpu/runtime/host_runtime.h"  // first: it must come before any system header

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "cpu/host_trap.hpp"

namespace jiasu {
namespace {

struct Launcher {
  HostError error{};
  volatile sig_atomic_t stop = 0;
  HostLaunch launch_of(long long blocks, long long threads, long long shared_bytes = 0) {
    return HostLaunch{{blocks, 1, 1}, {threads, 1, 1}, 0, blocks, shared_bytes, &error, &lend_fiber_stacks,
                      &arm_host_trap, &stop};
  }
  std::string failure() const { return error.failed ? std::string(error.message) : std::string(); }
};

// A block reduction over fibers: every thread adds its value into shared memory between barriers, then warp
// shuffles sum within each warp; each block's result is the sum of its thread indices.
TEST(CpuRuntime, FibersMeetAtBarriersAndWarpOperations) {
  constexpr long long kBlocks = 5, kThreads = 128;
  std::vector<long long> block_sums(kBlocks, -1), warp_sums(kBlocks * kThreads, -1);
  Launcher run;
  const HostLaunch launch = run.launch_of(kBlocks, kThreads);
  HostBlocks blocks(&launch);
  auto body = [&](const HostThread& t) {
    static thread_local long long shared[kThreads];
    shared[t.threadIdx.x] = t.threadIdx.x;
    syncthreads();
    for (long long stride = kThreads / 2; stride > 0; stride /= 2) {
      if (t.threadIdx.x < stride)
        shared[t.threadIdx.x] += shared[t.threadIdx.x + stride];
      syncthreads();
    }
    long long v = t.threadIdx.x;
    for (int delta = 16; delta > 0; delta /= 2) v += shfl_down_sync(0xffffffffu, v, delta);
    warp_sums[t.blockIdx.x * kThreads + t.threadIdx.x] = v;
    if (t.threadIdx.x == 0) block_sums[t.blockIdx.x] = shared[0];
  };
  blocks.run_fibers(body, 0);
  ASSERT_EQ(run.failure(), "");
  for (long long b = 0; b < kBlocks; ++b) {
    EXPECT_EQ(block_sums[b], kThreads * (kThreads - 1) / 2) << "block " << b;
    for (long long w = 0; w < kThreads / 32; ++w)
      EXPECT_EQ(warp_sums[b * kThreads + w * 32], 32 * w * 32 + 31 * 32 / 2) << "warp " << w;
  }
}

// On the GPU the lanes of one branch reach activemask together; here too, although the other lanes reach a
// warp operation of their own first.
TEST(CpuRuntime, ActivemaskGivesTheLanesOfTheBranch) {
  std::vector<unsigned> masks(64, 0);
  Launcher run;
  const HostLaunch launch = run.launch_of(1, 64);
  HostBlocks blocks(&launch);
  auto body = [&](const HostThread& t) {
    const long long i = t.threadIdx.x;
    if (i % 2 == 0) masks[i] = activemask(1);
    else masks[i] = activemask(2);
    syncwarp();
  };
  blocks.run_fibers(body, 0);
  ASSERT_EQ(run.failure(), "");
  for (long long i = 0; i < 64; ++i) EXPECT_EQ(masks[i], i % 2 == 0 ? 0x55555555u : 0xAAAAAAAAu) << "thread " << i;
}

// A fault fails the launch with its address, in thread loops and in fibers, and the next launch runs.
TEST(CpuRuntime, AFaultFailsTheLaunchInsteadOfTheProcess) {
  volatile int* const bad = reinterpret_cast<volatile int*>(static_cast<uintptr_t>(64));
  for (bool fibers : {false, true}) {
    Launcher run;
    const HostLaunch launch = run.launch_of(3, 64);
    {
      HostBlocks blocks(&launch);
      auto body = [&](const HostThread& t) {
        if (t.blockIdx.x == 1 && t.threadIdx.x == (fibers ? 40 : 0)) *bad = 1;
      };
      if (fibers) blocks.run_fibers(body, 0);
      else blocks.run_blocks(body);
    }
    EXPECT_EQ(run.error.failed, host_fault);
    EXPECT_NE(run.failure().find("SIGSEGV) at address 0x40 in block (1, 0, 0)"), std::string::npos) << run.failure();
    Launcher again;
    const HostLaunch next = again.launch_of(2, 64);
    std::atomic<int> ran{0};
    HostBlocks blocks(&next);
    auto count = [&](const HostThread&) { ran += 1; };
    if (fibers) blocks.run_fibers(count, 0);
    else blocks.run_blocks(count);
    EXPECT_EQ(again.failure(), "");
    EXPECT_EQ(ran.load(), fibers ? 128 : 2);
  }
}

// A fiber that overflows its stack into the guard page below it is caught on the alternate signal stack.
TEST(CpuRuntime, AStackOverflowInAFiberIsCaught) {
  Launcher run;
  const HostLaunch launch = run.launch_of(1, 32);
  HostBlocks blocks(&launch);
  auto body = [&](const HostThread& t) {
    if (t.threadIdx.x != 3) return;
    volatile unsigned char big[HostBlocks::base_stack_bytes * 2];
    for (size_t i = 0; i < sizeof big; i += 4096) big[sizeof big - 1 - i] = 1;
    asm volatile("" : : "r"(big) : "memory");  // the array is used: its frame stays as large
  };
  blocks.run_fibers(body, 0);
  EXPECT_EQ(run.error.failed, host_fault) << run.failure();
}

// Ctrl-C's flag ends a kernel that would spin forever, in thread loops and in fibers.
TEST(CpuRuntime, TheStopFlagEndsASpinningKernel) {
  for (bool fibers : {false, true}) {
    Launcher run;
    const HostLaunch launch = run.launch_of(4, 32);
    std::thread pressing([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      run.stop = 1;
    });
    {
      HostBlocks blocks(&launch);
      auto spin = [&](const HostThread&) {
        for (;;) detail::poll_stop();
      };
      if (fibers) blocks.run_fibers(spin, 0);
      else blocks.run_blocks(spin);
    }
    pressing.join();
    EXPECT_EQ(run.error.failed, host_interrupted) << run.failure();
  }
}

// A cooperative launch of body: every block at once, each on an OS thread of its own (run_cooperative).
template <typename Body>
void run_grid(const HostLaunch& launch, Body& body) {
  void* params[] = {&body};
  run_cooperative(launch, [](const HostLaunch* l, void* const* p) {
    HostBlocks blocks(l);
    blocks.run_fibers(*static_cast<Body*>(p[0]), 0);
  }, params);
}

// The classic test of a grid barrier: every thread writes its index, the grid syncs, and every thread reads the
// element of the opposite thread, which another block wrote; again and again, with a second sync before each
// write. Blocks run on OS threads of their own, so without the barrier some would read before others wrote.
TEST(CpuRuntime, GridBarriersOrderTheBlocks) {
  constexpr long long kBlocks = 8, kThreads = 64, kN = kBlocks * kThreads, kRounds = 20;
  std::vector<long long> a(kN, -1), out(kN, -1);
  Launcher run;
  const HostLaunch launch = run.launch_of(kBlocks, kThreads);
  auto body = [&](const HostThread& t) {
    const long long i = t.blockIdx.x * kThreads + t.threadIdx.x;
    long long v = i;
    for (long long r = 0; r < kRounds; ++r) {
      a[i] = v;
      grid_sync(this_grid());
      v = a[kN - 1 - i] + 1;
      grid_sync(this_grid());
    }
    out[i] = v;
  };
  run_grid(launch, body);
  ASSERT_EQ(run.failure(), "");
  for (long long i = 0; i < kN; ++i) {
    long long from = i;  // each round takes the opposite thread's value and adds 1
    for (long long r = 0; r < kRounds; ++r) from = kN - 1 - from;
    ASSERT_EQ(out[i], from + kRounds) << "thread " << i;
  }
}

// A block that ends without reaching a grid barrier the others wait at is a deadlock, reported as one; so are
// threads of one block at a grid barrier and a block barrier.
TEST(CpuRuntime, GridBarrierDeadlocksAreReported) {
  Launcher run;
  const HostLaunch launch = run.launch_of(4, 32);
  auto early = [&](const HostThread& t) {
    if (t.blockIdx.x != 2) grid_sync(this_grid());
  };
  run_grid(launch, early);
  EXPECT_EQ(run.error.failed, host_launch_failed);
  EXPECT_NE(run.failure().find("waits at a grid barrier (g.sync()) that 1 block of the grid ended without reaching"),
            std::string::npos) << run.failure();

  Launcher mixed;
  const HostLaunch split = mixed.launch_of(3, 64);
  auto halves = [&](const HostThread& t) {
    if (t.threadIdx.x < 40) grid_sync(this_grid());
    else syncthreads();
  };
  run_grid(split, halves);
  EXPECT_NE(mixed.failure().find(": 40 threads wait at a grid barrier (g.sync()) and 24 at a block barrier"),
            std::string::npos) << mixed.failure();
}

// A block that fails (here a fault) releases the blocks waiting at a grid barrier, and the launch reports the
// fault; Ctrl-C does too, while the other blocks wait for a block that spins.
TEST(CpuRuntime, AFailureOrCtrlCReleasesTheGridBarrier) {
  volatile int* const bad = reinterpret_cast<volatile int*>(static_cast<uintptr_t>(64));
  Launcher run;
  const HostLaunch launch = run.launch_of(6, 32);
  auto faulting = [&](const HostThread& t) {
    if (t.blockIdx.x == 4 && t.threadIdx.x == 7) *bad = 1;
    grid_sync(this_grid());
  };
  run_grid(launch, faulting);
  EXPECT_EQ(run.error.failed, host_fault) << run.failure();
  EXPECT_NE(run.failure().find("in block (4, 0, 0)"), std::string::npos) << run.failure();

  Launcher stopped;
  const HostLaunch spinning = stopped.launch_of(5, 32);
  std::thread pressing([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stopped.stop = 1;
  });
  auto spin = [&](const HostThread& t) {
    if (t.blockIdx.x == 0)
      for (;;) detail::poll_stop();
    grid_sync(this_grid());
  };
  run_grid(spinning, spin);
  pressing.join();
  EXPECT_EQ(stopped.error.failed, host_interrupted) << stopped.failure();
}

// The lent stacks are usable memory after each way they grow and shrink (a temporary's destructor once
// unmapped them right after mapping).
TEST(CpuRuntime, LentFiberStacksStayMapped) {
  const long long page = sysconf(_SC_PAGESIZE);
  for (long long count : {4LL, 64LL, 8LL}) {
    for (long long bytes : {16 * page, 64 * page, 2 * page}) {
      long long got = bytes;
      auto* stacks = static_cast<unsigned char*>(lend_fiber_stacks(count, &got));
      ASSERT_NE(stacks, nullptr);
      ASSERT_GE(got, bytes);
      for (long long i = 0; i < count; ++i) {  // every stack but its guard page
        std::memset(stacks + i * got + page, 0x5a, static_cast<size_t>(got - page));
        EXPECT_EQ(stacks[i * got + got - 1], 0x5a);
      }
    }
  }
}

}  // namespace
}  // namespace jiasu
