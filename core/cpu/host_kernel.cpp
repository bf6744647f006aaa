#include "cpu/host_kernel.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "cpu/access_trace.hpp"
#include "cpu/host_trap.hpp"
#include "cpu/runtime/host_abi.h"
#include "emit/check_failure.hpp"
#include "emit/emit.hpp"
#include "support/cuda_limits.hpp"
#include "support/error.hpp"
#include "support/interrupt.hpp"
#include "support/work_pool.hpp"
#include "toolchain/disk_cache.hpp"

namespace jiasu {

namespace {

// Maps count stacks of `bytes` each (a page multiple), a guard page at the start of each; null on failure.
void* map_fiber_stacks(long long count, long long bytes, long long page) {
  long long total = 0;
  if (__builtin_mul_overflow(count, bytes, &total)) return nullptr;
  void* base = mmap(nullptr, static_cast<size_t>(total), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  for (long long i = 0; i < count; ++i)  // a guard page below each stack: an overflow faults
    mprotect(static_cast<unsigned char*>(base) + i * bytes, static_cast<size_t>(page), PROT_NONE);
  return base;
}

// The kernel's name in messages: its entry point's, without the prefix emit_host() gives it.
std::string kernel_name(const std::string& entry_name) {
  return entry_name.rfind("jiasu_kernel_", 0) == 0 ? entry_name.substr(13) : entry_name;
}

// How many memory maps the system allows a process (vm.max_map_count), read once.
long long memory_map_limit() {
  static const long long limit = [] {
    long long value = 65530;  // Linux's default
    if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
      if (std::fscanf(f, "%lld", &value) != 1) value = 65530;
      std::fclose(f);
    }
    return value;
  }();
  return limit;
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
  return static_cast<int>(usable_cpus());
}

// The pool of OS threads that run blocks: created on first use and never destroyed (its workers sleep
// until the process exits).
WorkPool& block_pool() {
  static WorkPool* pool = new WorkPool(static_cast<unsigned>(configured_thread_count()));
  return *pool;
}

// The grid barrier of a cooperative launch (HostLaunch::grid_sync), on which the blocks' OS threads sleep.
struct HostGrid {
  std::mutex mutex;
  std::condition_variable changed;  // a barrier opened, or a block ended
  long long blocks = 0, arrived = 0, generation = 0, ended = 0;
  HostError* error = nullptr;
  const volatile sig_atomic_t* stop = nullptr;
};

long long grid_sync(void* context) {
  HostGrid& grid = *static_cast<HostGrid*>(context);
  std::unique_lock<std::mutex> lock(grid.mutex);
  const long long generation = grid.generation;
  if (++grid.arrived == grid.blocks) {
    grid.arrived = 0;
    ++grid.generation;
    grid.changed.notify_all();
    return grid_opened;
  }
  for (;;) {
    if (grid.generation != generation) return grid_opened;
    // A block that failed set the error before it ended; one that ended without failing never comes here.
    if (__atomic_load_n(&grid.error->failed, __ATOMIC_ACQUIRE) != 0) return grid_failed;
    if (grid.stop && *grid.stop) return grid_interrupted;
    if (grid.ended > 0) return grid.ended;
    grid.changed.wait_for(lock, std::chrono::milliseconds(20));  // Ctrl-C notifies no one: polled
  }
}

}  // namespace

long long host_cooperative_blocks(long long threads, long long fiber_array_bytes) {
  if (threads < 1 || threads > kThreadsPerBlock) return 0;  // no such block runs
  const long long page = sysconf(_SC_PAGESIZE);
  const long long slot = (host_fiber_stack_bytes + std::max(0LL, fiber_array_bytes) + page - 1) / page * page + page;
  const long long per_cpu = std::min<long long>(kBlocksPerMultiprocessor, kThreadsPerMultiprocessor / threads);
  const long long fibers = std::min(kCooperativeStackBytes / slot, memory_map_limit() / 4);
  return std::max(1LL, std::min({host_thread_count() * per_cpu, kMaxCooperativeBlocks, fibers / threads}));
}

void run_cooperative(const HostLaunch& launch, void (*entry)(const HostLaunch*, void* const*), void* const* params) {
  HostGrid grid;
  grid.blocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
  grid.error = launch.error;
  grid.stop = launch.stop;
  auto run_block = [&](long long b) {
    HostLaunch mine = launch;
    mine.block_begin = b;
    mine.block_end = b + 1;
    mine.grid_barrier = &grid;
    mine.grid_sync = &grid_sync;
    mine.access_log = launch.access_log ? launch.access_log + b : nullptr;
    entry(&mine, params);
    std::lock_guard<std::mutex> lock(grid.mutex);
    ++grid.ended;
    grid.changed.notify_all();
  };
  std::vector<std::thread> threads;
  try {
    threads.reserve(static_cast<size_t>(grid.blocks - 1));
    for (long long b = 1; b < grid.blocks; ++b) threads.emplace_back(run_block, b);
  } catch (const std::system_error& e) {  // the blocks started stop at their next grid barrier
    std::lock_guard<std::mutex> lock(grid.mutex);
    if (__atomic_exchange_n(&launch.error->failed, host_launch_failed, __ATOMIC_ACQ_REL) == 0)
      snprintf(launch.error->message, sizeof launch.error->message,
               "the system started %zu of the %lld OS threads a cooperative launch runs its blocks on (%s)",
               threads.size() + 1, grid.blocks, e.what());
    grid.changed.notify_all();
  }
  run_block(0);
  for (std::thread& t : threads) t.join();
}

// HostLaunch::fiber_stacks: the fiber stacks of host kernels, kept per OS thread from launch to launch
// (mapping a block's stacks, guarding each and faulting their first pages in took about 0.7 ms for 256
// threads, more than running such a block). Grows to the most stacks and the largest stack asked for, so
// that kernels with different needs take turns without remapping, unless that would be far more than this
// launch asks for; lives as long as its thread.
void* lend_fiber_stacks(long long count, long long* bytes) {
  // Never assigned as a whole: a temporary Stacks would unmap the stacks in its destructor (gcc 12 skips
  // that destructor, against the standard; clang and newer gcc run it).
  struct Stacks {
    void* base = nullptr;
    long long count = 0, bytes = 0;
    Stacks() = default;
    Stacks(const Stacks&) = delete;
    Stacks& operator=(const Stacks&) = delete;
    ~Stacks() { release(); }
    void release() {
      if (base) munmap(base, static_cast<size_t>(count * bytes));
      base = nullptr;
      count = bytes = 0;
    }
  };
  thread_local Stacks stacks;
  if (stacks.base && stacks.bytes >= *bytes && stacks.count >= count) {
    *bytes = stacks.bytes;
    return stacks.base;
  }
  const long long page = sysconf(_SC_PAGESIZE);
  long long asked = 0;
  if (count <= 0 || *bytes <= page || *bytes % page != 0 || __builtin_mul_overflow(count, *bytes, &asked))
    return nullptr;
  long long grown_count = std::max(count, stacks.count), grown_bytes = std::max(*bytes, stacks.bytes), grown = 0;
  constexpr long long kSmall = 256LL << 20;  // growing this far is always fine (the memory is reserved lazily)
  if (__builtin_mul_overflow(grown_count, grown_bytes, &grown) || (grown > kSmall && grown / 4 > asked))
    grown_count = count, grown_bytes = *bytes;
  stacks.release();
  void* base = map_fiber_stacks(grown_count, grown_bytes, page);
  if (!base && (grown_count != count || grown_bytes != *bytes)) {
    grown_count = count, grown_bytes = *bytes;
    base = map_fiber_stacks(count, *bytes, page);
  }
  if (!base) return nullptr;
  stacks.base = base;
  stacks.count = grown_count;
  stacks.bytes = grown_bytes;
  *bytes = grown_bytes;
  return base;
}


int host_thread_count() { return static_cast<int>(block_pool().threads()); }

HostKernel::HostKernel(std::shared_ptr<HostLibrary> library, const std::string& entry_name, bool cooperative,
                       long long fiber_array_bytes)
    : library_(std::move(library)), entry_name_(entry_name), cooperative_(cooperative),
      fiber_array_bytes_(fiber_array_bytes) {
  if (!library_) throw BadValue("HostKernel needs a library");
  entry_ = reinterpret_cast<Entry>(library_->symbol(entry_name_));
}

void HostKernel::launch(Dim3 grid, Dim3 block, void* const* params, size_t shared_bytes, AccessTrace* trace) const {
  // The emitted thread loops keep per-thread arrays of 1024 entries; each dimension is bounded before
  // the product, which then cannot wrap.
  if (block.x > 1024 || block.y > 1024 || block.z > 64 || 1ull * block.x * block.y * block.z > 1024)
    throw LaunchError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                      "block (" + std::to_string(block.x) + ", " + std::to_string(block.y) + ", " +
                          std::to_string(block.z) + ") exceeds the limit of CUDA GPUs (1024 threads, z <= 64), "
                          "which the CPU backend keeps too");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw BadValue("grid dimensions must be at least 1, got (" + std::to_string(grid.x) + ", " +
                   std::to_string(grid.y) + ", " + std::to_string(grid.z) + ")");
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    throw LaunchError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                      "grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
                          std::to_string(grid.z) + ") exceeds the limit of CUDA GPUs (x <= 2147483647, y and z <= "
                          "65535), which the CPU backend keeps too");
  if (block.x == 0 || block.y == 0 || block.z == 0)
    throw BadValue("block dimensions must be at least 1, got (" + std::to_string(block.x) + ", " +
                   std::to_string(block.y) + ", " + std::to_string(block.z) + ")");
  // The largest dynamic shared memory a CUDA GPU lends a block (227 KiB, on Hopper after opting in).
  constexpr size_t kMaxDynamicShared = 232448;
  if (shared_bytes > kMaxDynamicShared)
    throw LaunchError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                      "shared_mem=" + std::to_string(shared_bytes) + " bytes is more dynamic shared memory than CUDA "
                      "GPUs give a block (" + std::to_string(kMaxDynamicShared) + " bytes), a limit the CPU backend "
                      "keeps too");
  HostError error{};  // shared by every range: the first failure wins, the other ranges stop early
  watch_interrupts();
  HostLaunch base{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, 0, 0, static_cast<long long>(shared_bytes),
                  &error, &lend_fiber_stacks, &arm_host_trap, interrupt_flag(), nullptr, nullptr, nullptr};
  long long blocks = 0;
  if (__builtin_mul_overflow(base.grid[0], base.grid[1], &blocks) ||
      __builtin_mul_overflow(blocks, base.grid[2], &blocks) || blocks > (1LL << 50))
    throw BadValue("the grid has too many blocks");
  if (cooperative_) {
    const long long fit = max_cooperative_blocks(block);
    if (blocks > fit)
      throw LaunchError(cu::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
                        "kernel " + kernel_name(entry_name_) + " (CPU) calls cg.this_grid(), so its launch is "
                        "cooperative: every block runs at once, and a grid of " + std::to_string(blocks) +
                        " blocks is more than the " + std::to_string(fit) + " blocks of " +
                        std::to_string(1LL * block.x * block.y * block.z) + " threads that fit (as on a GPU with one "
                        "multiprocessor per CPU, " + std::to_string(host_thread_count()) + " here, and as memory for "
                        "the fibers' stacks allows; see max_cooperative_grid_blocks)");
    if (trace) base.access_log = trace->logs(static_cast<size_t>(blocks));
    run_cooperative(base, entry_, params);
  } else if (blocks == 1) {  // no need for the pool
    base.block_end = 1;
    if (trace) base.access_log = trace->logs(1);
    entry_(&base, params);
  } else {
    WorkPool& pool = block_pool();
    const long long ranges = std::min<long long>(blocks, pool.threads());
    const Entry entry = entry_;
    if (trace) base.access_log = trace->logs(static_cast<size_t>(ranges));
    pool.run(static_cast<size_t>(ranges), [&](size_t range) {
      const long long r = static_cast<long long>(range);
      HostLaunch launch = base;
      launch.block_begin = blocks * r / ranges;
      launch.block_end = blocks * (r + 1) / ranges;
      launch.access_log = base.access_log ? base.access_log + r : nullptr;
      entry(&launch, params);
    });
  }
  if (error.failed) {  // the pool's join ordered the library's writes before this read
    error.message[sizeof error.message - 1] = '\0';
    const std::string name = kernel_name(entry_name_);
    if (error.failed == host_raised) throw KernelRaised(error.exception, error.message);
    if (error.failed == host_index_error) emit::throw_check_failure(name, error_index, error.message);
    if (error.failed == host_zero_division) emit::throw_check_failure(name, error_zero_division, error.message);
    if (error.failed == host_interrupted) throw Interrupted("kernel " + name + " (CPU): " + error.message);
    if (error.failed == host_fault)  // as the driver reports an illegal address on the device
      throw LaunchError(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "kernel " + name + " (CPU): " + error.message);
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
  return std::make_shared<HostKernel>(compile_host(request, &compile_cache()), emitted.entry_name, emitted.cooperative,
                                      emitted.fiber_array_bytes);
}

}  // namespace jiasu
