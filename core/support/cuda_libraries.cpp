#include "support/cuda_libraries.hpp"

#include <map>

#include "support/error.hpp"

namespace jiasu {
namespace {

LibrarySpec spec(std::string name, std::string env_var, std::vector<std::string> sonames,
                 std::vector<std::string> wheel_dirs, std::string fix) {
  LibrarySpec s;
  s.name = std::move(name);
  s.env_var = std::move(env_var);
  s.sonames = std::move(sonames);
  s.wheel_dirs = std::move(wheel_dirs);
  s.fix = std::move(fix);
  return s;
}

const std::map<std::string, LibrarySpec>& specs() {
  static const std::map<std::string, LibrarySpec> table = {
      {"nvrtc", spec("NVRTC", "JIASU_NVRTC", {"libnvrtc.so.13", "libnvrtc.so.12"},
                     {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
                     "pip install nvidia-cuda-nvrtc (or install the CUDA toolkit and set CUDA_HOME)")},
      {"cudnn", spec("cuDNN", "JIASU_CUDNN", {"libcudnn.so.9"}, {"nvidia/cudnn/lib"},
                     "pip install nvidia-cudnn-cu13 (or nvidia-cudnn-cu12 for a CUDA 12 driver)")},
      {"cublas", spec("cuBLAS", "JIASU_CUBLAS", {"libcublas.so.13", "libcublas.so.12"},
                      {"nvidia/cu13/lib", "nvidia/cublas/lib"}, "pip install nvidia-cublas")},
      {"cublaslt", spec("cuBLASLt", "JIASU_CUBLASLT", {"libcublasLt.so.13", "libcublasLt.so.12"},
                        {"nvidia/cu13/lib", "nvidia/cublas/lib"},
                        "pip install nvidia-cublas (nvidia-cublas-cu12 for a CUDA 12 driver)")},
      {"nccl", spec("NCCL", "JIASU_NCCL", {"libnccl.so.2"}, {"nvidia/nccl/lib", "nvidia/cu13/lib"},
                    "pip install nvidia-nccl-cu13")},
  };
  return table;
}

std::string dotted(long major, long minor, long patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

const LibrarySpec& cuda_library_spec(const std::string& name) {
  auto it = specs().find(name);
  if (it == specs().end()) throw BadValue("unknown CUDA library '" + name + "'");
  return it->second;
}

LibraryReport inspect_cuda_library(const std::string& name) {
  LibraryReport report{find_library(cuda_library_spec(name)), ""};
  const FoundLibrary& lib = report.library;
  if (name == "nvrtc") {
    if (auto fn = reinterpret_cast<int (*)(int*, int*)>(find_symbol(lib, "nvrtcVersion"))) {
      int major = 0, minor = 0;
      if (fn(&major, &minor) == 0) report.version = std::to_string(major) + "." + std::to_string(minor);
    }
  } else if (name == "cudnn") {
    // cudnnGetVersion: major * 10000 + minor * 100 + patch since cuDNN 9.
    if (auto fn = reinterpret_cast<size_t (*)()>(find_symbol(lib, "cudnnGetVersion"))) {
      size_t v = fn();
      report.version = dotted(v / 10000, v / 100 % 100, v % 100);
    }
  } else if (name == "cublas") {
    if (auto fn = reinterpret_cast<int (*)(int, int*)>(find_symbol(lib, "cublasGetProperty"))) {
      int v[3] = {0, 0, 0};
      for (int i = 0; i < 3; ++i) fn(i, &v[i]);  // MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
      report.version = dotted(v[0], v[1], v[2]);
    }
  } else if (name == "cublaslt") {
    // cublasLtGetVersion: major * 10000 + minor * 100 + patch.
    if (auto fn = reinterpret_cast<size_t (*)()>(find_symbol(lib, "cublasLtGetVersion"))) {
      size_t v = fn();
      report.version = dotted(v / 10000, v / 100 % 100, v % 100);
    }
  } else if (name == "nccl") {
    // ncclGetVersion: major * 10000 + minor * 100 + patch since NCCL 2.9.
    if (auto fn = reinterpret_cast<int (*)(int*)>(find_symbol(lib, "ncclGetVersion"))) {
      int v = 0;
      if (fn(&v) == 0) report.version = dotted(v / 10000, v / 100 % 100, v % 100);
    }
  }
  return report;
}

}  // namespace jiasu
