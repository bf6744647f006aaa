#include "runtime/driver.hpp"

#include "support/error.hpp"
#include "support/library_finder.hpp"

namespace jiasu::cu {
namespace {

// cuGetProcAddress as exported since CUDA 12.0 (the "_v2" spelling reports why a symbol is missing).
using GetProcAddressFn = CUresult (*)(const char* symbol, void** fn, int cuda_version, uint64_t flags,
                                      int* symbol_status);

DriverApi load_driver() {
  LibrarySpec spec;
  spec.name = "CUDA driver";
  spec.env_var = "JIASU_LIBCUDA";
  spec.sonames = {"libcuda.so.1", "libcuda.so"};
  spec.search_cuda_home = false;  // the toolkit only has a stub libcuda, which cannot run anything
  spec.fix = "install the NVIDIA GPU driver (it provides libcuda.so.1)";
  FoundLibrary lib = find_library(spec);

  auto get_proc = reinterpret_cast<GetProcAddressFn>(find_symbol(lib, "cuGetProcAddress_v2"));
  if (!get_proc)
    throw CudaError(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
                    "the CUDA driver at " + lib.path + " is older than CUDA 12.0; jiasu needs a driver "
                    "for CUDA 12 or newer (version 525 or later)");
  using InitFn = CUresult (*)(unsigned int);
  auto init = reinterpret_cast<InitFn>(find_symbol(lib, "cuInit"));

  DriverApi api;
  api.path = lib.path;
#define JIASU_CU(name, version, required, params)                                                    \
  {                                                                                                  \
    void* fn = nullptr;                                                                              \
    int status = 0;                                                                                  \
    if (get_proc(#name, &fn, version, 0, &status) != CUDA_SUCCESS || !fn) fn = nullptr;              \
    if (!fn && required)                                                                             \
      throw CudaError(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",                                   \
                      "the CUDA driver at " + lib.path + " lacks " #name "; update the GPU driver"); \
    api.name = reinterpret_cast<decltype(api.name)>(fn);                                             \
  }
#include "runtime/driver_api.def"
#undef JIASU_CU

  if (!init) throw CudaError(34, "CUDA_ERROR_STUB_LIBRARY", lib.path + " has no cuInit");
  CUresult r = init(0);
  api.cuDriverGetVersion(&api.version);
  if (r != CUDA_SUCCESS) {
    // Resolve the table first so that the error carries the driver's own name for the failure.
    const char* name = nullptr;
    api.cuGetErrorName(r, &name);
    std::string why = r == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable GPU is visible" : "cuInit failed";
    throw CudaError(r, name ? name : "CUDA_ERROR_UNKNOWN", "CUDA driver " + lib.path + ": " + why);
  }
  return api;
}

}  // namespace

const DriverApi& driver() { return load_once<DriverApi>(load_driver); }

std::string error_name(CUresult result) {
  const char* name = nullptr;
  try {
    driver().cuGetErrorName(result, &name);
  } catch (const Error&) {
  }
  return name ? name : "CUDA_ERROR_" + std::to_string(result);
}

void throw_error(CUresult result, const char* what) {
  const char* text = nullptr;
  driver().cuGetErrorString(result, &text);
  std::string name = error_name(result);
  std::string message = std::string(what) + " failed: " + name + " (" + (text ? text : "unknown error") + ")";
  if (result == CUDA_ERROR_OUT_OF_MEMORY) throw OutOfMemoryError(result, name, message);
  throw CudaError(result, name, message);
}

}  // namespace jiasu::cu
