// Finds and dlopens the CUDA libraries jiasu uses at run time (driver, NVRTC, cuDNN, cuBLAS, NCCL).
// Nothing is linked at build time, so a machine without them still imports jiasu.
#pragma once

#include <string>
#include <vector>

namespace jiasu {

struct LibrarySpec {
  std::string name;                     // "nvrtc": used in messages
  std::string env_var;                  // a path that overrides the search, e.g. "JIASU_NVRTC"
  std::vector<std::string> sonames;     // preferred first, e.g. {"libnvrtc.so.13", "libnvrtc.so.12"}
  std::vector<std::string> wheel_dirs;  // under a site-packages folder, e.g. "nvidia/cu13/lib"
  bool search_cuda_home = true;         // CUDA_HOME / CUDA_PATH / /usr/local/cuda (never for the driver)
  std::string fix;                      // what to install when nothing is found
};

struct FoundLibrary {
  void* handle = nullptr;  // from dlopen; kept open for the life of the process
  std::string path;        // the file actually loaded
  std::string source;      // which rule found it: "JIASU_NVRTC", "pip wheel", "CUDA_HOME", "system"
};

// The site-packages folders to look in for NVIDIA's pip wheels; the Python layer supplies them.
void set_wheel_roots(std::vector<std::string> roots);

// Searches in order: spec.env_var, pip wheels, CUDA_HOME, CUDA_PATH, /usr/local/cuda, the system
// loader. Throws LibraryNotFound listing every place tried and spec.fix.
FoundLibrary find_library(const LibrarySpec& spec);

// Looks up a symbol in a library found above; nullptr when absent.
void* find_symbol(const FoundLibrary& library, const char* symbol);

}  // namespace jiasu
