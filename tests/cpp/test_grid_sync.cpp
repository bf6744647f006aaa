// Cooperative groups' grid barrier (jiasu.cg.this_grid(), g.sync()): what the checker makes of it (the kernel is
// cooperative, through device functions too), the CUDA C++ it becomes (compiled by the real NVRTC), and the CPU
// backend's cooperative launches, which run every block at once and refuse a grid larger than fits, as a GPU does.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "emit/emit.hpp"
#include "emit_cuda_test_support.hpp"
#include "frontend_test_support.hpp"
#include "host_test_support.hpp"
#include "support/cuda_limits.hpp"
#include "support/error.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using fe::Type;
using fe::TypeKind;
using host_test::view;
using testing::array;
using testing::device_function;
using testing::Globals;
using testing::python;

// Step 1 every thread writes its index, the grid syncs, step 2 every thread reads the element of the opposite
// thread, which another block wrote: right only if the barrier held every block back until all had written.
const char* const kReverse =
    "@jiasu.kernel\n"
    "def reverse(a, out):\n"
    "    i = jiasu.grid(1)\n"
    "    a[i] = i\n"
    "    g = jiasu.cg.this_grid()\n"
    "    g.sync()\n"
    "    out[i] = a[a.size - 1 - i]\n";

std::vector<Type> two_int64_arrays() { return {array(DType::Int64), array(DType::Int64)}; }

fe::Program checked(const std::string& text, Globals globals = {}) {
  return fe::check(python(text, std::move(globals)), two_int64_arrays());
}

std::string compile_error(const std::string& text) {
  try {
    checked(text);
  } catch (const fe::CompileError& e) {
    return e.what();
  }
  return "no CompileError";
}

TEST(GridSync, TheCheckerMarksKernelsThatTakeTheGridCooperative) {
  fe::Program program = checked(kReverse);
  EXPECT_TRUE(program.kernel().cooperative);
  EXPECT_EQ(program.kernel().locals[1].type.kind, TypeKind::GridGroup);
  EXPECT_EQ(to_string(program.kernel().locals[1].type), "grid_group");
  // In one expression, and through a device function that takes the group or the grid itself.
  Globals globals;
  globals["wait"] = device_function("def wait(g):\n    g.sync()\n");
  globals["take"] = device_function("def take():\n    jiasu.cg.this_grid()\n");
  EXPECT_TRUE(checked("def k(a, out):\n    jiasu.cg.this_grid().sync()\n").kernel().cooperative);
  EXPECT_TRUE(checked("def k(a, out):\n    wait(jiasu.cg.this_grid())\n", globals).kernel().cooperative);
  EXPECT_TRUE(checked("def k(a, out):\n    take()\n", globals).kernel().cooperative);
  EXPECT_FALSE(checked("def k(a, out):\n    jiasu.syncthreads()\n").kernel().cooperative);
}

TEST(GridSync, MisusesOfAGridGroupAreCompileErrors) {
  EXPECT_NE(compile_error("def k(a, out):\n    g = jiasu.cg.this_grid()\n    g.sync(1)\n").find("sync() takes no "
                                                                                             "arguments"),
            std::string::npos);
  EXPECT_NE(compile_error("def k(a, out):\n    g = jiasu.cg.this_grid()\n    a[0] = g.size\n")
                .find("'size' is not an attribute of a grid group (cg.this_grid()): its one method is sync()"),
            std::string::npos);
  EXPECT_NE(compile_error("def k(a, out):\n    jiasu.cg.this_grid().sync\n")
                .find("sync is a method of a grid group: call it, sync()"),
            std::string::npos);
  EXPECT_NE(compile_error("def k(a, out):\n    g = jiasu.cg.this_grid()\n    g = 1\n")
                .find("variable 'g' was grid_group (line 2) but is assigned int64 here"),
            std::string::npos);
  EXPECT_NE(compile_error("def k(a, out):\n    jiasu.cg.this_grid(1)\n").find("takes 0 arguments (1 given)"),
            std::string::npos);
}

