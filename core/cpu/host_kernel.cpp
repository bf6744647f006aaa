#include "cpu/host_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "emit/emit.hpp"
#include "program/source_module.hpp"
#include "support/error.hpp"

namespace jiasu {

// The layouts the emitted entry point reads (the host runtime header's jiasu::HostLaunch and HostError):
// the library reports a failure (a deadlock, no memory for fiber stacks, ...) in *error and returns.
struct HostError {
  int failed;
  char message[512];
};
struct HostLaunch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
  HostError* error;
  void* (*fiber_stacks)(long long count, long long bytes);
};

namespace {

// HostLaunch::fiber_stacks: the fiber stacks of host kernels, kept per OS thread from launch to launch
// (mapping a block's stacks, guarding each and faulting their first pages in took about 0.7 ms for 256
// threads, more than running such a block). Grows to the largest block seen; lives as long as its thread.
void* lend_fiber_stacks(long long count, long long bytes) {
  struct Stacks {
    void* base = MAP_FAILED;
    long long count = 0, bytes = 0;
    ~Stacks() {
      if (base != MAP_FAILED) munmap(base, static_cast<size_t>(count * bytes));
    }
  };
  thread_local Stacks stacks;
  if (stacks.base != MAP_FAILED && stacks.bytes == bytes && stacks.count >= count) return stacks.base;
  if (stacks.base != MAP_FAILED) munmap(stacks.base, static_cast<size_t>(stacks.count * stacks.bytes));
  stacks = Stacks{};
  const long long page = sysconf(_SC_PAGESIZE);
  long long total = 0;
  if (count <= 0 || bytes <= page || bytes % page != 0 || __builtin_mul_overflow(count, bytes, &total)) return nullptr;
  void* base = mmap(nullptr, static_cast<size_t>(total), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  for (long long i = 0; i < count; ++i)  // a guard page below each stack: an overflow faults
    mprotect(static_cast<unsigned char*>(base) + i * bytes, static_cast<size_t>(page), PROT_NONE);
  stacks.base = base;
  stacks.count = count;
  stacks.bytes = bytes;
  return base;
}

int configured_thread_count() {
  if (const char* text = std::getenv("JIASU_CPU_THREADS"); text && *text) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || errno != 0 || value < 1 || value > 4096)
      throw BadValue("JIASU_CPU_THREADS must be a positive integer (at most 4096), not '" + std::string(text) + "'");
    return static_cast<int>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// A fixed set of worker threads, created on first use, sleeping on a condition variable between jobs.
// One job at a time: run() holds launch_mutex_ from start to end.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads) {
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  // Never destroyed (see instance()): the workers sleep until the process exits.

  static ThreadPool& instance() {
    static ThreadPool* pool = new ThreadPool(configured_thread_count());
    return *pool;
  }

  int threads() const { return threads_; }

  // Calls task(i) for every i in [0, tasks), on up to min(tasks, threads()) threads, the calling one
  // among them; returns when all are done, rethrowing the first exception a task threw.
  void run(long long tasks, const std::function<void(long long)>& task) {
    if (tasks <= 0) return;
    Job job;
    job.task = &task;
    job.tasks = tasks;
    const int helpers = static_cast<int>(std::min<long long>(tasks, threads_) - 1);
    std::lock_guard<std::mutex> launch(launch_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      helpers_wanted_ = helpers;
      ++generation_;
    }
    if (helpers > 0) wake_.notify_all();
    job.work();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ = nullptr;  // workers not yet awake stay out of it
      helpers_wanted_ = 0;
      done_.wait(lock, [this] { return active_ == 0; });
    }
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  struct Job {
    const std::function<void(long long)>* task = nullptr;
    long long tasks = 0;
    std::atomic<long long> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;

    void work() {
      for (long long i; (i = next.fetch_add(1, std::memory_order_relaxed)) < tasks;) {
        try {
          (*task)(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    }
  };

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    unsigned long long seen = generation_;
    for (;;) {
      wake_.wait(lock, [&] { return job_ != nullptr && generation_ != seen && helpers_wanted_ > 0; });
      seen = generation_;
      --helpers_wanted_;
      Job* job = job_;
      ++active_;
      lock.unlock();
      job->work();
      lock.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex launch_mutex_;  // one job at a time
  std::mutex mutex_;         // guards the fields below
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;
  unsigned long long generation_ = 0;
  int helpers_wanted_ = 0;
  int active_ = 0;
};

}  // namespace

int host_thread_count() { return ThreadPool::instance().threads(); }

HostKernel::HostKernel(std::shared_ptr<HostLibrary> library, const std::string& entry_name)
    : library_(std::move(library)), entry_name_(entry_name) {
  if (!library_) throw BadValue("HostKernel needs a library");
  entry_ = reinterpret_cast<Entry>(library_->symbol(entry_name_));
}

void HostKernel::launch(Dim3 grid, Dim3 block, void* const* params, size_t shared_bytes) const {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw BadValue("grid dimensions must be at least 1, got (" + std::to_string(grid.x) + ", " +
                   std::to_string(grid.y) + ", " + std::to_string(grid.z) + ")");
  if (block.x == 0 || block.y == 0 || block.z == 0)
    throw BadValue("block dimensions must be at least 1, got (" + std::to_string(block.x) + ", " +
                   std::to_string(block.y) + ", " + std::to_string(block.z) + ")");
  HostError error{};  // shared by every range: the first failure wins, the other ranges stop early
  HostLaunch base{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, 0, 0,
                  static_cast<long long>(shared_bytes), &error, &lend_fiber_stacks};
  long long blocks = 0;
  if (__builtin_mul_overflow(base.grid[0], base.grid[1], &blocks) ||
      __builtin_mul_overflow(blocks, base.grid[2], &blocks) || blocks > (1LL << 50))
    throw BadValue("the grid has too many blocks");
  if (blocks == 1) {  // no need for the pool
    base.block_end = 1;
    entry_(&base, params);
  } else {
    ThreadPool& pool = ThreadPool::instance();
    const long long ranges = std::min<long long>(blocks, pool.threads());
    const Entry entry = entry_;
    pool.run(ranges, [&](long long r) {
      HostLaunch launch = base;
      launch.block_begin = blocks * r / ranges;
      launch.block_end = blocks * (r + 1) / ranges;
      entry(&launch, params);
    });
  }
  if (error.failed) {  // the pool's join ordered the library's writes before this read
    error.message[sizeof error.message - 1] = '\0';
    std::string name = entry_name_;
    if (name.rfind("jiasu_kernel_", 0) == 0) name.erase(0, 13);
    if (error.failed == 2) throw OutOfRange("kernel '" + name + "' (CPU, debug): " + error.message);
    // As the driver names a kernel that failed on the device.
    throw LaunchError(719, "CUDA_ERROR_LAUNCH_FAILED", "kernel " + name + " (CPU): " + error.message);
  }
}

std::shared_ptr<HostKernel> compile_host_kernel(const fe::Program& program, bool debug) {
  return compile_host_kernel(emit::emit_host(program, debug));
}

std::shared_ptr<HostKernel> compile_host_kernel(const emit::EmittedKernel& emitted) {
  HostCompileRequest request;
  request.source = emitted.source;
  request.name = emitted.entry_name;
  // JIASU_CPU_NATIVE=1 tunes for this machine's CPU (-march=native; the CPU joins the cache key).
  const char* native = std::getenv("JIASU_CPU_NATIVE");
  request.native = native && std::string(native) == "1";
  return std::make_shared<HostKernel>(compile_host(request, &compile_cache()), emitted.entry_name);
}

}  // namespace jiasu
