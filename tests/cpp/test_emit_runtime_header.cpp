// The runtime header's Python semantics, checked on the host. The header is plain C++ outside
// #ifdef __CUDACC__, so the simplest faithful test is the real thing: write it to a file, compile a small
// program that includes it with the host C++ compiler ($CXX, else c++), run it, and read the failures it
// prints. (Its device half runs in test_emit_cuda.cpp's GPU tests.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "emit/emit.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;

// Expected values are what Python 3 / NumPy 2 give (NumPy's where they differ). same() is bitwise for floats (so -0.0 != 0.0) with
// every nan equal.
constexpr const char* kHostChecks = R"(
#include <cstdio>
#include <cstring>
#include <limits>
static int failures = 0;
template <typename T> bool same(T a, T b) {
  if constexpr (jiasu::traits<T>::is_float) return (a != a && b != b) || std::memcmp(&a, &b, sizeof a) == 0;
  else return a == b;
}
#define CHECK(expr, expected)                                                          \
  do {                                                                                 \
    auto value = (expr);                                                               \
    if (!same(value, static_cast<decltype(value)>(expected))) {                        \
      std::printf("%s gave %.17g, expected %.17g\n", #expr, (double)value, (double)(expected)); \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)
using namespace jiasu;
const double inf_ = std::numeric_limits<double>::infinity(), nan_ = std::numeric_limits<double>::quiet_NaN();
int main() {
  // integer // and %: floor toward -inf, remainder with the divisor's sign; / 0 gives 0
  CHECK(floordiv(-7LL, 2LL), -4);  CHECK(mod(-7LL, 2LL), 1);
  CHECK(floordiv(7LL, -2LL), -4);  CHECK(mod(7LL, -2LL), -1);
  CHECK(floordiv(-7LL, -2LL), 3);  CHECK(mod(-7LL, -2LL), -1);
  CHECK(floordiv(7, 2), 3);        CHECK(mod(7, 2), 1);
  CHECK(floordiv(5, 0), 0);        CHECK(mod(5, 0), 0);
  CHECK(floordiv((signed char)-128, (signed char)-1), -128);  CHECK(mod((signed char)-128, (signed char)-1), 0);
  CHECK(floordiv(std::numeric_limits<long long>::min(), -1LL), std::numeric_limits<long long>::min());
  CHECK(floordiv(7u, 2u), 3u);     CHECK(mod(7u, 0u), 0u);   CHECK(floordiv(7ULL, 0ULL), 0ULL);
  // float // and %: NumPy's npy_divmod
  CHECK(floordiv(-7.5, 2.0), -4.0);  CHECK(mod(-7.5, 2.0), 0.5);
  CHECK(floordiv(7.5, -2.0), -4.0);  CHECK(mod(7.5, -2.0), -0.5);
  CHECK(floordiv(-7.5f, 2.0f), -4.0f);  CHECK(mod(-7.5f, 2.0f), 0.5f);
  CHECK(floordiv(0.1, 0.01), 10.0);  CHECK(mod(0.1, 0.01), 3.469446951953614e-18);
  CHECK(mod(-0.0, 2.0), 0.0);        CHECK(mod(6.0, -3.0), -0.0);  CHECK(floordiv(6.0, -3.0), -2.0);
  CHECK(floordiv(5.0, inf_), 0.0);   CHECK(floordiv(-5.0, inf_), -1.0);  CHECK(mod(-5.0, inf_), inf_);
  CHECK(floordiv(1.0, 0.0), inf_);   CHECK(floordiv(-1.0, 0.0), -inf_);
  CHECK(floordiv(0.0, 0.0), nan_);   CHECK(mod(1.0, 0.0), nan_);
  // **
  CHECK(power(2LL, 10LL), 1024);   CHECK(power(-3LL, 3LL), -27);  CHECK(power(2LL, 63LL), std::numeric_limits<long long>::min());
  CHECK(power((signed char)3, (signed char)5), -13);  CHECK(power(7u, 0u), 1u);
  CHECK(power(2LL, -1LL), 0);      CHECK(power(1LL, -5LL), 1);    CHECK(power(-1LL, -3LL), -1);  CHECK(power(-1LL, -4LL), 1);
  CHECK(power(2.0, 0.5), 1.4142135623730951);  CHECK(power(2.0f, 3.0f), 8.0f);
  // << and >> (NumPy: a shift by the width or more gives 0, or -1 for a negative a >> b)
  CHECK(lshift((signed char)1, (signed char)7), -128);  CHECK(lshift((signed char)1, (signed char)8), 0);
  CHECK(lshift(1LL, 64LL), 0);  CHECK(lshift(1LL, -1LL), 0);  CHECK(lshift(-1, 4), -16);
  CHECK(rshift(-8, 1), -4);  CHECK(rshift(-1, 40), -1);  CHECK(rshift(5, 40), 0);  CHECK(rshift(0x80000000u, 31u), 1u);
  // round: half to even
  CHECK(round_(2.5), 2);  CHECK(round_(3.5), 4);  CHECK(round_(-2.5), -2);  CHECK(round_(0.5), 0);
  CHECK(round_(1.5), 2);  CHECK(round_(-0.5), 0);  CHECK(round_(2.5f), 2);  CHECK(round_(7), 7);
  CHECK(round_(2.675, 2), 2.68);  // NumPy's; Python says 2.67  CHECK(round_(1234.5678, -2), 1200.0);  CHECK(round_(0.125, 2), 0.12);
  CHECK(round_(1e300, 400), 1e300);
  CHECK(round_(1250LL, -2), 1200);  CHECK(round_(1350LL, -2), 1400);  CHECK(round_(-1250LL, -2), -1200);
  CHECK(round_(-1350LL, -2), -1400);  CHECK(round_(15LL, -1), 20);  CHECK(round_(25LL, -1), 20);
  CHECK(round_(25u, -1), 20u);  CHECK(round_(7LL, 3), 7);  CHECK(round_(7LL, -30), 0);
  // min, max, abs
  CHECK(min_(nan_, 1.0), nan_);  CHECK(min_(1.0, nan_), 1.0);  CHECK(max_(2LL, 3LL), 3);  CHECK(max_(-0.0, 0.0), -0.0);
  CHECK(abs_((signed char)-128), -128);  CHECK(abs_(-0.0), 0.0);  CHECK(abs_(-3LL), 3);  CHECK(abs_(-2.5f), 2.5f);
  // casts and Python's truth
  CHECK(cast<bool>(nan_), true);  CHECK(cast<bool>(0.0), false);  CHECK(cast<bool>(-3), true);
  CHECK(cast<int>(-2.7), -2);  CHECK(cast<unsigned char>(300), 44);  CHECK(cast<double>(true), 1.0);
  // math
  CHECK(floor_(-2.5), -3);  CHECK(ceil_(-2.5), -2);  CHECK(trunc_(-2.5), -2);  CHECK(floor_(7), 7);  CHECK(ceil_(2.5f), 3);
  CHECK(isnan_(nan_), true);  CHECK(isnan_(3), false);  CHECK(isinf_(-inf_), true);  CHECK(isfinite_(inf_), false);
  CHECK(isfinite_(2.0f), true);  CHECK(sqrt_(2.0), 1.4142135623730951);  CHECK(sqrt_(-1.0), nan_);
  CHECK(fmod_(-7.5, 2.0), -1.5);  CHECK(copysign_(3.0f, -0.0f), -3.0f);  CHECK(fma_(2.0, 3.0, 1.0), 7.0);
  CHECK(inf<float>(), std::numeric_limits<float>::infinity());  CHECK(isnan_(nan<double>()), true);
  // libdevice's functions that no math row gives: the roundings keep the float type, round goes half away from zero
  CHECK(libdevice::round_(2.5), 3.0);  CHECK(libdevice::round_(-2.5f), -3.0f);  CHECK(libdevice::rint_(2.5), 2.0);
  CHECK(libdevice::floor_(-2.5f), -3.0f);  CHECK(libdevice::ceil_(-0.5), -0.0);  CHECK(libdevice::trunc_(7.9f), 7.0f);
  CHECK(libdevice::fdim_(1.0, 3.0), 0.0);  CHECK(libdevice::fdim_(3.0f, 1.0f), 2.0f);  CHECK(libdevice::fmax_(nan_, 1.0), 1.0);
  CHECK(libdevice::fmin_(2.0f, -1.0f), -1.0f);  CHECK(libdevice::rsqrt_(4.0), 0.5);  CHECK(libdevice::rsqrt_(0.25f), 2.0f);
  CHECK(libdevice::exp10_(3.0), 1000.0);  CHECK(libdevice::exp10_(2.0f), 100.0f);  CHECK(libdevice::fdivide_(1.0f, 4.0f), 0.25f);
  // arrays: row-major offsets, byte strides, negative indices from the end
  float data[6] = {0, 1, 2, 3, 4, 5};
  ArrayC<float, 2> c = {data, {2, 3}};
  CHECK(at(c, 1, 0), 3.0f);  CHECK(at(c, -1, -1), 5.0f);  CHECK(at(c, 0, -3), 0.0f);  CHECK(size(c), 6);
  ArrayA<float, 2> transposed = {data, {3, 2}, {4, 12}};
  CHECK(at(transposed, 2, 1), 5.0f);  CHECK(at(transposed, -1, 0), 2.0f);  CHECK(size(transposed), 6);
  ArrayC<float, 0> scalar = {data + 4};
  CHECK(at(scalar), 4.0f);  CHECK(size(scalar), 1);
  at(c, 0, 1) = 9;
  CHECK(data[1], 9.0f);
  return failures == 0 ? 0 : 1;
}
)";

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(EmitRuntimeHeader, PythonSemanticsOnTheHost) {
  const char* cxx_env = std::getenv("CXX");
  std::string cxx = cxx_env && *cxx_env ? cxx_env : "c++";
  if (std::system((cxx + " --version > /dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "no host C++ compiler";

  fs::path dir = fs::temp_directory_path() / ("jiasu_header_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "jiasu_runtime.h") << emit::host_runtime_header();
  std::ofstream(dir / "checks.cpp") << "#include \"jiasu_runtime.h\"\n" << kHostChecks;
  std::string build = cxx + " -std=c++17 -Wall -Wextra -Werror -O1 -o " + (dir / "checks").string() + " " +
                      (dir / "checks.cpp").string() + " > " + (dir / "build.log").string() + " 2>&1";
  int built = std::system(build.c_str());
  ASSERT_EQ(built, 0) << read_file(dir / "build.log");
  int ran = std::system(((dir / "checks").string() + " > " + (dir / "run.log").string() + " 2>&1").c_str());
  EXPECT_EQ(ran, 0) << read_file(dir / "run.log");
  fs::remove_all(dir);
}


}  // namespace
}  // namespace jiasu
