// Hand-written C++ references for bench/cpu.py: the same jobs as its jiasu CPU-backend kernels, written
// the way a C++ programmer would for a CPU, spread over the same number of OS threads.
//
// Built by bench/cpu.py at run time:  $CXX -O2 -std=c++17 -shared -fPIC -pthread -o X.so cpu_reference.cpp
// and called through ctypes; bench/cpu.py times each call from Python, like each jiasu launch.
//
// Threads come from a persistent pool (created on the first call, asleep on a condition variable between
// calls), as jiasu's CPU backend does, so neither side pays for creating threads per call. The work is
// split into contiguous ranges, one per thread, the calling thread taking range 0 (as jiasu does too).
#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

class Pool {
 public:
  // Calls task(i) for i in [0, threads) on `threads` threads (the caller is thread 0); returns when done.
  void run(int threads, const std::function<void(int)>& task) {
    if (threads <= 1) return task(0);
    resize(threads);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      pending_ = threads - 1;
      ++generation_;
    }
    wake_.notify_all();
    task(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void resize(int threads) {
    if (static_cast<int>(workers_.size()) + 1 == threads) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
    workers_.clear();
    stop_ = false;
    // Each worker starts from the generation now current, so a job posted before it runs is not missed.
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i, seen = generation_] { work(i, seen); });
  }

  void work(int index, long long seen) {
    for (;;) {
      const std::function<void(int)>* task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        task = task_;
      }
      (*task)(index);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  long long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

// Never destroyed: destroying it at exit would wait forever on the sleeping workers (they end with the process).
Pool& pool = *new Pool;

// [begin, end) of part `index` when `count` items are split into `parts` contiguous ranges.
void split(long count, int parts, int index, long* begin, long* end) {
  *begin = count * index / parts;
  *end = count * (index + 1) / parts;
}

}  // namespace

extern "C" {

// out[i] = x[i] + y[i] for i < n.
void seed_add(const float* x, const float* y, float* out, long n, int threads) {
  pool.run(threads, [&](int t) {
    long begin, end;
    split(n, threads, t, &begin, &end);
    for (long i = begin; i < end; ++i) out[i] = x[i] + y[i];
  });
}

// partial[b] = sum of x[b*block .. b*block+block) (elements past n count as 0), summed in float.
// tree != 0: pairwise in a local buffer, in the kernel's order (s = block/2, block/4 ... 1: buf[t] += buf[t+s]),
//            so the result is bit-identical to the shared-memory kernel's; block must be a power of two <= 1024.
// tree == 0: a plain sequential loop, acc += x[i], the way most C++ would sum 256 floats.
void block_reduce(const float* x, float* partial, long n, int block, int threads, int tree) {
  const long blocks = (n + block - 1) / block;
  pool.run(threads, [&](int t) {
    long first, last;
    split(blocks, threads, t, &first, &last);
    float buf[1024];
    for (long b = first; b < last; ++b) {
      const long base = b * block;
      const long count = std::min<long>(block, n - base);
      if (tree) {
        for (long i = 0; i < block; ++i) buf[i] = i < count ? x[base + i] : 0.0f;
        for (int s = block / 2; s > 0; s /= 2)
          for (int i = 0; i < s; ++i) buf[i] += buf[i + s];
        partial[b] = buf[0];
      } else {
        float acc = 0.0f;
        for (long i = 0; i < count; ++i) acc += x[base + i];
        partial[b] = acc;
      }
    }
  });
}

}  // extern "C"
