#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/error.hpp"
#include "support/library_finder.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;
using testing::installed_nvrtc_dir;
using testing::ScopedEnv;

LibrarySpec nvrtc_like_spec() {
  LibrarySpec spec;
  spec.name = "NVRTC";
  spec.env_var = "JIASU_NVRTC";
  spec.sonames = {"libnvrtc.so.13", "libnvrtc.so.12"};
  spec.wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"};
  spec.fix = "pip install nvidia-cuda-nvrtc (or install the CUDA toolkit and set CUDA_HOME)";
  return spec;
}

TEST(LibraryFinder, EnvVarNamingMissingFileIsAnError) {
  ScopedEnv env("JIASU_NVRTC", "/nonexistent/jiasu/libnvrtc.so.13");
  try {
    find_library(nvrtc_like_spec());
    FAIL() << "expected LibraryNotFound";
  } catch (const LibraryNotFound& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("JIASU_NVRTC"), std::string::npos) << message;
    EXPECT_NE(message.find("/nonexistent/jiasu/libnvrtc.so.13"), std::string::npos) << message;
  }
}

TEST(LibraryFinder, UnknownSonameListsItAndTheFix) {
  LibrarySpec spec;
  spec.name = "nosuchlib";
  spec.env_var = "JIASU_TEST_NO_SUCH_LIB";
  spec.sonames = {"libjiasu_no_such_lib.so.1"};
  spec.wheel_dirs = {"nvidia/nosuch/lib"};
  spec.fix = "pip install jiasu-no-such-lib";
  ScopedEnv env("JIASU_TEST_NO_SUCH_LIB", nullptr);
  try {
    find_library(spec);
    FAIL() << "expected LibraryNotFound";
  } catch (const LibraryNotFound& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("libjiasu_no_such_lib.so.1"), std::string::npos) << message;
    EXPECT_NE(message.find("pip install jiasu-no-such-lib"), std::string::npos) << message;
  }
}

TEST(LibraryFinder, FindsInstalledNvrtcAndItsSymbols) {
  if (installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  ScopedEnv env("JIASU_NVRTC", nullptr);
  FoundLibrary found = find_library(nvrtc_like_spec());
  EXPECT_NE(found.handle, nullptr);
  EXPECT_NE(found.path.find("libnvrtc.so"), std::string::npos) << found.path;
  EXPECT_NE(find_symbol(found, "nvrtcVersion"), nullptr);
  EXPECT_EQ(find_symbol(found, "jiasu_no_such_symbol"), nullptr);
}

TEST(LibraryFinder, EnvVarMayNameADirectory) {
  std::string dir = installed_nvrtc_dir();
  if (dir.empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  ScopedEnv env("JIASU_NVRTC", dir.c_str());
  FoundLibrary found = find_library(nvrtc_like_spec());
  EXPECT_EQ(found.source, "JIASU_NVRTC");
}

TEST(LibraryFinder, WheelRootsComeBeforeTheToolkit) {
  std::string dir = installed_nvrtc_dir();
  if (dir.empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  std::string soname = fs::exists(dir + "/libnvrtc.so.13") ? "libnvrtc.so.13" : "libnvrtc.so.12";

  testing::TempDir wheel_root;
  fs::path wheel_lib = wheel_root.path() / "nvidia" / "cu13" / "lib";
  fs::create_directories(wheel_lib);
  fs::create_symlink(fs::canonical(dir + "/" + soname), wheel_lib / soname);

  ScopedEnv env("JIASU_NVRTC", nullptr);
  set_wheel_roots({wheel_root.path().string()});
  FoundLibrary found = find_library(nvrtc_like_spec());
  set_wheel_roots({});
  EXPECT_EQ(found.source, "pip wheel");
}

}  // namespace
}  // namespace jiasu
