#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "support/error.hpp"
#include "test_support.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/host_compiler.hpp"
#include "toolchain/process_temp_dir.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;
using testing::files_under;
using testing::message_of;
using testing::ScopedEnv;

constexpr const char* kAddSource = "extern \"C\" int add(int a, int b) { return a + b; }\n";

using AddFunction = int (*)(int, int);

// A fresh cache directory per test, removed afterwards. Skips when the machine has no compiler.
class HostCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      host_compiler();
    } catch (const LibraryNotFound& e) {
      GTEST_SKIP() << e.what();
    }
  }

  testing::TempDir temp_dir_;
  const fs::path root_ = temp_dir_.path();
};

TEST_F(HostCompilerTest, FindsACompilerWithAnIdentity) {
  const HostCompiler& compiler = host_compiler();
  EXPECT_TRUE(fs::path(compiler.path).is_absolute()) << compiler.path;
  EXPECT_FALSE(compiler.identity.empty());
  EXPECT_EQ(compiler.identity.find('\n'), std::string::npos);
  EXPECT_EQ(&host_compiler(), &compiler);  // found once
}

TEST_F(HostCompilerTest, CompilesAndCallsAFunction) {
  HostCompileRequest request;
  request.source = kAddSource;
  std::shared_ptr<HostLibrary> library = compile_host(request, nullptr);
  auto add = reinterpret_cast<AddFunction>(library->symbol("add"));
  EXPECT_EQ(add(2, 40), 42);
  EXPECT_FALSE(library->from_cache());
  EXPECT_TRUE(fs::exists(library->path()));
  EXPECT_NE(message_of<Error>([&] { library->symbol("missing"); }).find("missing"),
            std::string::npos);
}

