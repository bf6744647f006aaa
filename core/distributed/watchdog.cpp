#include "distributed/watchdog.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "distributed/communicator.hpp"

namespace jiasu::distributed {
namespace {

constexpr auto kTick = std::chrono::milliseconds(10);

struct Watchdog {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<std::weak_ptr<Communicator>> watched;
  std::thread thread;
  bool stopping = false;  // set once, at exit: then no thread may start, as it would outlive the interpreter

  // The communicators still alive; forgets the others. Holds mutex.
  std::vector<std::shared_ptr<Communicator>> live() {
    std::vector<std::shared_ptr<Communicator>> out;
    std::vector<std::weak_ptr<Communicator>> kept;
    for (const auto& weak : watched) {
      if (auto comm = weak.lock(); comm && comm->alive()) {
        kept.push_back(weak);
        out.push_back(std::move(comm));
      }
    }
    watched = std::move(kept);
    return out;
  }

  void loop() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      auto comms = live();
      lock.unlock();
      for (auto& comm : comms) comm->watch();
      comms.clear();  // a communicator whose last owner was this list is destroyed here, unlocked
      lock.lock();
      wake.wait_for(lock, kTick, [this] { return stopping; });
    }
  }
};

// Leaked: the thread is joined by shutdown() (the Python layer's exit hook), never by a static destructor that
// could run while the thread still reads other statics.
Watchdog& watchdog() {
  static auto* instance = new Watchdog();
  return *instance;
}

}  // namespace

void watch_communicator(const std::weak_ptr<Communicator>& comm) {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mutex);
  if (w.stopping) return;
  w.watched.push_back(comm);
  if (!w.thread.joinable()) w.thread = std::thread([&w] { w.loop(); });
}

void shutdown() {
  Watchdog& w = watchdog();
  std::vector<std::shared_ptr<Communicator>> comms;
  {
    std::lock_guard lock(w.mutex);
    w.stopping = true;
    comms = w.live();
    w.watched.clear();
  }
  w.wake.notify_all();
  if (w.thread.joinable()) w.thread.join();
  for (auto& comm : comms) comm->abort();
}

}  // namespace jiasu::distributed
