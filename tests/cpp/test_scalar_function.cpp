// Scalar functions (what @jiasu.vectorize and @jiasu.reduce are made of): typed for scalar arguments by the
// front end, emitted as a device function for CUDA and a plain function for the host, and compiled by both.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "emit/emit.hpp"
#include "emit_cuda_test_support.hpp"
#include "frontend/source.hpp"
#include "frontend_test_support.hpp"
#include "test_support.hpp"
#include "toolchain/host_compiler.hpp"

namespace jiasu {
namespace {

using testing::python;
using testing::message_of;
using testing::scalar;

const char* kFused =
    "def fused(x, y):\n"
    "    return x * 2.0 + y\n";

DType result_of(const std::string& text, std::vector<fe::Type> signature, testing::Globals globals = {}) {
  return fe::check_scalar_function(python(text, std::move(globals)), signature).functions.back()->return_type.dtype;
}

TEST(ScalarFunction, TakesNumPysResultType) {
  EXPECT_EQ(result_of(kFused, {scalar(DType::Float32), scalar(DType::Float32)}), DType::Float32);  // 2.0 is weak
  EXPECT_EQ(result_of(kFused, {scalar(DType::Int32), scalar(DType::Int32)}), DType::Float64);
  EXPECT_EQ(result_of(kFused, {scalar(DType::Float16), scalar(DType::Float32)}), DType::Float32);
  EXPECT_EQ(result_of("def f(a, b):\n    return a if a > b else b\n", {scalar(DType::Int8), scalar(DType::Int16)}),
            DType::Int16);
  EXPECT_EQ(result_of("def f(a):\n    return math.sqrt(a)\n", {scalar(DType::Float32)}), DType::Float32);
  EXPECT_EQ(result_of("def f(a, b):\n    return a < b\n", {scalar(DType::Float64), scalar(DType::Float64)}),
            DType::Bool);
}

TEST(ScalarFunction, CallsDeviceFunctions) {
  testing::Globals globals{{"twice", testing::device_function("def twice(v):\n    return v + v\n")}};
  fe::Program program =
      fe::check_scalar_function(python("def f(a):\n    return twice(a) + 1\n", globals), {scalar(DType::Int64)});
  ASSERT_EQ(program.functions.size(), 2u);
  EXPECT_EQ(program.functions.back()->return_type.dtype, DType::Int64);
}

TEST(ScalarFunction, MustReturnOneNumber) {
  auto error = [](const std::string& text, std::vector<fe::Type> signature) {
    return message_of<fe::CompileError>([&] { fe::check_scalar_function(python(text), signature); });
  };
  std::string nothing = error("def f(a):\n    a = a + 1\n", {scalar(DType::Float32)});
  EXPECT_NE(nothing.find("must return one number, but 'f' returns nothing"), std::string::npos) << nothing;
  std::string pair = error("def f(a):\n    return a, a\n", {scalar(DType::Float32)});
  EXPECT_NE(pair.find("k.py:2:12: error: device functions can only return numbers"), std::string::npos) << pair;
  std::string array = error("def f(a):\n    return a\n", {testing::array(DType::Float32)});
  EXPECT_NE(array.find("takes numbers, but parameter 'a' is"), std::string::npos) << array;
  EXPECT_THROW(fe::check_scalar_function(python(kFused), {scalar(DType::Float32)}), BadArgument);  // one short
}

TEST(ScalarFunction, CompilesForTheHostAndComputesNumPysValue) {
  fe::Program program = fe::check_scalar_function(python(kFused), {scalar(DType::Float32), scalar(DType::Float32)});
  emit::EmittedFunction fn = emit::emit_host_function(program);
  EXPECT_EQ(fn.result, DType::Float32);
  HostCompileRequest request;
  request.source = emit::host_runtime_header() + fn.definitions +
                   "extern \"C\" float probe(float x, float y) { jiasu::HostThread t{}; return " + fn.name +
                   "(t, x, y); }\n";
  request.options = {"-Wall"};
  std::shared_ptr<HostLibrary> library = compile_host(request, nullptr);
  auto probe = reinterpret_cast<float (*)(float, float)>(library->symbol("probe"));
  EXPECT_EQ(probe(1.5f, 0.25f), 3.25f);
  EXPECT_EQ(probe(-2.0f, 1.0f), -3.0f);
}

using ScalarFunctionCuda = emit_test::EmitCuda;
TEST_F(ScalarFunctionCuda, CompilesWithNvrtc) {
  fe::Program program = fe::check_scalar_function(python("def f(a, b):\n    return math.exp(a) // b\n"),
                                                  {scalar(DType::Float16), scalar(DType::Int32)});
  emit::EmittedFunction fn = emit::emit_cuda_function(program);
  EXPECT_EQ(fn.result, DType::Float64);  // float16 with int32 promotes to float64, as in NumPy
  emit::EmittedKernel probe;
  probe.source = emit::cuda_runtime_header() + fn.definitions +
                 "extern \"C\" __global__ void probe(double* out, __half a, int b) { *out = " + fn.name + "(a, b); }\n";
  probe.entry_name = "probe";
  ptx(probe);
}

}  // namespace
}  // namespace jiasu
