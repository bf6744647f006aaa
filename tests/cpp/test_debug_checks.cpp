// Debug mode's checks (emit/runtime/debug_checks.h): the message both backends give for each failure, the checks
// the CUDA emitter writes (compiled to PTX by NVRTC), and what the CPU backend's launch raises.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/host_kernel.hpp"
#include "emit/emit.hpp"
#include "emit/runtime/device_error.h"
#include "emit_cuda_test_support.hpp"
#include "frontend_test_support.hpp"
#include "host_test_support.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

using fe::Type;
using host_test::view;
using testing::array;
using testing::python;
using testing::scalar;

DeviceError placed(int kind) {
  DeviceError e{};
  e.kind = kind;
  snprintf(e.file, sizeof e.file, "%s", "k.py");
  e.line = 7;
  e.column = 12;
  e.thread[0] = 3, e.thread[1] = 1, e.thread[2] = 0;
  e.block[0] = 5, e.block[1] = 0, e.block[2] = 2;
  return e;
}

std::string formatted(const DeviceError& e, size_t size = 1024) {
  std::vector<char> out(size);
  format_check_failure(e, out.data(), out.size());
  return out.data();
}

TEST(DebugCheckMessage, IndexOutOfBoundsInTwoDimensions) {
  DeviceError e = placed(error_index);
  snprintf(e.array, sizeof e.array, "%s", "grid");
  e.rank = 2, e.axis = 1;
  e.index[0] = -2, e.index[1] = 9;
  e.shape[0] = 4, e.shape[1] = 9;
  EXPECT_EQ(formatted(e), "index 9 is out of bounds for axis 1 with size 9: grid[-2, 9] of shape (4, 9) at k.py:7:12 "
                          "(thread (3, 1, 0) of block (5, 0, 2))");
}

TEST(DebugCheckMessage, OneDimensionalShapeHasItsComma) {
  DeviceError e = placed(error_index);
  snprintf(e.array, sizeof e.array, "%s", "x");
  e.rank = 1, e.axis = 0;
  e.index[0] = -9, e.shape[0] = 8;
  EXPECT_EQ(formatted(e), "index -9 is out of bounds for axis 0 with size 8: x[-9] of shape (8,) at k.py:7:12 "
                          "(thread (3, 1, 0) of block (5, 0, 2))");
}

TEST(DebugCheckMessage, TupleIndexAndZeroDivision) {
  DeviceError e = placed(error_tuple_index);
  e.rank = 1, e.index[0] = -4, e.shape[0] = 3;
  EXPECT_EQ(formatted(e), "tuple index out of range: index -4 of a tuple of 3 items at k.py:7:12 "
                          "(thread (3, 1, 0) of block (5, 0, 2))");
  EXPECT_EQ(formatted(placed(error_zero_division)),
            "integer division or modulo by zero at k.py:7:12 (thread (3, 1, 0) of block (5, 0, 2))");
}

TEST(DebugCheckMessage, TruncatesToTheBuffer) {
  DeviceError e = placed(error_index);
  e.rank = kMaxErrorRank, e.axis = kMaxErrorRank - 1;
  for (int k = 0; k < kMaxErrorRank; ++k) e.index[k] = e.shape[k] = 1000000000000LL;
  const std::string full = formatted(e, 8192);
  EXPECT_NE(full.find("of block (5, 0, 2))"), std::string::npos);
  const std::string cut = formatted(e, 100);
  EXPECT_EQ(cut.size(), 99u);
  EXPECT_EQ(cut, full.substr(0, 99));
}

