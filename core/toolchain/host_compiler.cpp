#include "toolchain/host_compiler.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "support/error.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/file_io.hpp"
#include "toolchain/process_temp_dir.hpp"

extern char** environ;

namespace jiasu {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInstallHint =
    "install a C++ compiler (e.g. apt install g++) or set JIASU_CXX to one";

std::atomic<std::uint64_t> compiler_runs{0};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool is_executable_file(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// A name with a '/' is a path; otherwise the first executable of that name on PATH. "" when none.
std::string resolve_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) return "";
    std::error_code error;
    fs::path absolute = fs::absolute(name, error);
    return error ? name : absolute.lexically_normal().string();
  }
  std::string path = env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return resolve_executable(candidate);
    start = end + 1;
  }
  return "";
}

void remove_tree(const std::string& dir) {
  std::error_code ignored;
  if (!dir.empty()) fs::remove_all(dir, ignored);
}

// fd moved to 3 or above (keeping O_CLOEXEC), so that a pipe made while stdin, stdout or stderr is
// closed cannot be one of the child's standard streams.
int above_standard_streams(int fd) {
  if (fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// What the child wrote until it exited. Stops at the child's exit, not at the end of the pipe,
// which a process the child left running could keep open forever.
std::string collect_output(int fd, pid_t pid, int& wait_status, std::string& failure) {
  std::string output;
  char chunk[1 << 14];
  bool exited = false;
  for (;;) {
    struct pollfd readable = {fd, POLLIN, 0};
    int ready = ::poll(&readable, 1, exited ? 0 : 100);
    if (ready > 0) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n > 0) {
        output.append(chunk, size_t(n));
        continue;
      }
      if (n == 0 || errno != EINTR) break;  // the end, or an error: nothing more to read
      continue;
    }
    if (ready < 0 && errno == EINTR) continue;
    if (exited || ready < 0) break;  // drained after the exit, or poll failed
    pid_t reaped = ::waitpid(pid, &wait_status, WNOHANG);
    if (reaped == pid) exited = true;  // once more round the loop drains what is left
    if (reaped < 0 && errno != EINTR) {
      failure = std::string("waitpid: ") + std::strerror(errno);
      return output;
    }
  }
  if (!exited) {
    while (::waitpid(pid, &wait_status, 0) < 0) {
      if (errno != EINTR) {
        failure = std::string("waitpid: ") + std::strerror(errno);
        break;
      }
    }
  }
  return output;
}

// Runs argv with stdin from /dev/null and stdout+stderr into `output`, through a pipe (so that no
// file is needed for it); returns the exit status (128+signal when killed), or -1 with the reason in
// `failure` when it could not be run.
int run_process(const std::vector<std::string>& args, std::string& output, std::string& failure) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    failure = std::string("cannot make a pipe: ") + std::strerror(errno);
    return -1;
  }
  int read_end = above_standard_streams(pipe_fds[0]);
  int write_end = above_standard_streams(pipe_fds[1]);
  if (read_end < 0 || write_end < 0) {
    failure = std::string("cannot make a pipe: ") + std::strerror(errno);
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
    return -1;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end, 1);
  posix_spawn_file_actions_adddup2(&actions, write_end, 2);
  pid_t pid = 0;
  int status = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(write_end);
  if (status != 0) {
    ::close(read_end);
    failure = std::strerror(status);
    return -1;
  }
  int wait_status = 0;
  output = collect_output(read_end, pid, wait_status, failure);
  ::close(read_end);
  if (!failure.empty()) return -1;
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

// The compiler at path when `--version` works; nullopt otherwise, with the reason in `why`.
std::optional<HostCompiler> probe(const std::string& path, std::string& why) {
  std::string output, failure;
  int status = run_process({path, "--version"}, output, failure);
  if (status != 0) {
    why = status < 0 ? "cannot run it: " + failure
                     : "'" + path + " --version' exited with status " + std::to_string(status);
    return std::nullopt;
  }
  std::string first_line = output.substr(0, output.find('\n'));
  while (!first_line.empty() && std::isspace(static_cast<unsigned char>(first_line.back())))
    first_line.pop_back();
  if (first_line.empty()) {
    why = "'" + path + " --version' printed nothing";
    return std::nullopt;
  }
  return HostCompiler{path, first_line};
}

