// The CPU backend's runtime (cpu/runtime/), compiled into this test as a real header rather than through a
// generated kernel, so that the build's compiler and sanitizers check the scheduler itself: fibers, barriers,
// warp rendezvous, the fault trap, Ctrl-C's stop flag, and the lent fiber stacks.
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
