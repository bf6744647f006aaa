#include "runtime/cublaslt.hpp"

#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "support/library_finder.hpp"

namespace jiasu::blaslt {
namespace {

Api load() {
  FoundLibrary found = find_library(cuda_library_spec("cublaslt"));
  Api loaded;
  const std::string need = "cuBLASLt 12 or newer (" + cuda_library_spec("cublaslt").fix + ")";
#define JIASU_CUBLASLT(name, params) bind_required(found, #name, loaded.name, need);
#include "runtime/cublaslt_api.def"
#undef JIASU_CUBLASLT
  bind_optional(found, "cublasLtGetStatusName", loaded.cublasLtGetStatusName);
  if (auto version = reinterpret_cast<size_t (*)()>(find_symbol(found, "cublasLtGetVersion")))
    loaded.version = version();
  loaded.path = found.path;
  loaded.source = found.source;
  return loaded;
}

}  // namespace

const Api& api() { return load_once<Api>(load); }

void check(CublasStatus status, const char* what) {
  if (status == kStatusSuccess) return;
  const char* name = api().cublasLtGetStatusName ? api().cublasLtGetStatusName(status) : nullptr;
  std::string text = name ? name : "CUBLAS_STATUS_" + std::to_string(status);
  throw CudaError(status, text, std::string(what) + " failed: " + text);
}

}  // namespace jiasu::blaslt
