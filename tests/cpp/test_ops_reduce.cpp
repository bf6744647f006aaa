// Reductions: axis handling and planning (pure metadata), CPU results against plain loops, and the generated
// CUDA sources compiled by NVRTC (no GPU needed).
#include <gtest/gtest.h>

#include "ops_test_support.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "ops/reduce.hpp"
#include "ops/reduce_cpu_loops.hpp"
#include "ops/reduce_cuda.hpp"
#include "test_support.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu::ops {
namespace {

TEST(ReduceAxes, NegativeDuplicateAndOutOfRange) {
  EXPECT_EQ(reduced_axes(3, std::nullopt), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(reduced_axes(3, std::vector<int64_t>{-1, 0}), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(reduced_axes(2, std::vector<int64_t>{}), (std::vector<bool>{false, false}));
  EXPECT_THROW(reduced_axes(2, std::vector<int64_t>{2}), AxisError);
  EXPECT_THROW(reduced_axes(2, std::vector<int64_t>{-3}), AxisError);
  EXPECT_THROW(reduced_axes(0, std::vector<int64_t>{0}), AxisError);
  EXPECT_THROW(reduced_axes(2, std::vector<int64_t>{1, -1}), BadValue);
}

TEST(ReducePlan, FullReductionOfAContiguousArrayIsOneRun) {
  const Layout layout = contiguous_layout({4, 5, 6}, 4);
  const ReducePlan plan = plan_reduction(layout, {true, true, true}, {0, 0, 0});
  ASSERT_EQ(plan.reduced.size(), 1u);
  EXPECT_EQ(plan.reduced[0].size, 120);
  EXPECT_TRUE(plan.kept.empty());
  EXPECT_EQ(plan.kind, ReduceCase::Rows);
  EXPECT_EQ(plan.kept_count, 1);
  EXPECT_EQ(plan.reduced_count, 120);
}

TEST(ReducePlan, InnerAxesAreRowsOuterAxesColumns) {
  const Layout layout = contiguous_layout({4, 5, 6}, 4);
  const ReducePlan rows = plan_reduction(layout, {false, true, true}, {4, 0, 0});
  EXPECT_EQ(rows.kind, ReduceCase::Rows);
  ASSERT_EQ(rows.reduced.size(), 1u);
  EXPECT_EQ(rows.reduced[0].size, 30);
  const ReducePlan columns = plan_reduction(layout, {true, false, false}, {0, 24, 4});
  EXPECT_EQ(columns.kind, ReduceCase::Columns);
  ASSERT_EQ(columns.kept.size(), 1u);  // the two kept dimensions merge, in the input and the result
  EXPECT_EQ(columns.kept[0].size, 30);
  EXPECT_EQ(columns.reduced[0].stride, 120);
  const ReducePlan middle = plan_reduction(layout, {false, true, false}, {24, 0, 4});
  EXPECT_EQ(middle.kind, ReduceCase::Columns);
  EXPECT_EQ(middle.kept.size(), 2u);
  // Batch-norm's statistics: every axis but the middle one; the innermost reduced one is contiguous, so each
  // result reduces 4 runs of 6 elements.
  const ReducePlan runs = plan_reduction(layout, {true, false, true}, {0, 4, 0});
  EXPECT_EQ(runs.kind, ReduceCase::Rows);
  ASSERT_EQ(runs.reduced.size(), 2u);
  EXPECT_EQ(runs.reduced[1].size, 6);
  EXPECT_EQ(runs.reduced[1].stride, 4);
}

TEST(ReducePlan, StridedViewsAndLengthOneDimensions) {
  Layout layout = contiguous_layout({4, 1, 6}, 8);
  layout.strides = {-48, 48, 16};  // every other column, rows reversed
  const ReducePlan plan = plan_reduction(layout, {true, true, true}, {0, 0, 0});
  EXPECT_EQ(plan.kind, ReduceCase::Strided);
  EXPECT_EQ(plan.reduced.size(), 2u);  // the length-1 dimension is dropped; the others do not merge
  const ReducePlan empty = plan_reduction(contiguous_layout({3, 0}, 4), {false, true}, {4, 0});
  EXPECT_EQ(empty.reduced_count, 0);
  EXPECT_EQ(empty.kept.size(), 1u);  // the results still have their places
  EXPECT_EQ(empty.kept_count, 3);
}

TEST(ReduceTypes, NumpysResultTypes) {
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Sum, DType::Int32, std::nullopt), DType::Int64);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Sum, DType::Bool, std::nullopt), DType::Int64);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Prod, DType::UInt8, std::nullopt), DType::UInt64);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Sum, DType::Float16, std::nullopt), DType::Float16);
  EXPECT_EQ(accumulator_of(ReduceOp::Sum, DType::Float16, DType::Float16), AccType::Float32);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Mean, DType::Int16, std::nullopt), DType::Float64);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::ArgMax, DType::Float32, std::nullopt), DType::Int64);
  EXPECT_EQ(reduce_result_dtype(ReduceOp::Max, DType::UInt16, std::nullopt), DType::UInt16);
  EXPECT_THROW(reduce_result_dtype(ReduceOp::Sum, DType::Complex64, std::nullopt), BadArgument);
  EXPECT_THROW(reduce_result_dtype(ReduceOp::Max, DType::Float32, DType::Float64), BadArgument);
}

