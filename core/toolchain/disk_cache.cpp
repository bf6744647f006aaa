#include "toolchain/disk_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
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

namespace jiasu {
namespace {

// Entry layout: magic, payload size (u64 little-endian), SHA-256 of the payload, payload.
constexpr std::string_view kMagic = "JIASU-CACHE-1\n";
constexpr size_t kSizeBytes = 8;
constexpr size_t kHeaderBytes = kMagic.size() + kSizeBytes + sizeof(Sha256Digest);

void append_u64_le(std::string& out, uint64_t value) {
  for (size_t i = 0; i < kSizeBytes; ++i) out += char(uint8_t(value >> (8 * i)));
}

uint64_t read_u64_le(const char* p) {
  uint64_t value = 0;
  for (size_t i = 0; i < kSizeBytes; ++i) value |= uint64_t(uint8_t(p[i])) << (8 * i);
  return value;
}

std::string encode_header(std::string_view payload) {
  std::string header(kMagic);
  append_u64_le(header, payload.size());
  Sha256Digest digest = sha256(payload);
  header.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return header;
}

// The payload of a well-formed entry; nullopt for anything truncated, extended or altered.
std::optional<std::string> decode_entry(std::string contents) {
  if (contents.size() < kHeaderBytes || std::string_view(contents).substr(0, kMagic.size()) != kMagic)
    return std::nullopt;
  const char* size_field = contents.data() + kMagic.size();
  if (read_u64_le(size_field) != contents.size() - kHeaderBytes) return std::nullopt;
  Sha256Digest stored;
  std::memcpy(stored.data(), size_field + kSizeBytes, stored.size());
  contents.erase(0, kHeaderBytes);
  if (sha256(contents) != stored) return std::nullopt;
  return contents;
}

bool read_all(int fd, std::string& out) {
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.append(chunk, size_t(n));
  }
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string contents;
  bool read_ok = read_all(fd, contents);
  ::close(fd);
  // A read error says nothing about the entry itself, so only a bad entry is deleted.
  if (!read_ok) return std::nullopt;
  std::optional<std::string> payload = decode_entry(std::move(contents));
  if (!payload) ::unlink(path.c_str());
  return payload;
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
  bool written = write_all(fd, encode_header(payload)) && write_all(fd, payload);
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