// The CUDA emitter's checks: every element access, tuple index and integer divisor, each with its place; none
// without debug mode, and none for a float divisor. The module compiles (NVRTC) and keeps the record.
using DebugCuda = emit_test::EmitCuda;
TEST_F(DebugCuda, EmitsTheChecksWithTheirPlaces) {
  const char* const source =
      "def k(x, out, n):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i + 1] // n + x[i] % n\n"
      "        out[i] //= n\n"
      "        y = x.shape[-n]\n";
  const std::vector<Type> signature = {array(DType::Int32), array(DType::Int32), scalar(DType::Int32)};
  const emit::EmittedKernel debug = emitted(source, signature, {}, true);
  const std::string& text = debug.source;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::at_checked(jiasu::CheckSite{\"x\", \"k.py\", 4, 18}, x_, ")) << text;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::at_checked(jiasu::CheckSite{\"out\", \"k.py\", 4, 9}, out_, ")) << text;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::divisor_checked(jiasu::CheckSite{\"\", \"k.py\", 4, 18}, ")) << text;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::divisor_checked(jiasu::CheckSite{\"\", \"k.py\", 4, 34}, ")) << text;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::divisor_checked(jiasu::CheckSite{\"\", \"k.py\", 5, 9}, ")) << text;
  EXPECT_TRUE(emit_test::contains(text, "jiasu::tuple_item_checked<long long, 1>(jiasu::CheckSite{\"tuple\", \"k.py\", 6, 13}"))
      << text;
  EXPECT_TRUE(emit_test::contains(ptx(debug), "jiasu_device_error"));
  const std::string plain = emitted(source, signature).source;
  EXPECT_FALSE(emit_test::contains(plain, "jiasu::CheckSite{"));
  EXPECT_TRUE(emit_test::contains(plain, "jiasu::floordiv("));
  ptx(emitted(source, signature));

  const char* const real = "def k(x, n):\n    x[0] = x[1] // n + x[2] % n\n";
  const std::string floats = emitted(real, {array(DType::Float64), scalar(DType::Float64)}, {}, true).source;
  EXPECT_FALSE(emit_test::contains(floats, "jiasu::divisor_checked("));
  EXPECT_TRUE(emit_test::contains(floats, "jiasu::at_checked("));
}

TEST_F(DebugCuda, ChecksInDeviceFunctionsAndTwoDimensionalArraysCompile) {
  testing::Globals globals;
  globals["cell"] = testing::device_function(
      "@jiasu.func\n"
      "def cell(a, i, j):\n"
      "    return a[i, j] // 2\n");
  const char* const source =
      "def k(a, out):\n"
      "    i, j = jiasu.grid(2)\n"
      "    out[i, j] = cell(a, j, i)\n";
  const emit::EmittedKernel debug = emitted(source, {array(DType::Int64, 2), array(DType::Int64, 2)}, globals, true);
  EXPECT_TRUE(emit_test::contains(debug.source, "jiasu::at_checked(jiasu::CheckSite{\"a\", \"k.py\", 3, 12}, a_, i_, j_)"))
      << debug.source;
  EXPECT_TRUE(emit_test::contains(debug.source, "jiasu::at_checked(jiasu::CheckSite{\"out\", \"k.py\", 3, 5}, out_, "))
      << debug.source;
  EXPECT_FALSE(emit_test::contains(debug.source, "jiasu::divisor_checked("));  // a constant divisor: nothing to check
  ptx(debug);
}

// The CPU backend: integer // and % by zero raise ZeroDivisionError (DivisionByZero) in debug mode, naming the
// kernel, the place and the thread; without debug mode they give 0, as NumPy does.
TEST(DebugHost, IntegerDivisionByZero) {
  const char* const source =
      "@jiasu.kernel\n"
      "def divide(x, out, n):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i] % (n - i)\n";
  const std::vector<Type> signature = {array(DType::Int64), array(DType::Int64), scalar(DType::Int64)};
  std::vector<long long> x = {7, 8, 9, 10}, out(4, -1);
  auto xv = view(x);
  auto ov = view(out);
  long long n = 2;  // n - i is 0 for thread 2
  void* params[] = {&xv, &ov, &n};
  auto plain = compile_host_kernel(fe::check(python(source), signature), false);
  plain->launch({1, 1, 1}, {4, 1, 1}, params, 0);
  EXPECT_EQ(out, (std::vector<long long>{1, 0, 0, 0}));  // 9 % 0 == 0, and 10 % -1 == 0 as in Python
  auto checked = compile_host_kernel(fe::check(python(source), signature), true);
  try {
    checked->launch({2, 1, 1}, {2, 1, 1}, params, 0);
    FAIL() << "no error";
  } catch (const DivisionByZero& e) {
    EXPECT_EQ(std::string(e.what()), "kernel 'divide' (debug): integer division or modulo by zero at k.py:5:18 "
                                     "(thread (0, 0, 0) of block (1, 0, 0))");
  }
}

}  // namespace
}  // namespace jiasu
