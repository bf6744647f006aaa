// cuBLASLt, loaded with dlopen on first use (never at import; nothing is linked). The types and constants
// below are declared from cuBLASLt's documented ABI (cublasLt.h, cublas_api.h, library_types.h) so that no
// CUDA header is needed to build. C enums travel as int.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/driver.hpp"

namespace jiasu::blaslt {

using CublasStatus = int;
using CublasLtHandle = struct CublasLtContext*;
using CublasLtMatmulDesc = struct CublasLtMatmulDescState*;
using CublasLtMatrixLayout = struct CublasLtMatrixLayoutState*;
using CublasLtPreference = struct CublasLtPreferenceState*;

// cublasLtMatmulAlgo_t: 8 opaque 64-bit words, filled by the heuristic and passed back by value.
struct CublasLtAlgo {
  uint64_t data[8];
};
// cublasLtMatmulHeuristicResult_t.
struct CublasLtHeuristicResult {
  CublasLtAlgo algo;
  size_t workspace_bytes;
  CublasStatus state;
  float waves_count;
  int reserved[4];
};

constexpr CublasStatus kStatusSuccess = 0;
constexpr CublasStatus kStatusNotSupported = 15;

// cudaDataType_t (library_types.h).
enum DataType : int {
  kR32F = 0, kR64F = 1, kR16F = 2, kC32F = 4, kC64F = 5, kR16BF = 14,
};
// cublasComputeType_t (cublas_api.h).
enum ComputeType : int {
  kCompute32F = 68, kCompute64F = 70, kCompute32FFastTF32 = 77,
};
// cublasOperation_t.
enum Operation : int32_t { kOpN = 0, kOpT = 1 };

// cublasLtMatmulDescAttributes_t; all of these hold an int32_t.
enum MatmulDescAttribute : int {
  kDescComputeType = 0, kDescScaleType = 1, kDescTransA = 3, kDescTransB = 4,
};
// cublasLtMatrixLayoutAttribute_t: BATCH_COUNT holds an int32_t, STRIDED_BATCH_OFFSET an int64_t (elements).
enum LayoutAttribute : int {
  kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6,
};
// cublasLtMatmulPreferenceAttributes_t: MAX_WORKSPACE_BYTES holds a uint64_t, the alignments a uint32_t each.
enum PreferenceAttribute : int {
  kPrefMaxWorkspaceBytes = 1, kPrefMinAlignmentA = 5, kPrefMinAlignmentB = 6, kPrefMinAlignmentC = 7,
  kPrefMinAlignmentD = 8,
};

struct Api {
#define JIASU_CUBLASLT(name, params) CublasStatus(*name) params = nullptr;
#include "runtime/cublaslt_api.def"
#undef JIASU_CUBLASLT
  const char* (*cublasLtGetStatusName)(CublasStatus) = nullptr;  // optional: only improves messages
  size_t version = 0;  // cublasLtGetVersion(): major * 10000 + minor * 100 + patch
  std::string path;    // the library file loaded
  std::string source;  // which search rule found it
};

// Loads cuBLASLt on first use; throws LibraryNotFound (naming the pip package) when it is missing or lacks a
// function. A failed load is retried on the next call.
const Api& api();

// Throws CudaError carrying cuBLAS's status name unless `status` is success; `what` names the call.
void check(CublasStatus status, const char* what);

}  // namespace jiasu::blaslt
