// Compilation of host C++ (the CPU backend's kernels) with the machine's C++ compiler into a shared
// library that is dlopen'd. Built libraries can be kept in a DiskCache; nothing here runs at import.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace jiasu {

class DiskCache;

struct HostCompiler {
  std::string path;      // absolute path of the executable
  std::string identity;  // first line of `<path> --version`, e.g. "g++ (Debian 12.2.0-14) 12.2.0"
};

// Searches now, on every call: $JIASU_CXX (a path, or a name looked up on PATH) when set, else
// c++, g++, clang++ on PATH. A candidate is usable when it is executable and `--version` succeeds.
// Throws LibraryNotFound naming JIASU_CXX when it is set but unusable, or naming what to install
// when no compiler is found.
HostCompiler find_host_compiler();

// find_host_compiler() once per process (thread-safe). A failure is not remembered: the next call
// searches again, so the user can fix the environment without restarting.
const HostCompiler& host_compiler();

struct HostCompileRequest {
  std::string source;
  std::string name = "jiasu_host";   // file name stem in diagnostics: letters, digits, '_', '-', '.'
  std::vector<std::string> options;  // extra compiler flags, e.g. "-DN=4", "-ffast-math"
  bool native = false;               // add -march=native (the key then includes the host CPU)
};

// A loaded shared library. The file lives in a private temporary folder and is removed, with the
// handle closed, when the last reference goes away: symbols must not be used after that.
class HostLibrary {
 public:
  ~HostLibrary();
  HostLibrary(const HostLibrary&) = delete;
  HostLibrary& operator=(const HostLibrary&) = delete;

  // The address of an exported (extern "C") symbol; throws Error when the library lacks it.
  void* symbol(const std::string& name) const;
  const std::string& path() const { return path_; }  // the file loaded
  const std::string& log() const { return log_; }    // the compiler's warnings; empty on a cache hit
  bool from_cache() const { return from_cache_; }

 private:
  friend std::shared_ptr<HostLibrary> load_host_library(const std::string&, const std::string&,
                                                        std::string, bool);
  HostLibrary(void* handle, std::string path, std::string work_dir, std::string log, bool from_cache)
      : handle_(handle), path_(std::move(path)), work_dir_(std::move(work_dir)),
        log_(std::move(log)), from_cache_(from_cache) {}

  void* handle_;
  std::string path_;
  std::string work_dir_;  // removed with everything in it by the destructor
  std::string log_;
  bool from_cache_;
};

// Compiles request.source with `-O2 -std=c++17 -fPIC -shared -pthread` (with GCC also -fsplit-loops
// -funswitch-loops; + -march=native) and the request's options, and loads the result. With a cache, the
// library's bytes are stored under compile_cache_key (all flags, and with native the host CPU); a
// hit loads a private copy of the verified bytes without running the compiler, and a bad entry is
// rebuilt. Throws HostCompileError (with the diagnostics) when compilation fails, LibraryNotFound
// when there is no compiler, BadValue for a bad name, Error when the library cannot be loaded.
// cache may be null. Thread-safe: concurrent requests for the same key compile once.
std::shared_ptr<HostLibrary> compile_host(const HostCompileRequest& request, const DiskCache* cache);

// How many times this process has run the compiler to build a library (not --version): for tests
// and diagnostics.
std::uint64_t host_compiler_runs();

}  // namespace jiasu
