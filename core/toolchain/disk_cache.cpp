#include "toolchain/disk_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "support/error.hpp"
#include "support/sha256.hpp"
#include "toolchain/file_io.hpp"

#ifndef JIASU_VERSION
#define JIASU_VERSION "dev"
#endif

namespace jiasu {
namespace {

// Entry layout: magic, key size (u64 little-endian), key, payload size (u64), SHA-256 of the payload,
// payload. The key binds an entry to its file name: a file copied or linked over another key's entry
// is refused, not loaded. Entries of an older layout (another magic) are refused too, so they are
// rebuilt.
constexpr std::string_view kMagic = "JIASU-CACHE-2\n";
constexpr size_t kSizeBytes = 8;
constexpr size_t kSizeAndDigestBytes = kSizeBytes + sizeof(Sha256Digest);
// Larger than any image a compiler gives; a header claiming more is damage, and is not read.
constexpr uint64_t kMaxPayloadBytes = uint64_t(1) << 32;

void append_u64_le(std::string& out, uint64_t value) {
  for (size_t i = 0; i < kSizeBytes; ++i) out += char(uint8_t(value >> (8 * i)));
}

uint64_t read_u64_le(const char* p) {
  uint64_t value = 0;
  for (size_t i = 0; i < kSizeBytes; ++i) value |= uint64_t(uint8_t(p[i])) << (8 * i);
  return value;
}

// The part of the header that depends on the key alone: what a reader expects byte for byte.
std::string key_prefix(const std::string& key) {
  std::string prefix(kMagic);
  append_u64_le(prefix, key.size());
  return prefix + key;
}

std::string encode_header(const std::string& key, std::string_view payload) {
  std::string header = key_prefix(key);
  append_u64_le(header, payload.size());
  Sha256Digest digest = sha256(payload);
  header.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return header;
}

// Reads exactly size bytes; false on an error or an early end.
bool read_exactly(int fd, char* out, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= size_t(n);
  }
  return true;
}

enum class EntryState { Good, Bad, Unreadable };

// Reads the entry open on fd for key into payload. Bad: not a regular file, or anything truncated,
// extended, altered or stored under another key (the caller deletes it). Unreadable: an I/O error,
// which says nothing about the entry. Reads no further than the size in the header, which must be
// the file's.
EntryState read_entry(int fd, const std::string& key, const struct stat& info, std::string& payload) {
  if (!S_ISREG(info.st_mode)) return EntryState::Bad;
  const std::string expected_prefix = key_prefix(key);
  const uint64_t file_size = uint64_t(info.st_size);
  if (file_size < expected_prefix.size() + kSizeAndDigestBytes) return EntryState::Bad;
  std::string header(expected_prefix.size() + kSizeAndDigestBytes, '\0');
  if (!read_exactly(fd, header.data(), header.size())) return EntryState::Unreadable;
  if (std::string_view(header).substr(0, expected_prefix.size()) != expected_prefix)
    return EntryState::Bad;
  const char* size_field = header.data() + expected_prefix.size();
  uint64_t payload_size = read_u64_le(size_field);
  if (payload_size > kMaxPayloadBytes || payload_size != file_size - header.size())
    return EntryState::Bad;
  payload.assign(size_t(payload_size), '\0');
  if (!read_exactly(fd, payload.data(), payload.size())) return EntryState::Unreadable;
  char extra;
  ssize_t more = ::read(fd, &extra, 1);
  if (more < 0) return EntryState::Unreadable;
  if (more > 0) return EntryState::Bad;  // grew since fstat
  Sha256Digest stored;
  std::memcpy(stored.data(), size_field + kSizeBytes, stored.size());
  return sha256(payload) == stored ? EntryState::Good : EntryState::Bad;
}

uint64_t process_nonce() {
  try {
    std::random_device device;
    return (uint64_t(device()) << 32) ^ device();
  } catch (const std::exception&) {
    // No entropy source: the pid and counter still make names unique within this machine.
    return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }
}

// Unique across threads (counter), processes (pid, also after fork) and pid reuse (nonce).
std::string temp_suffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t nonce = process_nonce();
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(nonce);
}

