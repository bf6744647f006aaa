// HostKernel::launch refuses blocks a CUDA GPU refuses (over 1024 threads, or z over 64): the emitted
// thread loops keep per-thread arrays of 1024 entries, which a larger block would overrun.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "cpu/host_kernel.hpp"
#include "runtime/driver.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using fe::Type;
using testing::python;

// The packing the entry point reads for a contiguous 1-d array (jiasu::ArrayC<T, 1>).
struct ArrayC1 { int* data; long long shape[1]; };

// Counts the threads of every block that ran.
std::shared_ptr<HostKernel> build_counter() {
  return compile_host_kernel(fe::check(python("@jiasu.kernel\n"
                                              "def count(total):\n"
                                              "    jiasu.atomic.add(total, 0, 1)\n"),
                                       {Type::array(DType::Int32, 1, true)}));
}

std::string refusal(unsigned x, unsigned y, unsigned z) {
  return "block (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
         ") exceeds the limit of CUDA GPUs (1024 threads, z <= 64), which the CPU backend keeps too";
}

TEST(HostBlockLimit, BlocksOverTheCudaLimitAreRefusedBeforeAnyRuns) {
  auto kernel = build_counter();
  std::vector<int> total(1, 0);
  ArrayC1 view{total.data(), {1}};
  void* params[] = {&view};
  const Dim3 refused[] = {
      {1025, 1, 1}, {1, 1025, 1}, {32, 32, 2}, {1, 1, 65}, {4, 4, 65},
      {2147483648u, 2147483648u, 4},  // a product of 2^64, which wraps to 0 when multiplied unchecked
      {0, 1, 65},                     // refused for its z before the zero dimension is noticed
  };
  for (const Dim3& block : refused) {
    try {
      kernel->launch({2, 1, 1}, block, params, 0);
      ADD_FAILURE() << "block (" << block.x << ", " << block.y << ", " << block.z << ") was launched";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.code(), cu::CUDA_ERROR_INVALID_VALUE);
      EXPECT_EQ(e.name(), "CUDA_ERROR_INVALID_VALUE");
      EXPECT_EQ(std::string(e.what()), refusal(block.x, block.y, block.z));
    }
  }
  EXPECT_EQ(total[0], 0);
}

TEST(HostBlockLimit, BlocksAtTheLimitRun) {
  auto kernel = build_counter();
  std::vector<int> total(1, 0);
  ArrayC1 view{total.data(), {1}};
  void* params[] = {&view};
  int expected = 0;
  for (const Dim3& block : {Dim3{1024, 1, 1}, Dim3{1, 1024, 1}, Dim3{32, 32, 1}, Dim3{16, 1, 64}, Dim3{1, 1, 64}}) {
    kernel->launch({3, 1, 1}, block, params, 0);
    expected += 3 * static_cast<int>(block.x * block.y * block.z);
    EXPECT_EQ(total[0], expected) << "block (" << block.x << ", " << block.y << ", " << block.z << ")";
  }
}

}  // namespace
}  // namespace jiasu