using testing::host_array;

template <typename T> std::vector<T> read(const Array& a) { return testing::values_of<T>(a); }

TEST(ReduceCpu, SumsAlongEachAxisAgainstLoops) {
  const int64_t rows = 300, cols = 257;
  std::vector<int32_t> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7919 % 1000) - 500;
  const Array a = host_array(values, DType::Int32, {rows, cols});
  ReduceRequest request;
  const std::vector<int64_t> total = read<int64_t>(reduce(a, request));
  int64_t expected_total = 0;
  for (int32_t v : values) expected_total += v;
  EXPECT_EQ(total[0], expected_total);
  for (int64_t axis : {0, 1}) {
    request.axes = std::vector<int64_t>{axis};
    const std::vector<int64_t> got = read<int64_t>(reduce(a, request));
    const int64_t kept = axis == 0 ? cols : rows, along = axis == 0 ? rows : cols;
    ASSERT_EQ(static_cast<int64_t>(got.size()), kept);
    for (int64_t k = 0; k < kept; ++k) {
      int64_t sum = 0;
      for (int64_t r = 0; r < along; ++r) sum += values[axis == 0 ? r * cols + k : k * cols + r];
      ASSERT_EQ(got[k], sum) << "axis " << axis << " result " << k;
    }
  }
}

TEST(ReduceCpu, MaxAndArgmaxPropagateTheFirstNan) {
  std::vector<float> values(100000, 1.0f);
  values[70000] = 5.0f;
  values[80000] = 5.0f;
  Array a = host_array(values, DType::Float32, {100000});
  ReduceRequest request;
  request.op = ReduceOp::ArgMax;
  EXPECT_EQ(read<int64_t>(reduce(a, request))[0], 70000);  // the first of equal maxima
  values[90000] = NAN;
  values[95000] = NAN;
  a = host_array(values, DType::Float32, {100000});
  EXPECT_EQ(read<int64_t>(reduce(a, request))[0], 90000);
  request.op = ReduceOp::Max;
  EXPECT_TRUE(std::isnan(read<float>(reduce(a, request))[0]));
  request.op = ReduceOp::Max;
  EXPECT_THROW(reduce(Array::empty({0}, DType::Float32, kCpuDevice), request), BadValue);
}

TEST(ReduceCpu, LargeFloatSumIsAccurate) {
  const int64_t n = (1 << 22) + 3;  // split between threads, with a ragged end
  std::vector<float> values(n);
  double expected = 0;
  for (int64_t i = 0; i < n; ++i) {
    values[i] = static_cast<float>((i % 1013) * 0.001 + 0.1);
    expected += values[i];
  }
  const float got = read<float>(reduce(host_array(values, DType::Float32, {n}), ReduceRequest{}))[0];
  EXPECT_NEAR(got, expected, std::abs(expected) * 1e-6);  // naive float32 summation is off by ~1e-3 here
}

