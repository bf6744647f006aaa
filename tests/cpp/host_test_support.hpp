// Shared by the host-emitter tests: a Python kernel emitted as host C++, compiled with the system C++
// compiler (compile_host) into a private shared library, loaded and run on host arrays.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "cpu/host_kernel.hpp"
#include "cpu/host_trap.hpp"
#include "emit/emit.hpp"
#include "support/error.hpp"
#include "cpu/runtime/host_abi.h"
#include "emit/runtime/array_abi.h"
#include "toolchain/host_compiler.hpp"

namespace jiasu::host_test {

using fe::GlobalValue;
using fe::Type;
using namespace testing;  // the kernel builders: python(), array(), scalar(), ...

// The layouts the entry point reads, as the runtime header declares them.
using LaunchError = jiasu::HostError;
using Launch = jiasu::HostLaunch;
using jiasu::ArrayA;  // emit/runtime/array_abi.h
using jiasu::ArrayC;

template <typename T>
inline ArrayC<T, 1> view(std::vector<T>& v) { return {v.data(), {static_cast<long long>(v.size())}}; }

// The sums of x's consecutive chunks of width elements (the last one may be shorter).
template <typename T>
std::vector<T> chunk_sums(const std::vector<T>& x, long long width) {
  std::vector<T> sums;
  for (auto begin = x.begin(); begin != x.end();) {
    const auto end = begin + std::min<long long>(width, x.end() - begin);
    sums.push_back(std::accumulate(begin, end, T{}));
    begin = end;
  }
  return sums;
}

// The whitespace-separated words of text, e.g. compiler options.
inline std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

// A compiled and loaded host kernel.
class LoadedKernel {
 public:
  using Entry = void (*)(const Launch*, void* const*);
  // flags: more compiler options (e.g. -DJIASU_HOST_UCONTEXT: fibers on ucontext, the other targets' way).
  LoadedKernel(const std::string& source, const std::string& entry_name, const std::string& flags = "") {
    HostCompileRequest request;
    request.source = source;
    request.options = words("-Wall " + flags);
    try {
      library_ = compile_host(request, nullptr);
      entry_ = reinterpret_cast<Entry>(library_->symbol(entry_name));
    } catch (const Error& e) {
      ADD_FAILURE() << "building host kernel " << entry_name << " failed:\n" << e.what() << "\n" << source;
    }
  }
  bool ok() const { return entry_ != nullptr; }
  void* (*fiber_stacks)(long long count, long long* bytes) = &lend_fiber_stacks;  // HostLaunch's, for the runs

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
    static const volatile sig_atomic_t never = 0;
    Launch launch{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, begin, end, shared_bytes, &error,
                  fiber_stacks, &arm_host_trap, &never};
    if (end < 0) launch.block_end = grid[0] * grid[1] * grid[2];
    entry_(&launch, params.data());
    return error.failed ? std::string(error.message) : std::string();
  }

 private:
  std::shared_ptr<HostLibrary> library_;  // keeps entry_ loaded
  Entry entry_ = nullptr;
};

inline std::unique_ptr<LoadedKernel> build(const std::string& text, const std::vector<Type>& signature, Globals globals = {},
                                  std::string* source = nullptr, const std::string& flags = "") {
  fe::Program program = fe::check(python(text, std::move(globals)), signature);
  emit::EmittedKernel kernel = emit::emit_host(program);
  if (source) *source = kernel.source;
  return std::make_unique<LoadedKernel>(kernel.source, kernel.entry_name, flags);
}

}  // namespace jiasu::host_test
