// Numba's cuda.libdevice functions in kernels: the builtin rows every math row makes, the types check() gives, what
// it refuses, and every function compiled by the real NVRTC. Their values are tested from Python
// (tests/python/kernels/test_kernels_libdevice.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emit_cuda_test_support.hpp"
#include "frontend_test_support.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using namespace emit_test;

TEST(CheckLibdevice, EveryMathFunctionHasItsFloatAndDoubleFunction) {
  for (const char* name : {"sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
                           "atan", "sinh", "cosh", "tanh", "erf", "erfc", "fabs", "exp2", "acosh", "asinh", "atanh",
                           "cbrt", "lgamma", "atan2", "pow", "fmod", "copysign", "hypot", "remainder", "nextafter"}) {
    const int math = fe::find_builtin(std::string("math.") + name);
    const int single = fe::find_builtin(std::string("jiasu.libdevice.") + name + "f");
    const int twice = fe::find_builtin(std::string("jiasu.libdevice.") + name);
    ASSERT_GE(math, 0) << name;
    ASSERT_GE(single, 0) << name;
    ASSERT_GE(twice, 0) << name;
    const bool two = fe::builtin(math).rule == fe::BuiltinRule::FloatMath2;
    EXPECT_EQ(fe::builtin(single).rule, two ? fe::BuiltinRule::Float32Math2 : fe::BuiltinRule::Float32Math1) << name;
    EXPECT_EQ(fe::builtin(twice).rule, two ? fe::BuiltinRule::Float64Math2 : fe::BuiltinRule::Float64Math1) << name;
    for (int row : {single, twice}) {  // the math row's runtime function, whose overloads take float and double
      EXPECT_STREQ(fe::builtin(row).cuda, fe::builtin(math).cuda) << name;
      EXPECT_STREQ(fe::builtin(row).host, fe::builtin(math).host) << name;
    }
  }
}

TEST(CheckLibdevice, TheNameSaysThePrecision) {
  Globals globals{{"cuda", module_value("jiasu")}};
  auto result = [&](const std::string& expr, Type arg) {
    return checked("def k(x, y):\n    y[0] = " + expr + "\n", {arg, array(DType::Float64)}, globals)
        .kernel().body[0]->value->type;
  };
  EXPECT_EQ(result("cuda.libdevice.sinf(x[0])", array(DType::Float64)), scalar(DType::Float32));
  EXPECT_EQ(result("jiasu.libdevice.sin(x[0])", array(DType::Float32)), scalar(DType::Float64));
  EXPECT_EQ(result("cuda.libdevice.fmaf(x[0], 2, 1.5)", array(DType::Int32)), scalar(DType::Float32));
  EXPECT_EQ(result("cuda.libdevice.fast_powf(x[0], x[1])", array(DType::Float64)), scalar(DType::Float32));
  EXPECT_EQ(result("cuda.libdevice.round(x[0])", array(DType::Float16)), scalar(DType::Float64));
  // `from numba.cuda import libdevice`: the global is the namespace itself
  GlobalValue libdevice;
  libdevice.kind = GlobalValue::Builtin;
  libdevice.name = "jiasu.libdevice";
  EXPECT_EQ(checked("def k(x):\n    x[0] = libdevice.rsqrtf(x[1])\n", {array(DType::Float32)}, {{"libdevice", libdevice}})
                .kernel().body[0]->value->type,
            scalar(DType::Float32));
}

TEST(CheckLibdevice, RefusesOtherArgumentsThanLibdevicesFunctionTakes) {
  Globals globals{{"cuda", module_value("jiasu")}};
  const std::vector<Type> sig = {array(DType::Float32), scalar(DType::Complex128)};
  EXPECT_EQ(compile_error("def k(x, z):\n    x[0] = cuda.libdevice.powf(x[1])\n", sig, globals),
            "2:12: cuda.libdevice.powf() takes 2 arguments (1 given)");
  EXPECT_EQ(compile_error("def k(x, z):\n    x[0] = cuda.libdevice.sin(z)\n", sig, globals),
            "2:31: cuda.libdevice.sin() needs a real number, not complex128");
  EXPECT_EQ(compile_error("def k(x, z):\n    x[0] = cuda.libdevice.sincosf(x[1])\n", sig, globals),
            "2:27: 'jiasu.libdevice.sincosf' is not supported in kernels");
}

TEST_F(EmitCuda, EveryLibdeviceFunctionCompiles) {
  std::string text = "def k(x, out):\n    i = jiasu.grid(1)\n    v = x[i]\n";
  int count = 0;
  for (int i = 0; i < fe::builtin_count(); ++i) {
    const std::string path = fe::builtin(i).path;
    if (path.rfind("jiasu.libdevice.", 0) != 0) continue;
    std::string args = "v";
    switch (fe::builtin(i).rule) {
      case fe::BuiltinRule::Float32Math2: case fe::BuiltinRule::Float64Math2: args = "v, x[0]"; break;
      case fe::BuiltinRule::Float32Math3: case fe::BuiltinRule::Float64Math3: args = "v, x[0], x[1]"; break;
      default: break;
    }
    text += "    out[i] += " + path + "(" + args + ")\n";
    ++count;
  }
  EXPECT_GE(count, 2 * 32 + 2 * 12 + 10);
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string code = compile(text, {array(d), array(d)});
    EXPECT_TRUE(contains(code, "__expf((float)v_)") || contains(code, "__expf(v_)")) << code;
    EXPECT_TRUE(contains(code, "jiasu::libdevice::rsqrt_(")) << code;
  }
}

}  // namespace
}  // namespace jiasu
