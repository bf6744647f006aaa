// Shared by the CUDA-emitter tests: Python kernels checked, emitted and compiled to PTX for sm_90 by the real NVRTC
// (no GPU needed).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "emit/emit.hpp"
#include "frontend_test_support.hpp"
#include "test_support.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu::emit_test {

using fe::GlobalValue;
using fe::Type;
using namespace testing;  // the kernel builders: python(), array(), scalar(), ...

// text with its line numbers, for messages.
inline std::string numbered(const std::string& text) {
  std::string out;
  int line = 1;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += std::to_string(line++) + "\t" + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

class EmitCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  }

  // Checks and emits `text` for `signature`, compiles it to PTX and checks the kernel entry is there.
  // Returns the generated code after the runtime header.
  std::string compile(const std::string& text, const std::vector<Type>& signature, Globals globals = {}) {
    fe::Program program = fe::check(python(text, std::move(globals)), signature);
    emit::EmittedKernel kernel = emit::emit_cuda(program);
    CudaCompileRequest request;
    request.source = kernel.source;
    request.kind = CodeKind::Ptx;
    request.arch = 90;
    try {
      CompiledCode code = compile_cuda(request, nullptr);
      EXPECT_NE(code.image.find(".entry " + kernel.entry_name + "("), std::string::npos) << code.image;
      EXPECT_EQ(code.log.find("warning"), std::string::npos) << code.log;
    } catch (const NvrtcError& e) {
      ADD_FAILURE() << e.what() << "\n" << e.log() << "\n" << numbered(kernel.source);
    }
    return kernel.source.substr(emit::cuda_runtime_header().size());
  }
};

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The kernel checked for `signature`, and the "line:column: message" of the CompileError checking it gives.
inline fe::Program checked(const std::string& kernel, const std::vector<Type>& signature, Globals globals = {}) {
  return fe::check(python(kernel, std::move(globals)), signature);
}
inline std::string compile_error(const std::string& kernel, const std::vector<Type>& signature, Globals globals = {}) {
  try {
    checked(kernel, signature, std::move(globals));
  } catch (const fe::CompileError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  return "no CompileError";
}

}  // namespace jiasu::emit_test
