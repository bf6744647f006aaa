// A fixed set of worker threads that run the tasks of one job at a time, the calling thread taking part.
// Used for the CPU backend's blocks (cpu/host_kernel.cpp) and the staging engine's memcpy slices
// (runtime/staging.cpp), each with its own pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace jiasu {

// Workers sleep on a condition variable between jobs (no spinning) and claim task indices from a shared
// counter, so threads that wake late take fewer tasks. Any number of threads may call run(); one job runs
// at a time, the others wait for it.
class WorkPool {
 public:
  // threads: the threads that work on a job, the calling one included, so threads - 1 workers are started
  // (at least none). When the system refuses a thread, the pool makes do with the ones that started.
  explicit WorkPool(unsigned threads);
  ~WorkPool();  // stops and joins the workers; no run() may be in progress
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // The threads that work on a job, the calling one included (1 + the workers that started).
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls task(i) for every i in [0, tasks) on up to min(tasks, threads()) threads, the calling one among
  // them, and returns when every call has returned. Every task runs even when one throws; the first
  // exception thrown is then rethrown here. A job one thread can do runs on the caller alone, without
  // waiting for another job. task is called by reference from several threads at once; no allocation.
  template <typename Task>
  void run(size_t tasks, Task&& task) {
    using Callable = std::remove_reference_t<Task>;
    run_job(tasks, [](void* context, size_t index) { (*static_cast<Callable*>(context))(index); },
            const_cast<void*>(static_cast<const void*>(std::addressof(task))));
  }

 private:
  using Invoke = void (*)(void* context, size_t index);

  // One run() call: lives on the caller's stack until every worker that joined it has left.
  struct Job {
    Job(Invoke call, void* callable, size_t count) : invoke(call), context(callable), tasks(count) {}

    const Invoke invoke;
    void* const context;
    const size_t tasks;
    std::atomic<size_t> next{0};  // the next task index to claim
    std::mutex error_mutex;
    std::exception_ptr error;  // the first exception a task threw

    void work();
  };

  void run_job(size_t tasks, Invoke invoke, void* context);
  void worker();

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;      // guards the fields below
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;       // the job workers may join; null once the caller has claimed its last task
  uint64_t generation_ = 0;  // bumped for every job, so a worker joins each job at most once
  size_t helpers_wanted_ = 0;  // workers the current job can still use
  size_t active_ = 0;          // workers inside the current job: the caller waits for them to leave
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// The CPUs this process may run on: its affinity mask (taskset, a container's cpuset), else every CPU
// the system has; at least 1.
unsigned usable_cpus();

}  // namespace jiasu
