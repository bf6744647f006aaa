// The CUDA driver API, loaded with dlopen on first use (never at import). The types and constants below
// are declared here from the driver API's documented ABI so that no CUDA header is needed to build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jiasu::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
constexpr CUresult CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
constexpr CUresult CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910;

enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxGridDimX = 5,
  kMaxSharedMemoryPerBlock = 8,
  kTotalConstantMemory = 9,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kCanMapHostMemory = 19,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kManagedMemory = 83,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
  kMaxBlocksPerMultiprocessor = 106,
  kReservedSharedMemoryPerBlock = 111,
  kMemoryPoolsSupported = 115,
};

enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncConstSizeBytes = 2,
  kFuncLocalSizeBytes = 3,
  kFuncNumRegs = 4,
  kFuncMaxDynamicSharedSizeBytes = 8,
};

constexpr int kMempoolAttrReleaseThreshold = 4;
constexpr int kPointerAttrMemoryType = 2;
constexpr int kPointerAttrDeviceOrdinal = 9;
constexpr unsigned kMemHostAllocPortable = 0x01;
constexpr unsigned kMemHostAllocDeviceMap = 0x02;
constexpr unsigned kMemHostAllocWriteCombined = 0x04;
constexpr unsigned kMemAttachGlobal = 0x1;
constexpr unsigned kMemAttachHost = 0x2;
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr unsigned kEventDisableTiming = 0x2;
constexpr int kStreamCaptureModeRelaxed = 2;
inline void* const kLaunchParamEnd = reinterpret_cast<void*>(0x00);
inline void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(0x01);
inline void* const kLaunchParamBufferSize = reinterpret_cast<void*>(0x02);

// cuLaunchKernelEx's configuration as cuda.h lays it out, with the one launch attribute jiasu sets.
constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;
struct CUlaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union {
    char bytes[64];
    int programmatic_stream_serialization_allowed;
  } value = {};
};
struct CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  CUlaunchAttribute* attributes;
  unsigned attribute_count;
};
static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8);
static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, stream) == 32 &&
              offsetof(CUlaunchConfig, attributes) == 40 && offsetof(CUlaunchConfig, attribute_count) == 48);

struct DriverApi {
#define JIASU_CU(name, version, required, params) CUresult(*name) params = nullptr;
#include "runtime/driver_api.def"
#undef JIASU_CU
  int version = 0;   // e.g. 13000
  std::string path;  // libcuda actually loaded
};

// The loaded driver; the first call loads libcuda, resolves the table and runs cuInit.
// Throws LibraryNotFound (no driver) or CudaError (cuInit failed, e.g. no device).
const DriverApi& driver();

// Throws the CudaError subclass that fits `result`; `what` names the call for the message.
void throw_error(CUresult result, const char* what);
inline void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) throw_error(result, what);
}
std::string error_name(CUresult result);

}  // namespace jiasu::cu
