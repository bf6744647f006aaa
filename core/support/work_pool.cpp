#include "support/work_pool.hpp"

#include <algorithm>
#include <cerrno>

#ifdef __linux__
#include <sched.h>
#endif

namespace jiasu {

WorkPool::WorkPool(unsigned threads) {
  const unsigned wanted_workers = threads > 1 ? threads - 1 : 0;
  workers_.reserve(wanted_workers);
  for (unsigned i = 0; i < wanted_workers; ++i) {
    try {
      workers_.emplace_back([this] { worker(); });
    } catch (const std::exception&) {
      break;  // no more threads to be had: work with the ones that started
    }
  }
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void WorkPool::Job::work() {
  for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < tasks;) {
    try {
      invoke(context, i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
}

void WorkPool::run_job(size_t tasks, Invoke invoke, void* context) {
  if (tasks == 0) return;
  Job job{invoke, context, tasks};
  const size_t helpers = std::min(tasks - 1, workers_.size());
  if (helpers == 0) {
    job.work();
  } else {
    std::lock_guard<std::mutex> one_job(job_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      helpers_wanted_ = helpers;
      ++generation_;
    }
    if (helpers == workers_.size()) {
      wake_.notify_all();
    } else {
      for (size_t i = 0; i < helpers; ++i) wake_.notify_one();
    }
    job.work();
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;  // every task is claimed: workers waking now have nothing to join
    helpers_wanted_ = 0;
    done_.wait(lock, [this] { return active_ == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

void WorkPool::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t seen = 0;
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (job_ != nullptr && generation_ != seen && helpers_wanted_ > 0); });
    if (stop_) return;
    seen = generation_;
    --helpers_wanted_;
    Job* job = job_;
    ++active_;
    lock.unlock();
    job->work();
    lock.lock();
    if (--active_ == 0) done_.notify_one();  // only the job's caller waits on done_
  }
}

unsigned usable_cpus() {
#ifdef __linux__
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 2) {  // hosts with more CPUs than a cpu_set_t holds
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) break;
    const size_t size = CPU_ALLOC_SIZE(cpus);
    const int got = sched_getaffinity(0, size, set) == 0 ? CPU_COUNT_S(size, set) : -1;
    const bool too_small = got < 0 && errno == EINVAL;
    CPU_FREE(set);
    if (got > 0) return static_cast<unsigned>(got);
    if (!too_small) break;
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace jiasu
