// jiasu.profile(): while a profile is open, every kernel launch (jiasu's kernels, array operations, RawKernels),
// cuBLASLt matmul and cuDNN convolution is recorded with its configuration and timed: on a GPU by two CUDA
// events around it on its stream, so the launches stay asynchronous and the times are read when the profile
// closes; on the CPU backend by the host clock. Work recorded into a graph (runtime/graph) is not run, so it is
// not timed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/module.hpp"

namespace jiasu {

class Event;

struct LaunchRecord {
  std::string name;  // the kernel's (a Python kernel's Python name), or the library call's
  std::string origin;  // a Python kernel's "file:line" of its def, which tells kernels of one name apart
  int device = 0;    // kCpuDevice: the CPU backend
  Dim3 grid{1, 1, 1}, block{1, 1, 1};
  size_t shared_bytes = 0;        // dynamic shared memory
  bool library = false;           // a cuBLASLt or cuDNN call: no grid of its own
  bool has_attributes = false;    // a GPU kernel: its registers, local and static shared bytes
  KernelAttributes attributes;
  // The argument arrays' bytes the kernel reads and writes (per array parameter), where the launch knows them
  // (Python kernels); -1 otherwise.
  int64_t bytes_read = -1, bytes_written = -1;
  int64_t flops = -1;  // floating-point operations, where the call knows them (a matmul: 2 M N K)
  double ms = 0;  // filled when the profile closes
  std::shared_ptr<Event> start, end;
};

// What the launch engine knows of the next launch on this thread beyond the kernel: the Python kernel's name and
// its arrays' traffic. Kept for the launch that follows (the profiler's begin takes it).
struct LaunchNote {
  std::string name;
  std::string origin;  // LaunchRecord::origin
  int64_t bytes_read = -1, bytes_written = -1;
  int64_t flops = -1;
};

namespace detail {
extern std::atomic<bool> profiling;
}  // namespace detail
inline bool profiling() { return detail::profiling.load(std::memory_order_relaxed); }

constexpr size_t kNotProfiled = static_cast<size_t>(-1);

// Called only while profiling(). begin() records the start event of `record` (its name, device, configuration)
// on `stream` and returns a token for end(), which records the end event; kNotProfiled when nothing is recorded
// (the work is being captured into a graph, or the profile closed meanwhile).
size_t profile_begin(LaunchRecord record, cu::CUstream stream);
void profile_end(size_t token, cu::CUstream stream);
void note_next_launch(LaunchNote note);

// Times a library call's GPU work (or a CPU kernel's run) as one record, while a profile is open: begin at
// construction, end at destruction unless an exception is leaving.
class ProfiledCall {
 public:
  ProfiledCall(std::string name, int device, cu::CUstream stream, Dim3 grid = {1, 1, 1}, Dim3 block = {1, 1, 1},
               bool library = true);
  ~ProfiledCall();
  ProfiledCall(const ProfiledCall&) = delete;
  ProfiledCall& operator=(const ProfiledCall&) = delete;

 private:
  size_t token_ = kNotProfiled;
  cu::CUstream stream_;
  int exceptions_;
};

class Profile {
 public:
  Profile() = default;
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Opens the profile: launches from now on are recorded. BadValue when a profile is already open.
  void start();
  // Closes it: waits for the recorded work to finish and reads the times. Ctrl-C ends the wait (Interrupted).
  void stop();
  bool open() const { return open_; }
  const std::vector<LaunchRecord>& records() const { return records_; }
  // Milliseconds from start() to stop() by the host clock.
  double wall_ms() const { return wall_ms_; }

  // One row per kernel name and configuration: calls, total, mean, min and max times.
  struct Summary {
    std::string name;
    int device;
    Dim3 grid, block;
    size_t calls = 0;
    double total_ms = 0, min_ms = 0, max_ms = 0;
    size_t first;  // the first record of the row
  };
  std::vector<Summary> summary() const;
  // The summary as a table, the most total time first.
  std::string table() const;

 private:
  friend size_t profile_begin(LaunchRecord record, cu::CUstream stream);
  friend void profile_end(size_t token, cu::CUstream stream);
  std::vector<LaunchRecord> records_;
  bool open_ = false;
  double start_host_ms_ = 0, wall_ms_ = 0;
};

}  // namespace jiasu