TEST(GridSync, CudaCodeWaitsAtTheRuntimesGridBarrier) {
  fe::Program program = checked(kReverse);
  const emit::EmittedKernel kernel = emit::emit_cuda(program);
  EXPECT_TRUE(kernel.cooperative);
  const std::string code = kernel.source.substr(emit::cuda_runtime_header().size());
  EXPECT_NE(code.find("  jiasu::GridGroup g_{};\n"), std::string::npos) << code;
  EXPECT_NE(code.find("  g_ = jiasu::this_grid();\n  // k.py:6  g.sync()\n  jiasu::grid_sync(g_);\n"),
            std::string::npos) << code;
  EXPECT_FALSE(emit::emit_cuda(checked("def k(a, out):\n    a[0] = 1\n")).cooperative);
}

using GridSyncCuda = emit_test::EmitCuda;
TEST_F(GridSyncCuda, NvrtcCompilesTheBarrierToAnAtomicCounter) {
  const std::string code = ptx(emitted(kReverse, two_int64_arrays()));
  EXPECT_TRUE(emit_test::contains(code, ".global .align 4 .u32 _ZN5jiasu18grid_sync_arrivalsE;")) << code;
  EXPECT_TRUE(emit_test::contains(code, "atom.global.add.u32")) << code;
}

// The whole CPU path: emitted host C++, compiled, launched cooperatively by HostKernel over more blocks than the
// pool has threads, and refused above what fits.
TEST(GridSync, CpuLaunchesRunEveryBlockAtOnce) {
  auto kernel = compile_host_kernel(checked(kReverse));
  ASSERT_TRUE(kernel->cooperative());
  const unsigned threads = 32;
  const long long fit = kernel->max_cooperative_blocks({threads, 1, 1});
  ASSERT_GE(fit, 2);
  const unsigned blocks = static_cast<unsigned>(std::min<long long>(fit, 64));
  const long long n = 1LL * blocks * threads;
  std::vector<int64_t> a(n, -1), out(n, -1);
  auto av = view(a);
  auto ov = view(out);
  void* params[] = {&av, &ov};
  kernel->launch({blocks, 1, 1}, {threads, 1, 1}, params, 0);
  for (long long i = 0; i < n; ++i) ASSERT_EQ(out[i], n - 1 - i) << "thread " << i;

  try {
    kernel->launch({static_cast<unsigned>(fit + 1), 1, 1}, {threads, 1, 1}, params, 0);
    ADD_FAILURE() << "a grid larger than fits ran";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.code(), cu::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    EXPECT_NE(std::string(e.what()).find("a grid of " + std::to_string(fit + 1) + " blocks is more than the " +
                                         std::to_string(fit) + " blocks of 32 threads that fit"),
              std::string::npos) << e.what();
  }
}

// As many blocks as a GPU with one multiprocessor per CPU holds, fewer when the fibers' stacks would take too
// much, none of more threads than a block may have; the shape of the block does not matter, only its threads.
TEST(GridSync, CpuCooperativeLimits) {
  const long long cpus = host_thread_count();
  for (long long threads : {32LL, 256LL, 1024LL}) {
    const long long per_cpu = std::min<long long>(kBlocksPerMultiprocessor, kThreadsPerMultiprocessor / threads);
    EXPECT_LE(host_cooperative_blocks(threads, 0), std::min(cpus * per_cpu, kMaxCooperativeBlocks)) << threads;
    EXPECT_GE(host_cooperative_blocks(threads, 0), 1) << threads;
  }
  if (cpus * 8 * 256 <= 8192)  // under Linux's default memory-map limit, which allows 16382 fibers
    EXPECT_EQ(host_cooperative_blocks(256, 0), cpus * 8);
  EXPECT_GE(host_cooperative_blocks(32, 0), host_cooperative_blocks(256, 0));
  const long long large = host_cooperative_blocks(1024, kLocalBytesPerThread);
  EXPECT_GE(large, 1);
  EXPECT_LE(large * 1024 * kLocalBytesPerThread, kCooperativeStackBytes);
  EXPECT_EQ(host_cooperative_blocks(1025, 0), 0);
  auto kernel = compile_host_kernel(checked(kReverse));
  EXPECT_EQ(kernel->max_cooperative_blocks({256, 1, 1}), kernel->max_cooperative_blocks({16, 16, 1}));
  EXPECT_EQ(kernel->max_cooperative_blocks({256, 1, 1}), kernel->max_cooperative_blocks({16, 4, 4}));
}

}  // namespace
}  // namespace jiasu
