// Numba's vector types in kernels (jiasu.float32x4, jiasu.int2, ...): namedtuples with fields x, y, z, w, made
// from numbers and other vectors; checked, emitted for both targets (NVRTC compiles it) and run on the CPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emit/emit.hpp"
#include "emit_cuda_test_support.hpp"
#include "host_test_support.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using fe::Type;
using host_test::view;
using testing::array;
using testing::python;

constexpr const char* kKernel =
    "def k(r, n):\n"
    "    a = jiasu.float32x2(1, 2.5)\n"
    "    b = jiasu.float4(a, n, jiasu.float32x1(0.25))\n"  // fancy: a vector, a number, a vector made here
    "    c = jiasu.int3(jiasu.int2(7, 8), 9)\n"
    "    d = jiasu.float64x2(b.w, c.z)\n"
    "    r[0] = b.x\n"
    "    r[1] = b.y\n"
    "    r[2] = b.z\n"
    "    r[3] = b.w\n"
    "    r[4] = c.x + c.y * c.z\n"
    "    r[5] = d.x + d.y\n";

const std::vector<Type> kSignature = {array(DType::Float64), testing::scalar(DType::Int64)};

TEST(VectorTypes, MadeFromNumbersAndVectors) {
  auto kernel = compile_host_kernel(fe::check(python(kKernel), kSignature));
  std::vector<double> r(6, -1.0);
  auto rv = view(r);
  long long n = 3;
  void* params[] = {&rv, &n};
  kernel->launch({1, 1, 1}, {1, 1, 1}, params, 0);
  EXPECT_EQ(r, (std::vector<double>{1.0, 2.5, 3.0, 0.25, 7 + 8 * 9, 9.25}));
}

using VectorTypesCuda = emit_test::EmitCuda;
TEST_F(VectorTypesCuda, NvrtcCompilesThem) { compile(kKernel, kSignature); }

TEST(VectorTypes, NamesAndErrors) {
  EXPECT_EQ(fe::vector_type_named("float32x4")->count, 4);
  EXPECT_EQ(fe::vector_type_named("ulong2")->dtype, DType::UInt64);
  EXPECT_FALSE(fe::vector_type_named("float32x5"));
  EXPECT_FALSE(fe::vector_type_named("float16x2"));
  EXPECT_FALSE(fe::vector_type_named("int8"));
  EXPECT_EQ(fe::vector_type_names().size(), 22u * 4);
  auto error = [](const std::string& body) {
    try {
      fe::check(python("def k(r):\n    " + body + "\n"), {array(DType::Float64)});
    } catch (const fe::CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("v = jiasu.float32x3(1, 2)").find("jiasu.float32x3() takes 3 components (numbers, or vectors of "
                                                    "them), but 2 were given"), std::string::npos)
      << error("v = jiasu.float32x3(1, 2)");
  EXPECT_NE(error("v = jiasu.int2(r, 1)").find("jiasu.int2()"), std::string::npos);
  EXPECT_NE(error("v = jiasu.int2(1, 2)\n    r[0] = v.z").find("'z' is not a field"), std::string::npos);
}

}  // namespace
}  // namespace jiasu
