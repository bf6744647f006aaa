// The cuBLASLt side of matmul: the types and descriptors of a planned product (ops/matmul.hpp's GemmPlan).
// Descriptors need the library but no GPU, so tests build them on any machine that has cuBLASLt.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "ops/matmul.hpp"
#include "runtime/cublaslt.hpp"

namespace jiasu::ops {

// cuBLASLt's data, compute and scale types for a product of one dtype, and alpha = 1, beta = 0 in the scale
// type. Float16 and bfloat16 accumulate in float32; float32 uses TF32 only when `tf32`.
struct GemmTypes {
  int data = 0, compute = 0, scale = 0;
  // Aligned as cuDoubleComplex: the library reads alpha and beta with loads of their type's alignment.
  alignas(16) std::array<unsigned char, 16> one{}, zero{};
};
// Throws BadArgument naming `op` and the dtype for types cuBLASLt has no product for.
GemmTypes gemm_types(DType dtype, bool tf32, const char* op);

// The matmul descriptor, the three matrix layouts (cuBLASLt's A, B, and C = D) and the heuristic's preference
// of one plan; destroyed with it.
struct GemmDescriptors {
  blaslt::CublasLtMatmulDesc desc = nullptr;
  blaslt::CublasLtMatrixLayout first = nullptr, second = nullptr, out = nullptr;
  blaslt::CublasLtPreference preference = nullptr;
  GemmDescriptors() = default;
  GemmDescriptors(const GemmDescriptors&) = delete;
  GemmDescriptors& operator=(const GemmDescriptors&) = delete;
  ~GemmDescriptors();
  void drop_preference();  // once the heuristic has run
};
// `alignments`: the byte alignment (a power of two, at most 256) of cuBLASLt's A, B and D pointers.
// Throws CudaError (cuBLAS's status) when cuBLASLt refuses a value.
std::unique_ptr<GemmDescriptors> make_gemm_descriptors(const GemmTypes& types, const GemmPlan& plan,
                                                       const std::array<uint32_t, 3>& alignments);

}  // namespace jiasu::ops
