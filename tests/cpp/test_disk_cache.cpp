#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "support/error.hpp"
#include "support/sha256.hpp"
#include "test_support.hpp"
#include "toolchain/disk_cache.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;
using testing::files_under;
using testing::ScopedEnv;

// A fresh directory per test, removed afterwards.
class DiskCacheTest : public ::testing::Test {
 protected:
  // The layout documented in disk_cache.hpp: <dir>/<first 2 chars>/<key>.
  static fs::path entry_path(const DiskCache& cache, const std::string& key) {
    return fs::path(cache.dir()) / key.substr(0, 2) / key;
  }

  static std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  testing::TempDir temp_dir_;
  const fs::path root_ = temp_dir_.path();
};

TEST(CacheKey, MatchesIndependentComputation) {
  // python3 -c "import hashlib; print(hashlib.sha256(b''.join(len(p).to_bytes(8, 'little') + p
  //             for p in [b'ab', b'c'])).hexdigest())"
  EXPECT_EQ(cache_key({"ab", "c"}),
            "43ee655579de01ca739b3f95c1c2d3f46d353b2c0df818064ea594506cdb2617");
}

TEST(CacheKey, StableAcrossCalls) {
  std::string source = "__global__ void k() {}";
  EXPECT_EQ(cache_key({source, "-arch=sm_90", "cubin"}), cache_key({source, "-arch=sm_90", "cubin"}));
}

TEST(CacheKey, PartBoundariesMatter) {
  EXPECT_NE(cache_key({"ab", "c"}), cache_key({"a", "bc"}));
  EXPECT_NE(cache_key({"a"}), cache_key({"a", ""}));
  EXPECT_NE(cache_key({}), cache_key({""}));
  EXPECT_NE(cache_key({"x", "90"}), cache_key({"x", "80"}));
  EXPECT_EQ(cache_key({"ab", "c"}).size(), 64u);
}

TEST(CompileCacheKey, EveryInputMatters) {
  const std::vector<std::string> options = {"-O2", "-DN=4"};
  const std::vector<std::string> other_options = {"-O2", "-DN=5"};
  const std::vector<std::string> split_options = {"-O2-DN=4"};
  const CompileInputs base{"host", "g++ 12", "int f();", "kernel", options, ""};
  const std::string key = compile_cache_key(base);
  EXPECT_EQ(key, compile_cache_key(base));
  EXPECT_EQ(key.size(), 64u);
  std::vector<CompileInputs> changed(5, base);
  changed[0].compiler = "nvrtc";
  changed[1].identity = "g++ 13";
  changed[2].source = "int g();";
  changed[3].name = "kernel2";
  changed[4].target = "native\nmodel name: x";
  CompileInputs with_other_options{"host", "g++ 12", "int f();", "kernel", other_options, ""};
  CompileInputs with_split_options{"host", "g++ 12", "int f();", "kernel", split_options, ""};
  std::set<std::string> keys = {key, compile_cache_key(with_other_options),
                                compile_cache_key(with_split_options)};
  for (const CompileInputs& inputs : changed) keys.insert(compile_cache_key(inputs));
  EXPECT_EQ(keys.size(), 8u);
}

TEST_F(DiskCacheTest, RoundTrip) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"round", "trip"});
  std::string payload("binary\0payload\xff\x01", 17);
  EXPECT_EQ(cache.load(key), std::nullopt);
  cache.store(key, payload);
  EXPECT_EQ(cache.load(key), payload);
  EXPECT_TRUE(fs::is_regular_file(entry_path(cache, key)));
}

TEST_F(DiskCacheTest, EmptyAndLargePayloads) {
  DiskCache cache(root_.string());
  std::string empty_key = cache_key({"empty"});
  cache.store(empty_key, "");
  EXPECT_EQ(cache.load(empty_key), std::string());

  std::string large_key = cache_key({"large"});
  std::string large(3 << 20, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = char(i * 31 % 251);
  cache.store(large_key, large);
  EXPECT_EQ(cache.load(large_key), large);
}

TEST_F(DiskCacheTest, StoreReplacesAnEntry) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"replace"});
  cache.store(key, "old");
  cache.store(key, "new");
  EXPECT_EQ(cache.load(key), "new");
}

