// Array methods that make views inside kernels: a.reshape(shape) and a.view(dtype). Run on the CPU, compiled by
// NVRTC, and their errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "emit_cuda_test_support.hpp"
#include "host_test_support.hpp"

namespace jiasu {
namespace {

using emit_test::compile_error;
using emit_test::EmitCuda;
using fe::Type;
using host_test::view;
using testing::array;
using testing::python;

constexpr const char* kKernel =
    "def k(a, n, r):\n"
    "    m = a.reshape((n, -1))\n"
    "    r[0] = m.shape[1]\n"
    "    r[1] = m[1, 2]\n"
    "    w = a[2:6].view(np.int16)\n"  // a strided view's last axis: contiguous here
    "    r[2] = w.shape[0]\n"
    "    r[3] = w[1]\n"
    "    b = a.view(np.uint8)\n"
    "    r[4] = b.size\n";

std::vector<Type> signature() { return {array(DType::Int32), testing::scalar(DType::Int64), array(DType::Int64)}; }

TEST(ArrayMethods, ReshapeAndViewShareTheArraysMemory) {
  auto kernel = compile_host_kernel(fe::check(python(kKernel), signature()));
  std::vector<int32_t> a(12);
  for (int i = 0; i < 12; ++i) a[i] = 1000 * i + 65537 * (i % 3);
  std::vector<long long> r(5, -1);
  auto av = view(a);
  auto rv = view(r);
  long long n = 3;
  void* params[] = {&av, &n, &rv};
  kernel->launch({1, 1, 1}, {1, 1, 1}, params, 0);
  int16_t halves[8];
  std::memcpy(halves, &a[2], sizeof halves);
  EXPECT_EQ(r, (std::vector<long long>{4, a[6], 8, halves[1], 48}));
}

TEST_F(EmitCuda, ReshapeAndViewCompileForTheGpu) { compile(kKernel, signature()); }

TEST(ArrayMethods, Errors) {
  auto error = [](const std::string& line) {
    return compile_error("def k(a, r):\n    " + line + "\n", {array(DType::Int32), array(DType::Int64)});
  };
  EXPECT_EQ(error("r[0] = a[::2].reshape(2, 2)[0, 0]"),
            "2:12: reshape() needs a C-contiguous array, not array(int32, 1d, A) (a view made by slicing is not known "
            "to be contiguous)");
  EXPECT_EQ(error("r[0] = a.reshape(2.0, 3)[0, 0]"),
            "2:22: reshape() takes a shape: integers or a tuple of them, not float64");
  EXPECT_EQ(error("r[0] = a.reshape(())[0]"), "2:12: reshape() to a 0-d array is not supported in kernels");
  EXPECT_EQ(error("r[0] = a.view(3)[0]"), "2:19: view() takes a dtype such as np.int32, not int64");
  EXPECT_EQ(error("r[0] = a.view(np.int8, 1)[0]"), "2:12: view() takes one argument, a dtype");
}

}  // namespace
}  // namespace jiasu