// The pairwise walk reads memory forwards whatever order the compiler evaluates arguments in (GCC's right
// to left walked it backwards, which halved the bandwidth from DRAM), and the SIMD loop of contiguous
// floats does the scalar loop's operations in the scalar loop's order, so the two agree to the bit.
TEST(ReduceCpu, PairwiseWalksForwardAndItsLanesAgreeWithIt) {
  using cpu_reduce::pairwise;
  for (int64_t n : {1, 7, 128, 129, 1000, 4099, 70001}) {
    std::vector<int64_t> visited;
    pairwise<jiasu::reduce::Sum, long long>([&](int64_t i) { visited.push_back(i); return 1LL; }, 0, n);
    ASSERT_EQ(static_cast<int64_t>(visited.size()), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visited[i], i) << "n " << n;
  }
  std::vector<float> values((1 << 20) + 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(std::sin(i * 0.37) * (1 + i % 97));
  const int64_t sizes[] = {5, 128, 1000, 4099, static_cast<int64_t>(values.size())};
  for (int64_t n : sizes) {
    const auto get = [&](int64_t i) { return values[i]; };
    EXPECT_EQ((cpu_reduce::pairwise_lanes<jiasu::reduce::Sum, float>(values.data(), n)),
              (pairwise<jiasu::reduce::Sum, float>(get, 0, n))) << "n " << n;
    EXPECT_EQ((cpu_reduce::pairwise_lanes<jiasu::reduce::Max, float>(values.data(), n)),
              (pairwise<jiasu::reduce::Max, float>(get, 0, n))) << "n " << n;
  }
}

// Every generated kernel kind compiles: the entry is in the PTX and NVRTC warns about nothing.
TEST(ReduceCuda, GeneratedSourcesCompile) {
  if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  const ReduceKernelKey keys[] = {
      {ReduceOp::Sum, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Rows, 0, 0},
      {ReduceOp::Sum, DType::Float16, AccType::Float32, DType::Float16, KernelKind::Rows, 0, 0},
      {ReduceOp::Sum, DType::Int8, AccType::Int64, DType::Int64, KernelKind::Strided, 0, 0},
      {ReduceOp::Prod, DType::UInt32, AccType::UInt64, DType::UInt64, KernelKind::Rows, 0, 0},
      {ReduceOp::Max, DType::BFloat16, AccType::Float32, DType::BFloat16, KernelKind::Rows, 0, 0},
      {ReduceOp::Min, DType::Float64, AccType::Float64, DType::Float64, KernelKind::Strided, 0, 0},
      {ReduceOp::ArgMax, DType::Float32, AccType::Float32, DType::Int64, KernelKind::Rows, 1, 0},
      {ReduceOp::ArgMin, DType::Int16, AccType::Int64, DType::Int64, KernelKind::Strided, 1, 0},
      {ReduceOp::Any, DType::Float32, AccType::Bool, DType::Bool, KernelKind::Rows, 0, 0},
      {ReduceOp::All, DType::Bool, AccType::Bool, DType::Bool, KernelKind::Strided, 0, 0},
      {ReduceOp::Mean, DType::Int32, AccType::Float64, DType::Float64, KernelKind::Rows, 2, 0},
      {ReduceOp::Std, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Rows, 3, 1},
      {ReduceOp::Var, DType::Float16, AccType::Float32, DType::Float16, KernelKind::Strided, 2, 1},
      {ReduceOp::Sum, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Runs, 0, 0},
      {ReduceOp::ArgMax, DType::Float16, AccType::Float32, DType::Int64, KernelKind::Runs, 1, 0},
      {ReduceOp::Var, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Runs, 2, 1},
      {ReduceOp::Sum, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Columns, 0, 0},
      {ReduceOp::ArgMax, DType::Float64, AccType::Float64, DType::Int64, KernelKind::Columns, 1, 0},
      {ReduceOp::Std, DType::BFloat16, AccType::Float32, DType::BFloat16, KernelKind::Columns, 3, 1},
      {ReduceOp::All, DType::UInt8, AccType::Bool, DType::Bool, KernelKind::Columns, 0, 0},
      {ReduceOp::Sum, DType::Float32, AccType::Float32, DType::Float32, KernelKind::Columns, 0, 0, 4},
      {ReduceOp::Sum, DType::Int8, AccType::Int64, DType::Int64, KernelKind::Columns, 0, 0, 8},
      {ReduceOp::ArgMin, DType::Float16, AccType::Float32, DType::Int64, KernelKind::Columns, 1, 0, 4},
      {ReduceOp::Var, DType::Float64, AccType::Float64, DType::Float64, KernelKind::Columns, 2, 1, 2},
      {ReduceOp::Sum, DType::Int32, AccType::Int64, DType::Int64, KernelKind::Cumsum},
  };
  for (const ReduceKernelKey& key : keys) {
    CudaCompileRequest request;
    request.source = reduce_cuda_source(key);
    request.kind = CodeKind::Ptx;
    request.arch = 90;
    try {
      const CompiledCode code = compile_cuda(request, nullptr);
      EXPECT_NE(code.image.find(".entry jiasu_reduce("), std::string::npos) << reduce_kernel_name(key);
      EXPECT_EQ(code.log.find("warning"), std::string::npos) << reduce_kernel_name(key) << "\n" << code.log;
    } catch (const NvrtcError& e) {
      ADD_FAILURE() << reduce_kernel_name(key) << ": " << e.what() << "\n" << e.log();
    }
  }
}

}  // namespace
}  // namespace jiasu::ops
