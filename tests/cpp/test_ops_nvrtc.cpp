// NVRTC compiles the elementwise engine's generated CUDA C++ (no GPU needed): every layout class, vector
// width and index width, and a spread of operations and dtypes.
#include <gtest/gtest.h>

#include "ops/elementwise_cuda.hpp"
#include "test_support.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu::ops {
namespace {

class OpsNvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  }
};

void expect_compiles(const ElementwiseSpec& spec) {
  CudaCompileRequest request;
  request.source = elementwise_cuda_source(spec);
  request.kind = CodeKind::Ptx;
  CompiledCode code;
  try {
    code = compile_cuda(request, nullptr);
  } catch (const NvrtcError& e) {
    FAIL() << info(spec.op).name << ": " << e.log() << "\n" << request.source.substr(ops_cuda_header().size());
  }
  EXPECT_NE(code.image.find(kElementwiseKernelName), std::string::npos);
}

ElementwiseSpec binary(Ufunc op, DType in, DType loop, DType out) {
  ElementwiseSpec s;
  s.op = op;
  s.inputs = 2;
  s.in[0] = s.in[1] = in;
  s.loop[0] = s.loop[1] = loop;
  s.out = out;
  return s;
}

TEST_F(OpsNvrtc, ContiguousVectorised) {
  ElementwiseSpec s = binary(Ufunc::Add, DType::Float32, DType::Float32, DType::Float32);
  s.vector = 4;
  expect_compiles(s);
  s = binary(Ufunc::Less, DType::Float16, DType::Float16, DType::Bool);
  s.vector = 8;
  expect_compiles(s);
  s = binary(Ufunc::FloorDivide, DType::Int8, DType::Int16, DType::Int16);  // converted on the way in
  s.vector = 8;
  s.scalar[1] = true;
  expect_compiles(s);
}

TEST_F(OpsNvrtc, StridedNarrowAndWide) {
  ElementwiseSpec s = binary(Ufunc::Power, DType::BFloat16, DType::BFloat16, DType::Float32);
  s.layout = LayoutClass::Strided;
  s.ndim = 3;
  expect_compiles(s);
  s = binary(Ufunc::RightShift, DType::UInt64, DType::UInt64, DType::UInt64);
  s.layout = LayoutClass::Strided;
  s.ndim = 2;
  s.wide_index = true;
  expect_compiles(s);
}

TEST_F(OpsNvrtc, EveryOperationCompilesAtOneOfItsTypes) {
  for (int i = 0; i < kUfuncCount; ++i) {
    const UfuncInfo& u = info(static_cast<Ufunc>(i));
    ElementwiseSpec s;
    s.op = u.id;
    s.inputs = u.arity;
    const DType t = (u.loops & bit(DType::Float64)) ? DType::Float64 : (u.loops & bit(DType::Int32)) ? DType::Int32 : DType::Bool;
    for (int k = 0; k < u.arity; ++k) s.in[k] = s.loop[k] = t;
    if (u.rule == TypeRule::Where) s.in[0] = s.loop[0] = DType::Bool;
    const bool boolean = u.rule == TypeRule::Compare || u.rule == TypeRule::Predicate || u.rule == TypeRule::Logical;
    s.out = boolean && u.rule != TypeRule::Cast ? DType::Bool : t;
    s.vector = 2;
    expect_compiles(s);
  }
}

}  // namespace
}  // namespace jiasu::ops
