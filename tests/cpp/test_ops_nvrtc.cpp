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

// where(condition, x, scalar) of `type`, in `layout`.
ElementwiseSpec where_with_a_scalar(DType type, LayoutClass layout) {
  ElementwiseSpec w;
  w.op = Ufunc::Where;
  w.inputs = 3;
  w.in[0] = w.loop[0] = DType::Bool;
  w.in[1] = w.loop[1] = w.loop[2] = w.out = type;
  w.scalar[2] = true;
  w.layout = layout;
  return w;
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

// Vectors along the innermost dimension: inputs contiguous there, broadcast there (one element per position),
// scalars, conversions on the way in, both index widths.
TEST_F(OpsNvrtc, StridedVectorised) {
  ElementwiseSpec s = binary(Ufunc::Add, DType::Float32, DType::Float32, DType::Float32);
  s.layout = LayoutClass::Strided;
  s.ndim = 2;
  s.vector = 4;
  s.broadcast_inner[0] = true;
  expect_compiles(s);
  s.wide_index = true;
  expect_compiles(s);
  s = binary(Ufunc::Maximum, DType::Int8, DType::Int16, DType::Int16);
  s.layout = LayoutClass::Strided;
  s.ndim = 3;
  s.vector = 8;
  s.broadcast_inner[1] = true;
  expect_compiles(s);
  ElementwiseSpec w = where_with_a_scalar(DType::Complex64, LayoutClass::Strided);
  w.vector = 2;
  expect_compiles(w);
}

// Transposed inputs through shared memory: one or two of them, beside a strided input and a scalar, with a
// conversion on the way in, half and complex tiles, outer dimensions.
TEST_F(OpsNvrtc, TiledTransposedInputs) {
  ElementwiseSpec s = binary(Ufunc::Add, DType::Float32, DType::Float32, DType::Float32);
  s.layout = LayoutClass::Tiled;
  s.ndim = 2;
  s.tiled[0] = true;
  expect_compiles(s);
  s.tiled[1] = true;
  s.ndim = 4;
  expect_compiles(s);
  s = binary(Ufunc::Multiply, DType::Float16, DType::Float32, DType::Float32);
  s.layout = LayoutClass::Tiled;
  s.ndim = 3;
  s.tiled[1] = true;
  expect_compiles(s);
  ElementwiseSpec w = where_with_a_scalar(DType::Complex128, LayoutClass::Tiled);  // where(condition, x.T, scalar)
  w.ndim = 2;
  w.tiled[1] = true;
  expect_compiles(w);
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

// Every loop type of every operation, one translation unit per operation (each kernel in a namespace of
// its own): the functors instantiate under NVRTC for each dtype, half types and bool included.
TEST_F(OpsNvrtc, EveryLoopOfEveryOperationCompiles) {
  const std::string& header = ops_cuda_header();
  for (int i = 0; i < kUfuncCount; ++i) {
    const UfuncInfo& u = info(static_cast<Ufunc>(i));
    std::string source = header;
    int kernels = 0;
    for (int d = 0; d < kDTypeCount; ++d) {
      const DType t = static_cast<DType>(d);
      if (!(u.loops & bit(t))) continue;
      ElementwiseSpec s;
      s.op = u.id;
      s.inputs = u.arity;
      for (int k = 0; k < u.arity; ++k) s.in[k] = s.loop[k] = t;
      if (u.rule == TypeRule::Where) s.in[0] = s.loop[0] = DType::Bool;
      const bool boolean = u.rule == TypeRule::Compare || u.rule == TypeRule::Predicate || u.rule == TypeRule::Logical;
      s.out = boolean ? DType::Bool : t;
      s.scalar[u.arity - 1] = u.arity > 1;  // a scalar operand too
      std::string body = elementwise_cuda_source(s).substr(header.size());
      const std::string name = std::string("k_") + jiasu::info(t).name;
      body.replace(body.find(kElementwiseKernelName), std::string(kElementwiseKernelName).size(), name);
      source += "namespace " + name + "_scope {\n" + body + "}\n";
      ++kernels;
    }
    CudaCompileRequest request;
    request.source = source;
    request.kind = CodeKind::Ptx;
    try {
      const std::string ptx = compile_cuda(request, nullptr).image;
      int entries = 0;
      for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) ++entries;
      EXPECT_EQ(entries, kernels) << u.name;
    } catch (const NvrtcError& e) {
      ADD_FAILURE() << u.name << ": " << e.log();
    }
  }
}

}  // namespace
}  // namespace jiasu::ops
