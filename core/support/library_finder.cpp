#include "support/library_finder.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

#include "support/error.hpp"

namespace jiasu {
namespace {

std::mutex roots_mutex;
std::vector<std::string> wheel_roots;

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    return map->l_name;
  return fallback;
}

// dlopen one candidate; records the attempt (and the loader's complaint if the file exists).
void* try_open(const std::string& what, std::vector<std::string>& tried) {
  void* handle = dlopen(what.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = dlerror();
    bool exists = what.find('/') == std::string::npos || is_file(what);
    tried.push_back(exists && why ? what + " (" + why + ")" : what);
  }
  return handle;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

void set_wheel_roots(std::vector<std::string> roots) {
  std::lock_guard<std::mutex> lock(roots_mutex);
  wheel_roots = std::move(roots);
}

FoundLibrary find_library(const LibrarySpec& spec) {
  std::vector<std::string> tried;
  auto found = [&](void* handle, const std::string& path, const char* source) {
    return FoundLibrary{handle, loaded_path(handle, path), source};
  };

  // An explicit override is the user's decision: if it fails, say so instead of searching on.
  if (!spec.env_var.empty()) {
    std::string path = env(spec.env_var.c_str());
    if (!path.empty()) {
      std::vector<std::string> candidates;
      if (is_dir(path))
        for (const auto& so : spec.sonames) candidates.push_back(path + "/" + so);
      else
        candidates.push_back(path);
      for (const auto& c : candidates)
        if (void* h = try_open(c, tried)) return found(h, c, spec.env_var.c_str());
      std::string msg = spec.env_var + "=" + path + " does not name a loadable " + spec.name +
                        " library; tried:";
      for (const auto& t : tried) msg += "\n  " + t;
      throw LibraryNotFound(msg);
    }
  }

  auto try_dir = [&](const std::string& dir) -> void* {
    if (!is_dir(dir)) return nullptr;
    for (const auto& so : spec.sonames) {
      std::string path = dir + "/" + so;
      if (!is_file(path)) continue;
      if (void* h = try_open(path, tried)) return h;
    }
    return nullptr;
  };

  std::vector<std::string> roots;
  {
    std::lock_guard<std::mutex> lock(roots_mutex);
    roots = wheel_roots;
  }
  for (const auto& root : roots)
    for (const auto& sub : spec.wheel_dirs) {
      std::string dir = root + "/" + sub;
      if (void* h = try_dir(dir)) return found(h, dir, "pip wheel");
    }

  if (spec.search_cuda_home) {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      std::string home = env(var);
      if (home.empty()) continue;
      for (const char* lib : {"/lib64", "/lib"})
        if (void* h = try_dir(home + lib)) return found(h, home + lib, var);
    }
    for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"})
      if (void* h = try_dir(dir)) return found(h, dir, "/usr/local/cuda");
  }

  for (const auto& so : spec.sonames)
    if (void* h = try_open(so, tried)) return found(h, so, "system");

  std::string msg = spec.name + " library not found. Looked for";
  for (const auto& so : spec.sonames) msg += " " + so;
  msg += " in pip wheels";
  if (spec.search_cuda_home) msg += ", CUDA_HOME, CUDA_PATH, /usr/local/cuda";
  msg += " and the system loader path.";
  if (!tried.empty()) {
    msg += " Failed to load:";
    for (const auto& t : tried) msg += "\n  " + t;
  }
  if (!spec.fix.empty()) msg += "\nFix: " + spec.fix;
  throw LibraryNotFound(msg);
}

void* find_symbol(const FoundLibrary& library, const char* symbol) {
  return library.handle ? dlsym(library.handle, symbol) : nullptr;
}

void throw_missing_symbol(const FoundLibrary& library, const char* symbol, const std::string& need) {
  throw LibraryNotFound(library.path + " has no " + symbol + "; jiasu needs " + need);
}

}  // namespace jiasu
