// print() in kernels: what check() accepts and refuses, and the one printf call both emitters write (the CUDA code
// compiled to PTX by the real NVRTC). Running it is tested from Python (tests/python/kernels/test_kernels_print.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emit_cuda_test_support.hpp"
#include "frontend_test_support.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using namespace emit_test;

TEST(CheckPrint, TakesNumbersBoolsAndStringLiteralsAndMarksThePrintingFunction) {
  Globals globals{{"report", device_function("def report(x):\n    print('x is', x)\n    return x\n")}};
  fe::Program program = checked("def k(a, n, b):\n    print()\n    print(a[0], n, b, 'done', np.float16(1), 2.5)\n"
                                "    a[0] = report(a[1])\n",
                                {array(DType::Float32), scalar(DType::UInt8), scalar(DType::Bool)}, globals);
  ASSERT_EQ(program.functions.size(), 2u);
  EXPECT_TRUE(program.functions[0]->prints);  // report
  EXPECT_TRUE(program.kernel().prints);
  EXPECT_EQ(program.kernel().body[0]->value->type.kind, fe::TypeKind::Void);
  EXPECT_FALSE(checked("def k(a):\n    a[0] = 1\n", {array(DType::Float32)}).kernel().prints);
}

TEST(CheckPrint, RefusesWhatNumbaCannotPrint) {
  const std::vector<Type> sig = {array(DType::Float32), scalar(DType::Complex64)};
  EXPECT_EQ(compile_error("def k(a, z):\n    print(a[0], sep='')\n", sig),
            "2:21: print() in a kernel takes no keyword arguments ('sep='): it prints its values separated by spaces, "
            "then a newline");
  EXPECT_EQ(compile_error("def k(a, z):\n    print(z)\n", sig),
            "2:11: print() in a kernel cannot print complex64 values, as Numba's CUDA target cannot: print their .real "
            "and .imag");
  EXPECT_EQ(compile_error("def k(a, z):\n    print(1, a)\n", sig),
            "2:14: print() in a kernel prints numbers, bools and string literals, not array(float32, 1d, C)");
  std::string many = "def k(a, z):\n    print(";
  for (int i = 0; i < 33; ++i) many += std::to_string(i) + ", ";
  EXPECT_EQ(compile_error(many + ")\n", sig), "2:129: print() in a kernel prints at most 32 values (CUDA's printf limit)");
  EXPECT_EQ(compile_error("def k(a, z):\n    print('a' + 'b')\n", sig),
            "2:11: a string in a kernel can only be a value print() prints, or the message of an exception raised");
  EXPECT_EQ(compile_error("def k(a, z):\n    s = 'a'\n", sig), "2:9: strings are not supported in jiasu kernels");
  EXPECT_EQ(compile_error("def k(a, z):\n    a[0] = print(1)\n", sig),
            "2:5: cannot store void into an element of array(float32, 1d, C) 'a'");
}

TEST_F(EmitCuda, PrintIsOnePrintfInNumbasFormat) {
  const std::string code = compile(
      "def k(a, u, b, h):\n"
      "    print()\n"
      "    print('a[0] =', a[0], u, b, h, -3, '100%', 'tab\\tend')\n",
      {array(DType::Float32), scalar(DType::UInt16), scalar(DType::Bool), scalar(DType::Float16)});
  EXPECT_TRUE(contains(code, "printf(\"\\012\");")) << code;
  EXPECT_TRUE(contains(code, "printf(\"a[0] = %f %llu %s %f %lld 100%% tab\\011end\\012\", (double)jiasu::at(a_, 0LL), "
                             "(unsigned long long)u_, (b_ ? \"True\" : \"False\"), jiasu::cast<double>(h_), (-3LL));"))
      << code;
}

TEST(EmitHostPrint, IsOnePrintfToo) {
  fe::Program program = checked("def k(n):\n    print('n', n, n > 2)\n", {scalar(DType::Int32)});
  const std::string code = emit::emit_host(program, false).source;
  EXPECT_TRUE(contains(code, "printf(\"n %lld %s\\012\", (long long)n_, ((n_ > 2) ? \"True\" : \"False\"));")) << code;
}

}  // namespace
}  // namespace jiasu
