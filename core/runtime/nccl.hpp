// NCCL, loaded with dlopen on first use (never at import; nothing is linked). The types and constants below
// are declared from NCCL's documented ABI (nccl.h) so that no NCCL header is needed to build. C enums travel
// as int.
#pragma once

#include <climits>
#include <cstddef>
#include <string>

#include "array/dtype.hpp"
#include "runtime/driver.hpp"

namespace jiasu::nccl {

using NcclResult = int;
using NcclComm = struct NcclCommState*;

// ncclUniqueId: 128 opaque bytes, passed by value.
struct NcclUniqueId {
  char internal[128];
};

// ncclConfig_t as NCCL 2.18 laid it out. NCCL reads `size` and `version` to know which fields a caller's config
// has, so later versions accept this older, shorter layout; the fields left undefined take NCCL's defaults.
constexpr int kConfigUndefInt = INT_MIN;  // NCCL_CONFIG_UNDEF_INT
constexpr unsigned kConfigMagic = 0xcafebeef;
constexpr unsigned kConfigVersion = 21800;  // NCCL_VERSION(2, 18, 0)
struct NcclConfig {
  size_t size = sizeof(NcclConfig);
  unsigned magic = kConfigMagic;
  unsigned version = kConfigVersion;
  int blocking = kConfigUndefInt;
  int cga_cluster_size = kConfigUndefInt;
  int min_ctas = kConfigUndefInt;
  int max_ctas = kConfigUndefInt;
  const char* net_name = nullptr;
  int split_share = kConfigUndefInt;
};

// ncclResult_t.
enum Result : int {
  kSuccess = 0, kUnhandledCudaError = 1, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4,
  kInvalidUsage = 5, kRemoteError = 6, kInProgress = 7,
};
// ncclRedOp_t; kAvg needs NCCL 2.10.
enum ReduceOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

// ncclDataType_t of a jiasu dtype; throws BadArgument (TypeError) naming the dtypes NCCL moves.
int data_type(DType dtype);
// ncclRedOp_t of "sum", "prod", "max", "min" or "avg"; throws BadValue listing them.
ReduceOp reduce_op(const std::string& name);

struct Api {
#define JIASU_NCCL(name, params) NcclResult(*name) params = nullptr;
#include "runtime/nccl_api.def"
#undef JIASU_NCCL
  const char* (*ncclGetErrorString)(NcclResult) = nullptr;
  const char* (*ncclGetLastError)(NcclComm) = nullptr;  // optional: only improves messages
  int version = 0;     // ncclGetVersion(): major * 10000 + minor * 100 + patch
  std::string path;    // the library file loaded
};

// Loads NCCL on first use; throws LibraryNotFound (naming the pip package) when it is missing, lacks a
// function or is older than 2.18. A failed load is retried on the next call.
const Api& api();

// NCCL's text for `result`, with ncclGetLastError's detail for `comm` when there is one.
std::string error_text(NcclResult result, NcclComm comm);
// Throws DistributedError(code = result) unless `result` is success or in progress; `what` names the call.
void check(NcclResult result, const char* what, NcclComm comm = nullptr);

}  // namespace jiasu::nccl