TEST_F(DiskCacheTest, CreatesMissingDirectories) {
  DiskCache cache((root_ / "a" / "b" / "c").string());
  std::string key = cache_key({"nested"});
  cache.store(key, "payload");
  EXPECT_EQ(cache.load(key), "payload");
}

TEST_F(DiskCacheTest, AtomicWriteLeavesNoTempFiles) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"atomic"});
  cache.store(key, "payload");
  EXPECT_EQ(files_under(root_), std::vector<fs::path>{entry_path(cache, key)});
}

TEST_F(DiskCacheTest, ConcurrentWritersOfOneKey) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"concurrent"});
  std::vector<std::string> payloads;
  for (int i = 0; i < 8; ++i) payloads.push_back(std::string(100000 + i, char('a' + i)));
  std::vector<std::thread> writers;
  for (const std::string& payload : payloads)
    writers.emplace_back([&cache, &key, &payload] {
      for (int round = 0; round < 20; ++round) cache.store(key, payload);
    });
  for (std::thread& writer : writers) writer.join();

  std::optional<std::string> loaded = cache.load(key);
  ASSERT_TRUE(loaded);
  EXPECT_NE(std::find(payloads.begin(), payloads.end(), *loaded), payloads.end());
  EXPECT_EQ(files_under(root_).size(), 1u);
}

TEST_F(DiskCacheTest, TruncatedEntryIsDeleted) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"truncated"});
  cache.store(key, std::string(1000, 'x'));
  fs::path path = entry_path(cache, key);
  fs::resize_file(path, fs::file_size(path) / 2);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, TruncatedInsideHeaderIsDeleted) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"header"});
  cache.store(key, "payload");
  fs::path path = entry_path(cache, key);
  fs::resize_file(path, 10);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, FlippedPayloadByteIsRejected) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"flipped"});
  std::string payload(500, 'p');
  cache.store(key, payload);
  fs::path path = entry_path(cache, key);
  std::string bytes = read_file(path);
  bytes[bytes.size() - 100] ^= 0x01;
  write_file(path, bytes);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, AppendedBytesAreRejected) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"appended"});
  cache.store(key, "payload");
  fs::path path = entry_path(cache, key);
  write_file(path, read_file(path) + "extra");
  EXPECT_EQ(cache.load(key), std::nullopt);
}

TEST_F(DiskCacheTest, GarbageFileIsRejected) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"garbage"});
  fs::path path = entry_path(cache, key);
  fs::create_directories(path.parent_path());
  write_file(path, "this is not a cache entry at all, just some text long enough for a header");
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, EntryCopiedOverAnotherKeyIsRejected) {
  DiskCache cache(root_.string());
  std::string float32_key = cache_key({"kernel", "float32"});
  std::string float64_key = cache_key({"kernel", "float64"});
  cache.store(float32_key, "float32 build");
  cache.store(float64_key, "float64 build");
  fs::copy_file(entry_path(cache, float32_key), entry_path(cache, float64_key),
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(cache.load(float64_key), std::nullopt);
  EXPECT_FALSE(fs::exists(entry_path(cache, float64_key)));
  EXPECT_EQ(cache.load(float32_key), "float32 build");  // the original is untouched
  cache.store(float64_key, "float64 build");
  EXPECT_EQ(cache.load(float64_key), "float64 build");
}

TEST_F(DiskCacheTest, EntryOfTheOlderLayoutIsAMissAndIsRebuilt) {
  // The layout before keys were stored: magic, payload size (u64 LE), SHA-256(payload), payload.
  DiskCache cache(root_.string());
  std::string key = cache_key({"old", "layout"});
  std::string payload = "old payload";
  std::string entry = "JIASU-CACHE-1\n";
  for (int i = 0; i < 8; ++i) entry += char(uint8_t(uint64_t(payload.size()) >> (8 * i)));
  Sha256Digest digest = sha256(payload);
  entry.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  entry += payload;
  fs::path path = entry_path(cache, key);
  fs::create_directories(path.parent_path());
  write_file(path, entry);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
  cache.store(key, payload);
  EXPECT_EQ(cache.load(key), payload);
}

TEST_F(DiskCacheTest, SymbolicLinkIsNotFollowed) {
  // A link to a good entry of the same key, kept elsewhere: still not loaded.
  DiskCache elsewhere((root_ / "elsewhere").string());
  DiskCache cache((root_ / "cache").string());
  std::string key = cache_key({"linked"});
  elsewhere.store(key, "payload");
  fs::path path = entry_path(cache, key);
  fs::create_directories(path.parent_path());
  fs::create_symlink(entry_path(elsewhere, key), path);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::is_symlink(path));  // the link is removed, not its target
  EXPECT_EQ(elsewhere.load(key), "payload");
}

