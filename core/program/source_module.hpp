// CUDA C++ source compiled (lazily, per device architecture) and loaded (per device).
// RawKernel and SourceModule are built on this; so are Python kernels once they are emitted as CUDA C++.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/module.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu {

class SourceModule {
 public:
  SourceModule(std::string source, std::vector<std::string> options, std::string file_name);

  const std::string& source() const { return source_; }
  // Compiled for `device`'s exact architecture and loaded there on first use.
  std::shared_ptr<Module> module(int device);
  std::shared_ptr<Kernel> kernel(const std::string& name, int device);
  const CompiledCode& code(int arch, CodeKind kind);

 private:
  std::string source_;
  std::vector<std::string> options_;
  std::string file_name_;
  std::mutex mutex_;
  std::map<std::pair<int, CodeKind>, CompiledCode> code_;
  std::map<int, std::shared_ptr<Module>> modules_;
  std::map<std::pair<int, std::string>, std::shared_ptr<Kernel>> kernels_;
};

}  // namespace jiasu
