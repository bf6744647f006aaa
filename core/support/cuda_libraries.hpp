// Where to look for each CUDA library jiasu loads on demand, and how to ask it for its version.
#pragma once

#include <string>

#include "support/library_finder.hpp"

namespace jiasu {

// name: "nvrtc", "cudnn", "cublas", "cublaslt" or "nccl"; throws BadValue for any other.
const LibrarySpec& cuda_library_spec(const std::string& name);

struct LibraryReport {
  FoundLibrary library;
  std::string version;  // "9.19.0"; empty when the library cannot tell
};
// Finds and loads the library (throws LibraryNotFound) and reads its version.
LibraryReport inspect_cuda_library(const std::string& name);

}  // namespace jiasu