TEST_F(DiskCacheTest, SymbolicLinkToDevZeroIsNotRead) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"zero"});
  fs::path path = entry_path(cache, key);
  fs::create_directories(path.parent_path());
  fs::create_symlink("/dev/zero", path);
  // In a child with little memory, so that reading without end fails the test instead of the
  // machine: 0 = a miss, 1 = loaded something, 2 = ran out of memory.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit = {size_t(512) << 20, size_t(512) << 20};
    setrlimit(RLIMIT_DATA, &limit);
    try {
      _exit(cache.load(key) ? 1 : 0);
    } catch (const std::bad_alloc&) {
      _exit(2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::is_symlink(path));
}

TEST_F(DiskCacheTest, FifoIsNotWaitedOn) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"fifo"});
  fs::path path = entry_path(cache, key);
  fs::create_directories(path.parent_path());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::future<std::optional<std::string>> loaded =
      std::async(std::launch::async, [&] { return cache.load(key); });
  if (loaded.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Blocked in open(): a writer lets it go on, so that the test ends.
    int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    ADD_FAILURE() << "load() waited on a FIFO";
  }
  EXPECT_EQ(loaded.get(), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
  cache.store(key, "payload");
  EXPECT_EQ(cache.load(key), "payload");
}

TEST_F(DiskCacheTest, HeaderClaimingMoreThanTheFileIsRejected) {
  DiskCache cache(root_.string());
  std::string key = cache_key({"claims"});
  cache.store(key, "payload");
  fs::path path = entry_path(cache, key);
  std::string bytes = read_file(path);
  // The payload size field sits just before the 32-byte digest and the payload.
  size_t size_field = bytes.size() - 7 - 32 - 8;
  bytes[size_field + 7] = '\x7f';
  write_file(path, bytes);
  EXPECT_EQ(cache.load(key), std::nullopt);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, UnwritableDirectoryDoesNotThrow) {
  // A regular file where a directory should be: fails even for root, unlike a chmod'ed folder.
  fs::path blocker = root_ / "not-a-directory";
  write_file(blocker, "x");
  DiskCache cache((blocker / "cache").string());
  std::string key = cache_key({"unwritable"});
  EXPECT_NO_THROW(cache.store(key, "payload"));
  EXPECT_EQ(cache.load(key), std::nullopt);

  if (geteuid() != 0) {  // root ignores permission bits
    fs::path read_only = root_ / "read-only";
    fs::create_directories(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
    DiskCache read_only_cache(read_only.string());
    EXPECT_NO_THROW(read_only_cache.store(key, "payload"));
    EXPECT_EQ(read_only_cache.load(key), std::nullopt);
    fs::permissions(read_only, fs::perms::owner_all);
  }
}

TEST_F(DiskCacheTest, InvalidKeysAndDirAreRejected) {
  DiskCache cache(root_.string());
  for (const char* key : {"", "a", "../escape", "a/b", "with space"}) {
    EXPECT_THROW(cache.load(key), BadValue) << key;
    EXPECT_THROW(cache.store(key, "x"), BadValue) << key;
  }
  EXPECT_THROW(DiskCache(""), BadValue);
}

TEST(DefaultCacheDir, Precedence) {
  {
    ScopedEnv jiasu("JIASU_CACHE_DIR", "/explicit/dir");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), "/explicit/dir");
  }
  {
    ScopedEnv jiasu("JIASU_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), "/xdg/jiasu");
  }
  {
    ScopedEnv jiasu("JIASU_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/jiasu");
  }
  {
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    ScopedEnv jiasu("JIASU_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "relative");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/jiasu");
  }
}

}  // namespace
}  // namespace jiasu
