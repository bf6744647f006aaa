// Shared by the host-emitter tests: a Python kernel emitted as host C++, compiled with the system C++
// compiler into a private shared library, loaded with dlopen and run on host arrays.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "emit/emit.hpp"

namespace jiasu::host_test {

namespace fs = std::filesystem;
using fe::GlobalValue;
using fe::Type;
using testing::array;
using testing::device_function;
using testing::Globals;
using testing::int_value;
using testing::module_value;
using testing::python;
using testing::scalar;

// The layouts the entry point reads (as the runtime header declares them).
struct LaunchError {
  int failed;
  char message[512];
};
struct Launch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
  LaunchError* error;
  void* (*fiber_stacks)(long long count, long long bytes);  // null here: the library maps its own
};
template <typename T, int N> struct ArrayC { T* data; long long shape[N]; };
template <typename T, int N> struct ArrayA { T* data; long long shape[N]; long long strides[N]; };

template <typename T>
inline ArrayC<T, 1> view(std::vector<T>& v) { return {v.data(), {static_cast<long long>(v.size())}}; }

// A compiled and loaded host kernel.
class HostKernel {
 public:
  using Entry = void (*)(const Launch*, void* const*);
  // flags: more compiler options (e.g. -DJIASU_HOST_UCONTEXT: fibers on ucontext, the other targets' way).
  HostKernel(const std::string& source, const std::string& entry_name, const std::string& flags = "") {
    char pattern[] = "/tmp/jiasu_host_test_XXXXXX";
    dir_ = mkdtemp(pattern);
    const fs::path cpp = dir_ / "kernel.cpp", so = dir_ / "kernel.so";
    std::ofstream(cpp) << source;
    const char* cxx = std::getenv("CXX");
    std::string command = std::string(cxx && *cxx ? cxx : "g++") + " -O2 -std=c++17 -shared -fPIC -Wall " + flags + " -o " +
                          so.string() + " " + cpp.string() + " > " + (dir_ / "log").string() + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::ifstream log(dir_ / "log");
      ADD_FAILURE() << "host compile failed:\n" << std::string(std::istreambuf_iterator<char>(log), {}) << "\n" << source;
      return;
    }
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      ADD_FAILURE() << dlerror();
      return;
    }
    entry_ = reinterpret_cast<Entry>(dlsym(handle_, entry_name.c_str()));
    EXPECT_NE(entry_, nullptr) << entry_name;
  }
  ~HostKernel() {
    if (handle_) dlclose(handle_);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  bool ok() const { return entry_ != nullptr; }

  // Runs the whole grid (or blocks [begin, end) when end >= 0), with shared_bytes of dynamic shared memory;
  // a failure the library reports is a test failure.
  void run(std::vector<long long> grid, std::vector<long long> block, std::vector<void*> params, long long begin = 0,
           long long end = -1, long long shared_bytes = 0) const {
    const std::string failure = try_run(std::move(grid), std::move(block), std::move(params), begin, end, shared_bytes);
    EXPECT_EQ(failure, "");
  }
  // The same, giving the library's failure message ("" when none).
  std::string try_run(std::vector<long long> grid, std::vector<long long> block, std::vector<void*> params,
                      long long begin = 0, long long end = -1, long long shared_bytes = 0) const {
    if (!ok()) return "not compiled";
    grid.resize(3, 1);
    block.resize(3, 1);
    LaunchError error{};
    Launch launch{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, begin, end, shared_bytes, &error, nullptr};
    if (end < 0) launch.block_end = grid[0] * grid[1] * grid[2];
    entry_(&launch, params.data());
    return error.failed ? std::string(error.message) : std::string();
  }

 private:
  fs::path dir_;
  void* handle_ = nullptr;
  Entry entry_ = nullptr;
};

inline std::unique_ptr<HostKernel> build(const std::string& text, const std::vector<Type>& signature, Globals globals = {},
                                  std::string* source = nullptr, const std::string& flags = "") {
  fe::Program program = fe::check(python(text, std::move(globals)), signature);
  emit::EmittedKernel kernel = emit::emit_host(program);
  if (source) *source = kernel.source;
  return std::make_unique<HostKernel>(kernel.source, kernel.entry_name, flags);
}

}  // namespace jiasu::host_test