bool valid_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name[0] == '-') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// Every flag of the compiler's command line but the file names. -O2, and with GCC two loop passes of
// -O3 that matter for kernels run as thread loops: a region's `if t < s:` becomes a shorter loop
// (split loops), and a test on a block-uniform value moves out of the loop (unswitching). Clang does
// the like at -O2.
std::vector<std::string> compile_flags(const HostCompiler& compiler, const HostCompileRequest& request) {
  std::vector<std::string> flags = {"-O2",      "-std=c++17", "-fPIC",
                                    "-shared",  "-pthread",   "-fdiagnostics-color=never"};
  if (compiler.identity.find("clang") == std::string::npos)
    flags.insert(flags.end(), {"-fsplit-loops", "-funswitch-loops"});
  if (request.native) flags.push_back("-march=native");
  flags.insert(flags.end(), request.options.begin(), request.options.end());
  return flags;
}

// What -march=native means on this machine, so that a cache shared between machines (an NFS
// home) never hands one CPU's code to another.
std::string host_cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0))
      flags = line;
  }
  return model + "\n" + flags;
}

// The compiler's output, with the private folder dropped from file names ("jiasu_host.cpp:3:5:").
std::string clean_log(std::string log, const std::string& work_dir) {
  std::string prefix = work_dir + "/";
  for (size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at))
    log.erase(at, prefix.size());
  return log;
}

// One mutex per key, so that threads asking for the same library compile it once.
std::mutex& key_mutex(const std::string& key) {
  static std::mutex registry_mutex;
  static std::unordered_map<std::string, std::unique_ptr<std::mutex>> registry;
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::unique_ptr<std::mutex>& slot = registry[key];
  if (!slot) slot = std::make_unique<std::mutex>();
  return *slot;
}

}  // namespace

// dlopens path (inside work_dir, which the library then owns); nullptr when dlopen fails, with the
// reason left for dlerror().
std::shared_ptr<HostLibrary> load_host_library(const std::string& path, const std::string& work_dir,
                                               std::string log, bool from_cache) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  return std::shared_ptr<HostLibrary>(
      new HostLibrary(handle, path, work_dir, std::move(log), from_cache));
}

namespace {

std::string dlopen_failure_text(const std::string& path) {
  const char* text = ::dlerror();
  return "cannot load the compiled library " + path + ": " + (text ? text : "unknown error") +
         " (if the temporary folder is mounted noexec, set TMPDIR to another one)";
}

// A hit: the verified bytes, written to a new file in this process's private folder (0700) and
// loaded from there. The cache entry is not opened again, so an entry swapped after it was verified
// changes nothing; replacing the private copy before dlopen would take write access to this user's
// private folder, i.e. the user's own rights. (A sealed memfd would pin the bytes as well, but
// debuggers, profilers and backtraces would show /proc/self/fd/N instead of a file, and memfds can
// be made non-executable system-wide: vm.memfd_noexec.) nullptr when it cannot be written or
// loaded: then the caller rebuilds.
std::shared_ptr<HostLibrary> load_cached(const std::string& bytes, const std::string& name) {
  std::string work = make_work_dir();
  std::string path = work + "/" + name + ".so";
  std::shared_ptr<HostLibrary> library;
  if (write_new_file(path, bytes, 0600) == 0) library = load_host_library(path, work, "", true);
  if (!library) remove_tree(work);
  return library;
}

struct Built {
  std::shared_ptr<HostLibrary> library;
  std::optional<std::string> bytes;  // the library file, for the cache; nullopt when unreadable
};

Built build(const HostCompiler& compiler, const HostCompileRequest& request,
            const std::vector<std::string>& flags) {
  std::string work = make_work_dir();
  try {
    std::string source_path = work + "/" + request.name + ".cpp";
    std::string library_path = work + "/" + request.name + ".so";
    if (int error = write_new_file(source_path, request.source, 0600)) {
      std::string base = fs::path(work).parent_path().parent_path().string();
      throw Error(temp_folder_failure("could not write the source to", source_path, base, error));
    }

    std::vector<std::string> args = {compiler.path};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {source_path, "-o", library_path});

    std::string output, failure;
    ++compiler_runs;
    int status = run_process(args, output, failure);
    std::string log = clean_log(std::move(output), work);
    if (status < 0) throw Error("cannot run the C++ compiler " + compiler.path + ": " + failure);
    if (status != 0) {
      std::string details =
          log.empty() ? "the compiler exited with status " + std::to_string(status) : log;
      throw HostCompileError(
          compiler.identity + " failed to compile " + request.name + ".cpp:\n" + details, log);
    }
    ::unlink(source_path.c_str());

    Built built;
    built.bytes.emplace();
    if (read_regular_file(library_path, *built.bytes) != 0) built.bytes.reset();
    built.library = load_host_library(library_path, work, log, false);
    if (!built.library) throw Error(dlopen_failure_text(library_path));
    return built;
  } catch (...) {
    remove_tree(work);
    throw;
  }
}

}  // namespace

