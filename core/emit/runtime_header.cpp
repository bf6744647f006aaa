// The runtime headers that emitted translation units start with: real headers (emit/runtime/cuda_runtime.h,
// cpu/runtime/host_runtime.h), embedded at build time with their includes inlined (tools/embed-source).
#include <string>

#include "emit/emit.hpp"

namespace jiasu::embedded {
extern const char cuda_runtime[], host_runtime[];
extern const unsigned long long cuda_runtime_size, host_runtime_size;
}  // namespace jiasu::embedded

namespace jiasu::emit {

const std::string& cuda_runtime_header() {
  static const std::string text(embedded::cuda_runtime, embedded::cuda_runtime_size);
  return text;
}

const std::string& host_runtime_header() {
  static const std::string text(embedded::host_runtime, embedded::host_runtime_size);
  return text;
}

}  // namespace jiasu::emit
