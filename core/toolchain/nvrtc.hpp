// Run-time compilation of CUDA C++ with NVRTC, loaded with dlopen on first use (no CUDA headers or
// libraries at build time). Compiled images can be kept in a DiskCache.
#pragma once

#include <string>
#include <vector>

namespace jiasu {

class DiskCache;

enum class CodeKind { Ptx, Cubin };

struct CudaCompileRequest {
  std::string source;
  std::string file_name = "jiasu_module.cu";  // appears in NVRTC's messages
  std::vector<std::string> options;           // user options, e.g. "-use_fast_math", "-DN=4"
  int arch = 90;                              // compute capability as major*10+minor
  CodeKind kind = CodeKind::Cubin;
};

struct CompiledCode {
  std::string image;  // cubin bytes, or PTX text (without a trailing NUL)
  std::string log;    // NVRTC's warnings; empty on a cache hit
  bool from_cache = false;
};

struct NvrtcInfo {
  std::string path;    // the library file loaded
  std::string source;  // which search rule found it, e.g. "JIASU_NVRTC", "pip wheel", "CUDA_HOME"
  int major = 0, minor = 0;
};

// Loads NVRTC on first use; throws LibraryNotFound (with the fix) when it is missing or too old.
const NvrtcInfo& nvrtc_info();

// The archs the loaded NVRTC can target, as major*10+minor, e.g. {75, 80, 86, 89, 90, 100, ...}.
std::vector<int> nvrtc_supported_archs();

// Compiles request.source for request.arch: Cubin uses -arch=sm_XX, Ptx -arch=compute_XX. Adds
// -std=c++17 unless an -std option is given, and -I for the CUDA headers that come with the found
// NVRTC. Throws BadValue for an arch NVRTC does not support or an -arch option (use arch),
// NvrtcError (with NVRTC's log) when compilation fails. cache may be null.
CompiledCode compile_cuda(const CudaCompileRequest& request, const DiskCache* cache);

}  // namespace jiasu
