// External device functions (Numba's cuda.declare_device with link=): the front end types their calls, both
// emitters declare them and compile the linked CUDA C++ into the kernel; NVRTC compiles the result (no GPU
// needed) and the CPU backend runs it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "emit/emit.hpp"
#include "emit_cuda_test_support.hpp"
#include "frontend/token.hpp"
#include "host_test_support.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using fe::GlobalValue;
using fe::Type;
using host_test::view;
using testing::array;
using testing::Globals;
using testing::python;
using testing::scalar;

constexpr const char* kLinked =
    "extern \"C\" __device__ int mul_f32(float* result, float a, float b) {\n"
    "  *result = a * b;\n"
    "  return 0;\n"
    "}\n"
    "extern \"C\" __device__ double hypot_c(double a, double b) { return sqrt(a * a + b * b); }\n";

GlobalValue external(const std::string& name, std::vector<DType> params, DType result, bool c_abi) {
  auto f = std::make_shared<fe::ExternalFunction>();
  f->name = name;
  f->params = std::move(params);
  f->result = result;
  f->c_abi = c_abi;
  f->link = {{"/src/functions.cu", kLinked}};
  GlobalValue g;
  g.kind = GlobalValue::External;
  g.external = std::move(f);
  return g;
}

Globals externals() {
  return {{"mul", external("mul_f32", {DType::Float32, DType::Float32}, DType::Float32, false)},
          {"hyp", external("hypot_c", {DType::Float64, DType::Float64}, DType::Float64, true)}};
}

// The ints are converted to the declared float parameters, as Numba converts them; both files' functions are
// used, and the file (named by both) is linked once.
constexpr const char* kKernel =
    "def k(r, x, y, n):\n"
    "    i = jiasu.grid(1)\n"
    "    if i < r.size:\n"
    "        r[i] = mul(x[i], y[i]) + hyp(n, 4)\n";
const std::vector<Type> kSignature = {array(DType::Float64), array(DType::Float32), array(DType::Float32),
                                      scalar(DType::Int64)};

TEST(External, HostBackendRunsTheLinkedCode) {
  fe::Program program = fe::check(python(kKernel, externals()), kSignature);
  ASSERT_EQ(program.externals.size(), 2u);
  ASSERT_EQ(program.linked.size(), 1u);
  auto kernel = compile_host_kernel(program);
  std::vector<double> r(70, -1.0);
  std::vector<float> x(70), y(70);
  for (int i = 0; i < 70; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  auto rv = view(r);
  auto xv = view(x);
  auto yv = view(y);
  long long n = 3;
  void* params[] = {&rv, &xv, &yv, &n};
  kernel->launch({3, 1, 1}, {32, 1, 1}, params, 0);
  for (int i = 0; i < 70; ++i) EXPECT_EQ(r[i], static_cast<double>(x[i] * y[i]) + 5.0) << i;
}

using ExternalCuda = emit_test::EmitCuda;
TEST_F(ExternalCuda, NvrtcCompilesTheDeclarationsAndTheLinkedFile) {
  const std::string code = compile(kKernel, kSignature, externals());
  EXPECT_TRUE(emit_test::contains(code, "extern \"C\" __device__ int mul_f32(float*, float, float);")) << code;
  EXPECT_TRUE(emit_test::contains(code, "#line 1 \"/src/functions.cu\"\n")) << code;
  // A definition that does not match the declaration is reported in the linked file.
  Globals wrong = externals();
  std::const_pointer_cast<fe::ExternalFunction>(wrong["mul"].external)->params = {DType::Float64, DType::Float64};
  const std::string log = nvrtc_error(kKernel, kSignature, wrong);
  EXPECT_TRUE(emit_test::contains(log, "/src/functions.cu(1)")) << log;
}

TEST(External, CallsAreChecked) {
  auto error = [](const std::string& call) {
    try {
      fe::check(python("def k(r, x):\n    r[0] = " + call + "\n", externals()), {array(DType::Float32), array(DType::Float32)});
    } catch (const fe::CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("mul(x[0])").find("mul() takes 2 arguments (1 given)"), std::string::npos) << error("mul(x[0])");
  EXPECT_NE(error("mul(x, x[0])").find("mul()"), std::string::npos) << error("mul(x, x[0])");
  EXPECT_NE(error("mul(x[0], b=1)").find("takes no keyword arguments"), std::string::npos);
  Globals unlinked = externals();  // mul_f32x is not mul_f32: the name must appear as a word
  std::const_pointer_cast<fe::ExternalFunction>(unlinked["mul"].external)->name = "mul_f32x";
  try {
    fe::check(python("def k(r, x):\n    r[0] = mul(x[0], x[1])\n", unlinked), {array(DType::Float32), array(DType::Float32)});
    ADD_FAILURE() << "no error";
  } catch (const fe::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("mul() is the external function 'mul_f32x', which no linked file names"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jiasu