TEST_F(HostCompilerTest, LibraryFileIsRemovedWithTheLastReference) {
  HostCompileRequest request;
  request.source = kAddSource;
  std::string path = compile_host(request, nullptr)->path();
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(HostCompilerTest, OptionsAndNativeReachTheCompiler) {
  HostCompileRequest request;
  request.source = "extern \"C\" int value() { return VALUE; }\n";
  request.options = {"-DVALUE=7"};
  request.native = true;
  std::shared_ptr<HostLibrary> library = compile_host(request, nullptr);  // keep it loaded
  auto value = reinterpret_cast<int (*)()>(library->symbol("value"));
  EXPECT_EQ(value(), 7);
}

TEST_F(HostCompilerTest, SecondCompileIsACacheHitWithoutTheCompiler) {
  DiskCache cache(root_.string());
  HostCompileRequest request;
  request.source = kAddSource;
  std::shared_ptr<HostLibrary> first = compile_host(request, &cache);
  EXPECT_FALSE(first->from_cache());
  EXPECT_EQ(files_under(root_).size(), 1u);

  std::uint64_t runs = host_compiler_runs();
  std::shared_ptr<HostLibrary> second = compile_host(request, &cache);
  EXPECT_TRUE(second->from_cache());
  EXPECT_EQ(host_compiler_runs(), runs);
  EXPECT_NE(second->path(), first->path());  // a private copy: both stay loaded independently
  EXPECT_EQ(reinterpret_cast<AddFunction>(second->symbol("add"))(1, 2), 3);

  // Other options, another key: compiled again.
  request.options = {"-DUNUSED=1"};
  EXPECT_FALSE(compile_host(request, &cache)->from_cache());
  EXPECT_EQ(host_compiler_runs(), runs + 1);
  EXPECT_EQ(files_under(root_).size(), 2u);
}

TEST_F(HostCompilerTest, CorruptEntryIsRebuiltNotLoaded) {
  DiskCache cache(root_.string());
  HostCompileRequest request;
  request.source = kAddSource;
  compile_host(request, &cache);
  std::vector<fs::path> files = files_under(root_);
  ASSERT_EQ(files.size(), 1u);
  {
    // Flip a byte in the middle of the stored library.
    std::fstream file(files[0], std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(std::streamoff(fs::file_size(files[0]) / 2));
    file.put('\x5a');
  }
  std::uint64_t runs = host_compiler_runs();
  std::shared_ptr<HostLibrary> library = compile_host(request, &cache);
  EXPECT_FALSE(library->from_cache());
  EXPECT_EQ(host_compiler_runs(), runs + 1);
  EXPECT_EQ(reinterpret_cast<AddFunction>(library->symbol("add"))(20, 22), 42);
  EXPECT_TRUE(compile_host(request, &cache)->from_cache());  // the rebuilt entry is good
  EXPECT_EQ(host_compiler_runs(), runs + 1);
}

TEST_F(HostCompilerTest, SyntaxErrorGivesDiagnosticsWithLineNumber) {
  DiskCache cache(root_.string());
  HostCompileRequest request;
  request.name = "broken_kernel";
  request.source = "extern \"C\" int f() {\n  return 1;\n  this is not C++;\n}\n";
  try {
    compile_host(request, &cache);
    FAIL() << "expected HostCompileError";
  } catch (const HostCompileError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("broken_kernel.cpp:3:"), std::string::npos) << message;
    EXPECT_NE(e.log().find("broken_kernel.cpp:3:"), std::string::npos) << e.log();
    // The private temporary folder is not shown.
    EXPECT_EQ(message.find("jiasu-host-"), std::string::npos) << message;
  }
  EXPECT_TRUE(files_under(root_).empty());  // nothing cached for a failure
}

TEST_F(HostCompilerTest, BadNameIsRejected) {
  HostCompileRequest request;
  request.source = kAddSource;
  request.name = "../escape";
  EXPECT_THROW(compile_host(request, nullptr), BadValue);
}

TEST_F(HostCompilerTest, ConcurrentRequestsForOneKeyCompileOnce) {
  DiskCache cache(root_.string());
  HostCompileRequest request;
  request.source = "extern \"C\" int twice(int x) { return 2 * x; }\n";
  std::uint64_t runs = host_compiler_runs();
  std::vector<std::shared_ptr<HostLibrary>> libraries(4);
  std::vector<std::thread> threads;
  for (auto& library : libraries)
    threads.emplace_back([&] { library = compile_host(request, &cache); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(host_compiler_runs(), runs + 1);
  for (auto& library : libraries)
    EXPECT_EQ(reinterpret_cast<int (*)(int)>(library->symbol("twice"))(21), 42);
}

// The pid of a process that has ended (and been reaped).
pid_t gone_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

TEST(ProcessTempDir, OnlyFoldersOfGoneProcessesAreRemoved) {
  testing::TempDir base;
  auto make = [&](const std::string& name, bool with_lock) {
    fs::path dir = base.path() / name;
    fs::create_directories(dir / "0");
    std::ofstream(dir / "0" / "kernel.so") << "x";
    if (with_lock) std::ofstream(dir / ".lock");
    return dir;
  };
  std::string gone = std::to_string(gone_pid());
  make("jiasu-host-" + gone + "-Stale1", true);
  make("jiasu-host-" + std::to_string(getpid()) + "-Alive1", true);  // its process runs
  make("jiasu-host-" + gone + "-NoLock", false);                     // not made by jiasu
  make("jiasu-host-" + gone + "-toolong", true);                     // another name
  make("jiasu-host-OldOne", true);                                   // the older naming
  // A live process that this PID namespace cannot see holds its folder's lock.
  fs::path locked = make("jiasu-host-" + gone + "-Locked", true);
  int lock = open((locked / ".lock").c_str(), O_RDONLY);
  ASSERT_EQ(flock(lock, LOCK_EX), 0);
  // A symbolic link is not followed into its target.
  fs::path target = make("target", true);
  fs::create_directory_symlink(target, base.path() / ("jiasu-host-" + gone + "-Linked"));
  std::set<std::string> kept = names_in(base.path());
  kept.erase("jiasu-host-" + gone + "-Stale1");
  if (geteuid() == 0) {  // another user's folder (only root can make one)
    fs::path foreign = make("jiasu-host-" + gone + "-Others", true);
    ASSERT_EQ(chown((foreign / ".lock").c_str(), 65534, 65534), 0);
    ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
    kept.insert(foreign.filename());
  }

  remove_stale_temp_dirs(base.path().string());
  EXPECT_EQ(names_in(base.path()), kept);
  EXPECT_TRUE(fs::exists(target / "0" / "kernel.so"));

  close(lock);  // now nobody holds it
  remove_stale_temp_dirs(base.path().string());
  EXPECT_FALSE(fs::exists(locked));
}

TEST(ProcessTempDir, TheProcessHoldsItsFoldersLock) {
  std::string work = make_work_dir();
  fs::path dir = fs::path(work).parent_path();
  std::string name = dir.filename();
  EXPECT_EQ(name.rfind("jiasu-host-" + std::to_string(getpid()) + "-", 0), 0u) << name;
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  int probe = open((dir / ".lock").c_str(), O_RDONLY);
  ASSERT_GE(probe, 0);
  EXPECT_NE(flock(probe, LOCK_EX | LOCK_NB), 0);  // held: a cleaner leaves the folder alone
  close(probe);
  remove_stale_temp_dirs(dir.parent_path().string());
  EXPECT_TRUE(fs::is_directory(work));
  fs::remove(work);
}

TEST(HostCompilerFinder, ABackgroundProcessKeepingTheOutputOpenDoesNotBlock) {
  testing::TempDir dir;
  fs::path wrapper = dir.path() / "c++";
  fs::path pid_file = dir.path() / "sleeper.pid";
  std::ofstream(wrapper) << "#!/bin/sh\nsleep 3600 &\necho $! > " << pid_file.string()
                         << "\nexec c++ \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  ScopedEnv cxx("JIASU_CXX", wrapper.c_str());
  HostCompiler compiler;
  try {
    compiler = find_host_compiler();  // the sleeper holds the output pipe for an hour
  } catch (const LibraryNotFound& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_EQ(compiler.path, wrapper.string());
  EXPECT_FALSE(compiler.identity.empty());
  pid_t sleeper = 0;
  std::ifstream(pid_file) >> sleeper;
  if (sleeper > 0) kill(sleeper, SIGKILL);
}

// find_host_compiler() searches on every call, unlike host_compiler().
TEST(HostCompilerFinder, MissingJiasuCxxIsNamed) {
  ScopedEnv cxx("JIASU_CXX", "/nonexistent/c++");
  std::string message = message_of<LibraryNotFound>([] { find_host_compiler(); });
  EXPECT_NE(message.find("JIASU_CXX"), std::string::npos) << message;
  EXPECT_NE(message.find("/nonexistent/c++"), std::string::npos) << message;
}

TEST(HostCompilerFinder, JiasuCxxThatIsNotACompilerIsNamed) {
  ScopedEnv cxx("JIASU_CXX", "false");  // on PATH, but `false --version` fails
  std::string message = message_of<LibraryNotFound>([] { find_host_compiler(); });
  EXPECT_NE(message.find("JIASU_CXX"), std::string::npos) << message;
}

TEST(HostCompilerFinder, NoCompilerOnPathSaysWhatToInstall) {
  ScopedEnv cxx("JIASU_CXX", nullptr);
  ScopedEnv path("PATH", "/nonexistent");
  std::string message = message_of<LibraryNotFound>([] { find_host_compiler(); });
  EXPECT_NE(message.find("install a C++ compiler"), std::string::npos) << message;
  EXPECT_NE(message.find("JIASU_CXX"), std::string::npos) << message;
}

TEST(HostCompilerFinder, JiasuCxxByNameIsFoundOnPath) {
  ScopedEnv cxx("JIASU_CXX", "g++");
  HostCompiler compiler;
  try {
    compiler = find_host_compiler();
  } catch (const LibraryNotFound& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_EQ(fs::path(compiler.path).filename(), "g++");
  EXPECT_FALSE(compiler.identity.empty());
}

}  // namespace
}  // namespace jiasu
