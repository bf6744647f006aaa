#include "runtime/nccl.hpp"

#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "support/library_finder.hpp"

namespace jiasu::nccl {
namespace {

constexpr int kOldestVersion = 21800;  // the config layout of runtime/nccl.hpp, ncclCommSplit

Api load() {
  FoundLibrary found = find_library(cuda_library_spec("nccl"));
  Api loaded;
  const std::string need = "NCCL 2.18 or newer (" + cuda_library_spec("nccl").fix + ")";
#define JIASU_NCCL(name, params) bind_required(found, #name, loaded.name, need);
#include "runtime/nccl_api.def"
#undef JIASU_NCCL
  bind_required(found, "ncclGetErrorString", loaded.ncclGetErrorString, need);
  bind_optional(found, "ncclGetLastError", loaded.ncclGetLastError);
  loaded.ncclGetVersion(&loaded.version);
  if (loaded.version < kOldestVersion)
    throw LibraryNotFound(found.path + " is NCCL " + std::to_string(loaded.version) + "; jiasu needs " + need);
  loaded.path = found.path;
  return loaded;
}

}  // namespace

const Api& api() { return load_once<Api>(load); }

int data_type(DType dtype) {
  switch (dtype) {
    case DType::Int8: return 0;
    case DType::UInt8: return 1;
    case DType::Int32: return 2;
    case DType::UInt32: return 3;
    case DType::Int64: return 4;
    case DType::UInt64: return 5;
    case DType::Float16: return 6;
    case DType::Float32: return 7;
    case DType::Float64: return 8;
    case DType::BFloat16: return 9;
    default:
      throw BadArgument(std::string("NCCL cannot move ") + info(dtype).name +
                        " arrays; use int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32 or "
                        "float64");
  }
}

ReduceOp reduce_op(const std::string& name) {
  if (name == "sum") return kSum;
  if (name == "prod") return kProd;
  if (name == "max") return kMax;
  if (name == "min") return kMin;
  if (name == "avg") return kAvg;
  throw BadValue("op must be 'sum', 'prod', 'max', 'min' or 'avg', not '" + name + "'");
}

std::string error_text(NcclResult result, NcclComm comm) {
  const Api& nccl = api();
  std::string text = nccl.ncclGetErrorString(result);
  const char* detail = nccl.ncclGetLastError ? nccl.ncclGetLastError(comm) : nullptr;
  if (detail && *detail) text += " (" + std::string(detail) + ")";
  return text;
}

void check(NcclResult result, const char* what, NcclComm comm) {
  if (result == kSuccess || result == kInProgress) return;
  throw DistributedError(std::string(what) + " failed: " + error_text(result, comm), result);
}

}  // namespace jiasu::nccl
