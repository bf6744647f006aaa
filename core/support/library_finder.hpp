// Finds and dlopens the CUDA libraries jiasu uses at run time (driver, NVRTC, cuDNN, cuBLAS, NCCL).
// Nothing is linked at build time, so a machine without them still imports jiasu.
#pragma once

#include <atomic>
#include <mutex>
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

// Throws LibraryNotFound: `library` lacks `symbol`, and jiasu needs `need` (e.g. "NVRTC 12 or newer").
[[noreturn]] void throw_missing_symbol(const FoundLibrary& library, const char* symbol, const std::string& need);

// slot = the function `name` of `library`, which must have it (else throw_missing_symbol).
template <typename Function>
void bind_required(const FoundLibrary& library, const char* name, Function& slot, const std::string& need) {
  slot = reinterpret_cast<Function>(find_symbol(library, name));
  if (!slot) throw_missing_symbol(library, name, need);
}

// slot = the function `name` of `library`, or nullptr when it lacks it.
template <typename Function>
void bind_optional(const FoundLibrary& library, const char* name, Function& slot) {
  slot = reinterpret_cast<Function>(find_symbol(library, name));
}

// A library's function table, loaded by load() at the first call and kept for the process (never freed:
// destructors of other statics may still use it at exit). A failed load throws, and is tried again at the
// next call, so the user can fix the environment without restarting. One table per (T, load).
template <typename T, typename Load>
const T& load_once(const Load& load) {
  static std::mutex mutex;
  static std::atomic<const T*> loaded{nullptr};
  if (const T* table = loaded.load(std::memory_order_acquire)) return *table;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded.load(std::memory_order_relaxed)) loaded.store(new T(load()), std::memory_order_release);
  return *loaded.load(std::memory_order_relaxed);
}

}  // namespace jiasu
