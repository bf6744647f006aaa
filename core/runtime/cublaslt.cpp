#include "runtime/cublaslt.hpp"

#include <atomic>
#include <mutex>

#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "support/library_finder.hpp"

namespace jiasu::blaslt {
namespace {

template <typename Function>
void bind_required(const FoundLibrary& found, const char* name, Function& slot) {
  slot = reinterpret_cast<Function>(find_symbol(found, name));
  if (!slot)
    throw LibraryNotFound(found.path + " has no " + name + "; jiasu needs cuBLASLt 12 or newer (" +
                          cuda_library_spec("cublaslt").fix + ")");
}

Api load() {
  FoundLibrary found = find_library(cuda_library_spec("cublaslt"));
  Api loaded;
#define JIASU_CUBLASLT(name, params) bind_required(found, #name, loaded.name);
#include "runtime/cublaslt_api.def"
#undef JIASU_CUBLASLT
  loaded.cublasLtGetStatusName =
      reinterpret_cast<decltype(loaded.cublasLtGetStatusName)>(find_symbol(found, "cublasLtGetStatusName"));
  if (auto version = reinterpret_cast<size_t (*)()>(find_symbol(found, "cublasLtGetVersion")))
    loaded.version = version();
  loaded.path = found.path;
  loaded.source = found.source;
  return loaded;
}

}  // namespace

const Api& api() {
  // As driver(): a failed load is retried (and rethrown) on every later use.
  static std::mutex mutex;
  static std::atomic<const Api*> loaded{nullptr};
  if (const Api* a = loaded.load(std::memory_order_acquire)) return *a;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded.load()) loaded.store(new Api(load()));  // never freed: destructors run late
  return *loaded.load();
}

void check(CublasStatus status, const char* what) {
  if (status == kStatusSuccess) return;
  const char* name = api().cublasLtGetStatusName ? api().cublasLtGetStatusName(status) : nullptr;
  std::string text = name ? name : "CUBLAS_STATUS_" + std::to_string(status);
  throw CudaError(status, text, std::string(what) + " failed: " + text);
}

}  // namespace jiasu::blaslt
