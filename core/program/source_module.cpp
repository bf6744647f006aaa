#include "program/source_module.hpp"

#include "runtime/device.hpp"

namespace jiasu {

SourceModule::SourceModule(std::string source, std::vector<std::string> options, std::string file_name)
    : source_(std::move(source)), options_(std::move(options)), file_name_(std::move(file_name)) {}

const CompiledCode& SourceModule::code(int arch, CodeKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(arch, kind);
  auto it = code_.find(key);
  if (it != code_.end()) return it->second;
  CudaCompileRequest request;
  request.source = source_;
  request.file_name = file_name_;
  request.options = options_;
  request.arch = arch;
  request.kind = kind;
  return code_.emplace(key, compile_cuda(request, &compile_cache())).first->second;
}

std::shared_ptr<Module> SourceModule::module(int device) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = modules_.find(device);
    if (it != modules_.end()) return it->second;
  }
  const CompiledCode& compiled = code(device_properties(device).arch(), CodeKind::Cubin);
  auto loaded = Module::load(device, compiled.image);
  std::lock_guard<std::mutex> lock(mutex_);
  return modules_.emplace(device, loaded).first->second;
}

std::shared_ptr<Kernel> SourceModule::kernel(const std::string& name, int device) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find({device, name});
    if (it != kernels_.end()) return it->second;
  }
  auto found = module(device)->kernel(name);
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels_.emplace(std::make_pair(device, name), found).first->second;
}

}  // namespace jiasu
