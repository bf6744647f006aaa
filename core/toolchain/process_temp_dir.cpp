#include "toolchain/process_temp_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "support/error.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "jiasu-host-";
constexpr const char* kLockName = "/.lock";

// The pid in a name jiasu-host-<pid>-XXXXXX; 0 for any other name.
pid_t pid_of(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash > 9 || name.size() - dash - 1 != 6) return 0;
  pid_t pid = 0;
  for (char c : name.substr(0, dash)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

// $TMPDIR, or /tmp when it is unset or empty.
std::string temp_base_dir() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

bool process_runs(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// True when path names the file open on fd (it was not removed or replaced meanwhile).
bool still_names(const std::string& path, int fd) {
  struct stat by_path, by_fd;
  return ::lstat(path.c_str(), &by_path) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
}

class ProcessTempDir {
 public:
  ~ProcessTempDir() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!dir_.empty() && owner_ == ::getpid()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  std::string make_work_dir() {
    std::lock_guard<std::mutex> lock(mutex_);
    // A forked child makes its own folder; its copy of the parent's lock goes (the lock itself stays
    // with the parent, which shares it).
    if (dir_.empty() || owner_ != ::getpid()) create();
    std::string work = dir_ + "/" + std::to_string(next_++);
    if (::mkdir(work.c_str(), 0700) != 0)
      throw Error(temp_folder_failure("could not create the folder", work, base_, errno));
    return work;
  }

 private:
  void create() {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    dir_.clear();
    base_ = temp_base_dir();
    remove_stale_temp_dirs(base_);
    const std::string pid = std::to_string(::getpid());
    for (int attempt = 0;; ++attempt) {
      std::string dir = base_ + "/" + std::string(kPrefix) + pid + "-XXXXXX";
      if (!::mkdtemp(dir.data()))
        throw Error(
            temp_folder_failure("could not create a temporary folder in", base_, base_, errno));
      std::string lock_path = dir + kLockName;
      int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) {
        int error = errno;
        std::error_code ignored;
        fs::remove_all(dir, ignored);
        throw Error(temp_folder_failure("could not create the file", lock_path, base_, error));
      }
      // Where flock is not supported the folder simply stays unlocked: no cleaner removes it then.
      bool taken = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      if (!taken && still_names(lock_path, fd)) {
        dir_ = dir;
        lock_fd_ = fd;
        owner_ = ::getpid();
        next_ = 0;
        return;
      }
      // A process of another PID namespace (where our pid looks gone) took the new folder for stale
      // between mkdtemp and flock, and removes it: make another.
      ::close(fd);
      if (attempt == 8)
        throw Error("could not keep a temporary folder in " + base_ +
                    ": other processes keep removing it");
    }
  }

  std::mutex mutex_;
  std::string base_;
  std::string dir_;
  int lock_fd_ = -1;
  pid_t owner_ = 0;
  std::uint64_t next_ = 0;
};

}  // namespace

std::string temp_folder_failure(const std::string& what, const std::string& path,
                                const std::string& base, int error) {
  return what + " " + path + ": " + std::strerror(error) +
         "; the CPU backend compiles its kernels in the temporary folder: free space in " + base +
         " or set TMPDIR to another writable folder";
}

std::string make_work_dir() {
  static ProcessTempDir dir;
  return dir.make_work_dir();
}

void remove_stale_temp_dirs(const std::string& base) {
  DIR* listing = ::opendir(base.c_str());
  if (!listing) return;
  const uid_t user = ::geteuid();
  while (const struct dirent* entry = ::readdir(listing)) {
    pid_t pid = pid_of(entry->d_name);
    if (pid <= 0 || process_runs(pid)) continue;
    std::string dir = base + "/" + entry->d_name;
    struct stat info;
    if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != user) continue;
    std::string lock_path = dir + kLockName;
    int fd = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    // Held while removing, so that the owner (if it was only being created) sees the loss.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
    ::close(fd);
  }
  ::closedir(listing);
}

}  // namespace jiasu
