// A content-addressed on-disk cache of compiled code (cubin / PTX), shared by every process of a
// user. Entries are written atomically and verified on read (bytes and the key they were stored
// under), so a crash, a concurrent writer or a file copied over another can cost a recompile but
// never hand back a damaged or foreign image.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jiasu {

// Hex SHA-256 over the parts, each prefixed by its length (u64, little-endian), so that
// ("ab", "c") and ("a", "bc") give different keys.
std::string cache_key(std::initializer_list<std::string_view> parts);

// What a compiled image depends on: the one definition of the compile cache's key, for NVRTC and
// the host compiler alike.
struct CompileInputs {
  std::string_view compiler;                // the toolchain: "nvrtc" or "host"
  std::string_view identity;                // its version: "13.0", or the host compiler's --version line
  std::string_view source;
  std::string_view name;                    // the file name, which diagnostics and debug info embed
  const std::vector<std::string>& options;  // every option passed, the ones jiasu adds included
  std::string_view target;                  // "cubin 90", "ptx 90"; host: "" or "native" + the CPU
};

// cache_key over the inputs (options joined with NUL, which no option contains) and JIASU_VERSION.
std::string compile_cache_key(const CompileInputs& inputs);

// $JIASU_CACHE_DIR, else $XDG_CACHE_HOME/jiasu, else ~/.cache/jiasu. Throws Error only when
// there is no home directory either.
std::string default_cache_dir();

// Keys are file names: letters, digits, '-' and '_', at least 2 characters (cache_key() gives 64
// hex digits). Any other key throws BadValue. An entry lives at <dir>/<first 2 chars>/<key>.
class DiskCache {
 public:
  // The directory is created on the first store, not here. An empty dir throws BadValue.
  explicit DiskCache(std::string dir);

  // The payload stored under key, or nullopt when absent or bad. Bad, and deleted: damaged, stored
  // under another key, of an older layout, or not a regular file (a symbolic link is not followed, a
  // FIFO not waited on). Reads no more than the entry's header announces.
  std::optional<std::string> load(const std::string& key) const;

  // Best effort: an I/O failure (read-only or full disk, ...) is silently ignored.
  void store(const std::string& key, std::string_view payload) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// The process-wide compile cache, in default_cache_dir(): NVRTC's images and the CPU backend's libraries.
const DiskCache& compile_cache();

}  // namespace jiasu
