// Views of arrays made by methods and attributes inside kernels: a.reshape(shape), a.view(dtype), and a.real /
// a.imag of a complex array. Run on the CPU, compiled by NVRTC, and their errors.
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

constexpr const char* kParts =
    "def k(z, r):\n"
    "    im = z.imag\n"
    "    r[0] = z.real[1] + im[1]\n"
    "    jiasu.atomic.add(z.real, 0, 1.0)\n"
    "    im[0] = -im[0]\n";

TEST(ArrayMethods, RealAndImagViewTheParts) {
  const std::vector<Type> signature = {array(DType::Complex128), array(DType::Float64)};
  auto kernel = compile_host_kernel(fe::check(python(kParts), signature));
  std::vector<double> z = {1.5, -2.0, 3.0, 4.25};  // 1.5-2j, 3+4.25j: parts in place, real first
  std::vector<double> r(1);
  ArrayC<double, 1> zv{z.data(), {2}};
  auto rv = view(r);
  void* params[] = {&zv, &rv};
  kernel->launch({1, 1, 1}, {1, 1, 1}, params, 0);
  EXPECT_EQ(r[0], 3.0 + 4.25);
  EXPECT_EQ(z, (std::vector<double>{2.5, 2.0, 3.0, 4.25}));
}

TEST_F(EmitCuda, RealAndImagCompileForTheGpu) { compile(kParts, {array(DType::Complex64), array(DType::Float32)}); }

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
