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

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The kernel checked for `signature`.
inline fe::Program checked(const std::string& kernel, const std::vector<Type>& signature, Globals globals = {}) {
  return fe::check(python(kernel, std::move(globals)), signature);
}

// The one NVRTC path of the C++ tests: kernels emitted as CUDA C++ and compiled to PTX for sm_90.
class EmitCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  }

  // `text` checked for `signature` and emitted (debug: as a debug kernel, see emit::emit_cuda).
  static emit::EmittedKernel emitted(const std::string& text, const std::vector<Type>& signature, Globals globals = {},
                                     bool debug = false) {
    return emit::emit_cuda(checked(text, signature, std::move(globals)), debug);
  }

  // The PTX of `kernel`, checked to hold the kernel's entry, compiled without warnings; a compile error fails the
  // test (showing the numbered source) and gives "".
  static std::string ptx(const emit::EmittedKernel& kernel) {
    try {
      CompiledCode code = nvrtc_ptx(kernel.source);
      EXPECT_TRUE(contains(code.image, ".entry " + kernel.entry_name + "(")) << code.image;
      EXPECT_FALSE(contains(code.log, "warning")) << code.log;
      return code.image;
    } catch (const NvrtcError& e) {
      ADD_FAILURE() << e.what() << "\n" << e.log() << "\n" << numbered(kernel.source);
    }
    return "";
  }

  // Checks, emits and compiles `text` for `signature` (see ptx()). Returns the generated code after the runtime
  // header.
  static std::string compile(const std::string& text, const std::vector<Type>& signature, Globals globals = {}) {
    const emit::EmittedKernel kernel = emitted(text, signature, std::move(globals));
    ptx(kernel);
    const std::string& header = emit::cuda_runtime_header();
    return kernel.source.substr(kernel.source.find(header) + header.size());
  }

  // NVRTC's log for `text`, which checks and emits but must not compile; "compiled" when it does.
  static std::string nvrtc_error(const std::string& text, const std::vector<Type>& signature, Globals globals = {}) {
    try {
      nvrtc_ptx(emitted(text, signature, std::move(globals)).source);
    } catch (const NvrtcError& e) {
      return e.log();
    }
    return "compiled";
  }

 private:
  static CompiledCode nvrtc_ptx(const std::string& source) {
    CudaCompileRequest request;
    request.source = source;
    request.kind = CodeKind::Ptx;
    request.arch = 90;
    return compile_cuda(request, nullptr);
  }
};

// The "line:column: message" of the CompileError that checking `kernel` for `signature` gives.
inline std::string compile_error(const std::string& kernel, const std::vector<Type>& signature, Globals globals = {}) {
  try {
    checked(kernel, signature, std::move(globals));
  } catch (const fe::CompileError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  return "no CompileError";
}

}  // namespace jiasu::emit_test
