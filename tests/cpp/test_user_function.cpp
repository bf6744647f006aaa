// @jiasu.vectorize and @jiasu.reduce in the core: a scalar Python function's loops on the CPU backend (built by
// the host compiler), its generated CUDA kernels under NVRTC, and the reduction's in-order fold.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "emit/emit.hpp"
#include "frontend_test_support.hpp"
#include "ops/elementwise_cuda.hpp"
#include "ops/user_function.hpp"
#include "ops_test_support.hpp"
#include "test_support.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu::ops {
namespace {

using testing::host_array;
using testing::of;
using testing::values_of;

UserFunction function(const std::string& text, int arity) {
  return UserFunction(testing::python(text), "f", arity);
}

TEST(UserFunction, ElementwiseOnTheCpuWithNumpysResultType) {
  UserFunction fused = function("def f(x, y):\n    return x * 2.0 + y\n", 2);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {0.5f, 0.25f, 0, -1, -2, -3};
  const Array a = host_array(x, DType::Float32, {2, 3}), b = host_array(y, DType::Float32, {2, 3});
  Operand in[] = {of(a), of(b)};
  const Array r = fused.call(in, 2);
  ASSERT_EQ(r.dtype(), DType::Float32);  // 2.0 is a weak literal beside float32
  std::vector<float> got = values_of<float>(r);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], x[i] * 2.0f + y[i]) << i;
  // A strided (transposed) operand and a weak Python int: int32 beside an int stays int32 in, float64 out.
  std::vector<int32_t> n = {1, 2, 3, 4, 5, 6};
  const Array m = host_array(n, DType::Int32, {2, 3});
  const Array t = m.view(transpose_layout(m.layout(), {}));
  Operand mixed[2] = {of(t)};
  mixed[1].scalar.dtype = DType::Int64;
  mixed[1].scalar.weak = true;
  mixed[1].scalar.i = 7;
  const Array s = fused.call(mixed, 2);
  ASSERT_EQ(s.dtype(), DType::Float64);
  ASSERT_EQ(s.shape(), (Shape{3, 2}));
  std::vector<double> sv = values_of<double>(s);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(sv[i * 2 + j], n[j * 3 + i] * 2.0 + 7) << i << "," << j;
}

TEST(UserFunction, ReductionFoldsInOrder) {
  // "The first nonzero" is associative but not commutative: only an in-order fold gives it for every line.
  UserFunction first = function("def f(a, b):\n    return a if a != 0 else b\n", 2);
  UserFunction add = function("def f(a, b):\n    return a + b\n", 2);
  std::vector<int64_t> v(5 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 1 ? static_cast<int64_t>(i) : 0;
  const Array a = host_array(v, DType::Int64, {5, 7});
  auto first_nonzero = [&](int start, int step, int n) {
    for (int k = 0; k < n; ++k)
      if (v[start + k * step]) return v[start + k * step];
    return int64_t(0);
  };
  std::vector<int64_t> rows = values_of<int64_t>(first.reduce(a, {1}, false, std::nullopt));
  std::vector<int64_t> cols = values_of<int64_t>(first.reduce(a, {0}, false, std::nullopt));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rows[i], first_nonzero(i * 7, 1, 7)) << i;
  for (int j = 0; j < 7; ++j) EXPECT_EQ(cols[j], first_nonzero(j, 7, 5)) << j;
  int64_t total = 0;
  for (int64_t x : v) total += x;
  const Array all = add.reduce(a, {0, 1}, true, std::nullopt);
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(values_of<int64_t>(all)[0], total);
  Scalar init;
  init.dtype = DType::Int64;
  init.weak = true;
  init.i = 1000;
  EXPECT_EQ(values_of<int64_t>(add.reduce(a, {0, 1}, false, init))[0], total + 1000);
  // Empty: init, or NumPy's error without one.
  const Array empty = Array::empty({0, 3}, DType::Int64, kCpuDevice);
  EXPECT_EQ(values_of<int64_t>(add.reduce(empty, {0}, false, init)), (std::vector<int64_t>{1000, 1000, 1000}));
  EXPECT_THROW(add.reduce(empty, {0}, false, std::nullopt), BadValue);
  EXPECT_THROW(function("def f(a):\n    return a\n", 1).reduce(a, {0}, false, std::nullopt), BadArgument);
}

// The generated GPU kernels call the user's device function: they compile for every layout class.
TEST(UserFunction, CudaKernelsCompileWithNvrtc) {
  if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  const fe::Program program = fe::check_scalar_function(
      testing::python("def f(x, y):\n    return math.sqrt(x) if x > y else y * 2\n"),
      {testing::scalar(DType::Float16), testing::scalar(DType::Float32)});
  const emit::EmittedFunction fn = emit::emit_cuda_function(program);
  CustomLoop loop;
  loop.name = "f";
  loop.arity = 2;
  loop.loop[0] = DType::Float16;
  loop.loop[1] = DType::Float32;
  loop.result = fn.result;
  loop.cuda_definitions = fn.definitions;
  loop.cuda_function = fn.name;
  loop.id = 1;
  EXPECT_EQ(loop.result, DType::Float32);
  ElementwiseSpec spec;
  spec.custom = &loop;
  spec.inputs = 2;
  spec.in[0] = spec.loop[0] = DType::Float16;
  spec.in[1] = spec.loop[1] = DType::Float32;
  spec.out = DType::Float32;
  for (int variant = 0; variant < 3; ++variant) {
    spec.layout = variant == 0 ? LayoutClass::Contiguous : LayoutClass::Strided;
    spec.vector = 4;
    spec.ndim = 2;
    spec.wide_index = variant == 2;
    spec.scalar[1] = variant == 1;
    CudaCompileRequest request;
    request.source = elementwise_cuda_source(spec);
    request.kind = CodeKind::Ptx;
    try {
      EXPECT_NE(compile_cuda(request, nullptr).image.find(kElementwiseKernelName), std::string::npos);
    } catch (const NvrtcError& e) {
      ADD_FAILURE() << e.log() << "\n" << request.source.substr(ops_cuda_header().size());
    }
  }
  // Another loop id is another kernel.
  const uint64_t key = spec.key();
  loop.id = 2;
  EXPECT_NE(spec.key(), key);
}

}  // namespace
}  // namespace jiasu::ops