HostLibrary::~HostLibrary() {
  if (handle_) ::dlclose(handle_);
  remove_tree(work_dir_);
}

void* HostLibrary::symbol(const std::string& name) const {
  ::dlerror();
  void* address = ::dlsym(handle_, name.c_str());
  if (!address) throw Error("the compiled library " + path_ + " has no symbol '" + name + "'");
  return address;
}

HostCompiler find_host_compiler() {
  std::string why;
  const char* requested = std::getenv("JIASU_CXX");
  if (requested && *requested) {
    std::string path = resolve_executable(requested);
    if (path.empty())
      throw LibraryNotFound(std::string("JIASU_CXX=") + requested +
                            " is not an executable file (nor a program on PATH); point JIASU_CXX "
                            "at a C++ compiler, or unset it to search PATH");
    if (std::optional<HostCompiler> found = probe(path, why)) return *found;
    throw LibraryNotFound(std::string("JIASU_CXX=") + requested + " is not a usable C++ compiler (" +
                          why + "); point JIASU_CXX at a C++ compiler, or unset it to search PATH");
  }
  std::string tried;
  for (const char* name : {"c++", "g++", "clang++"}) {
    std::string path = resolve_executable(name);
    if (path.empty()) {
      tried += std::string("\n  ") + name + ": not on PATH";
      continue;
    }
    if (std::optional<HostCompiler> found = probe(path, why)) return *found;
    tried += "\n  " + path + ": " + why;
  }
  throw LibraryNotFound("no C++ compiler found for the CPU backend; " + std::string(kInstallHint) +
                        ". Tried:" + tried);
}

const HostCompiler& host_compiler() {
  // A function-local static would remember nothing after a throw either, but holding the result
  // behind a mutex keeps the search from running twice when threads race.
  static std::mutex mutex;
  static std::optional<HostCompiler> found;
  std::lock_guard<std::mutex> lock(mutex);
  if (!found) found = find_host_compiler();
  return *found;
}

std::shared_ptr<HostLibrary> compile_host(const HostCompileRequest& request, const DiskCache* cache) {
  if (!valid_name(request.name))
    throw BadValue("invalid host library name '" + request.name +
                   "': use letters, digits, '_', '-' and '.', not first");
  const HostCompiler& compiler = host_compiler();

  const std::vector<std::string> flags = compile_flags(compiler, request);
  std::string target = request.native ? "native\n" + host_cpu_identity() : "";
  std::string key =
      compile_cache_key({"host", compiler.identity, request.source, request.name, flags, target});

  std::lock_guard<std::mutex> lock(key_mutex(key));
  if (cache) {
    if (std::optional<std::string> bytes = cache->load(key))
      if (std::shared_ptr<HostLibrary> library = load_cached(*bytes, request.name)) return library;
  }
  Built built = build(compiler, request, flags);
  if (cache && built.bytes) cache->store(key, *built.bytes);
  return built.library;
}

std::uint64_t host_compiler_runs() { return compiler_runs.load(); }

}  // namespace jiasu