void check_key(const std::string& key) {
  bool valid = key.size() >= 2;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) valid = false;
  if (!valid) throw BadValue("invalid compile-cache key '" + key + "'");
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string home_dir() {
  std::string home = env("HOME");
  if (!home.empty()) return home;
  // No $HOME (some daemons and containers): ask the user database.
  std::vector<char> buffer(16384);
  struct passwd entry;
  struct passwd* result = nullptr;
  if (getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &result) == 0 && result &&
      result->pw_dir)
    return result->pw_dir;
  return "";
}

}  // namespace

std::string cache_key(std::initializer_list<std::string_view> parts) {
  Sha256 hasher;
  for (std::string_view part : parts) {
    std::string length;
    append_u64_le(length, part.size());
    hasher.update(length);
    hasher.update(part);
  }
  return to_hex(hasher.finish());
}

std::string compile_cache_key(const CompileInputs& inputs) {
  std::string joined_options;
  for (const std::string& option : inputs.options) joined_options += option + '\0';
  return cache_key({inputs.compiler, inputs.identity, inputs.source, inputs.name, joined_options,
                    inputs.target, JIASU_VERSION});
}

std::string default_cache_dir() {
  std::string explicit_dir = env("JIASU_CACHE_DIR");
  if (!explicit_dir.empty()) return explicit_dir;
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return (std::filesystem::path(xdg) / "jiasu").string();
  std::string home = home_dir();
  if (home.empty())
    throw Error("no home directory to put the compile cache in; set JIASU_CACHE_DIR");
  return (std::filesystem::path(home) / ".cache" / "jiasu").string();
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) throw BadValue("the compile-cache directory must not be empty");
}

std::optional<std::string> DiskCache::load(const std::string& key) const {
  check_key(key);
  std::string path = dir_ + "/" + key.substr(0, 2) + "/" + key;
  // O_NOFOLLOW: a symbolic link is refused (ELOOP), not followed to /dev/zero or another entry.
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; regular files ignore it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) ::unlink(path.c_str());
    return std::nullopt;
  }
  struct stat info;
  std::string payload;
  EntryState state = ::fstat(fd, &info) != 0 ? EntryState::Unreadable
                                             : read_entry(fd, key, info, payload);
  ::close(fd);
  if (state == EntryState::Good) return payload;
  // Delete only what was read: a good entry renamed into place meanwhile stays.
  struct stat now;
  if (state == EntryState::Bad && ::lstat(path.c_str(), &now) == 0 && now.st_dev == info.st_dev &&
      now.st_ino == info.st_ino)
    ::unlink(path.c_str());
  return std::nullopt;
}

void DiskCache::store(const std::string& key, std::string_view payload) const {
  check_key(key);
  std::string subdir = dir_ + "/" + key.substr(0, 2);
  std::error_code error;
  std::filesystem::create_directories(subdir, error);
  if (error) return;

  // Write a private file, then rename() it into place: readers see the old entry or the whole new
  // one, never a partial write. No fsync: load() verifies the hash, so an entry damaged by a crash
  // only costs a recompile.
  std::string temp_path = subdir + "/.tmp-" + key + "-" + temp_suffix();
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool written = write_all(fd, encode_header(key, payload)) && write_all(fd, payload);
  bool closed = ::close(fd) == 0;
  std::string final_path = subdir + "/" + key;
  if (!written || !closed || ::rename(temp_path.c_str(), final_path.c_str()) != 0)
    ::unlink(temp_path.c_str());
}

const DiskCache& compile_cache() {
  static const DiskCache cache(default_cache_dir());
  return cache;
}

}  // namespace jiasu
