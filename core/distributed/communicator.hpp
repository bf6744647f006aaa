// NCCL communicators: one rank's membership of a group of processes, each with one GPU, and the collectives
// between them. Communicators are created in NCCL's non-blocking mode, so no NCCL call holds the host for
// long; every collective's completion is tracked by an event on the caller's stream, which the watchdog
// (distributed/watchdog) checks against a deadline. A communicator that failed (a peer that did not answer
// in time, an asynchronous NCCL error, an abort) is aborted, and every later call on it raises the reason.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "array/array.hpp"
#include "distributed/deadline.hpp"
#include "runtime/nccl.hpp"

namespace jiasu {

class Event;

namespace distributed {

// A fresh ncclUniqueId (rank 0 makes it; the others receive it), as its 128 bytes.
std::string new_unique_id();

class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  // Joins the communicator of `world_size` ranks named by `unique_id` as `rank`, on GPU `device`. Waits
  // (polling) until NCCL has connected every rank, at most `timeout_s` seconds (then DistributedTimeout).
  // check_calls: debug mode, where every collective first compares its arguments across the ranks (below).
  static std::shared_ptr<Communicator> create(const std::string& unique_id, int rank, int world_size, int device,
                                              double timeout_s, bool check_calls = false);
  ~Communicator();  // aborts a communicator that was not destroyed
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int device() const { return device_; }
  double timeout_s() const { return timeout_s_; }
  bool check_calls() const { return check_calls_; }

  // The collectives. Arrays are contiguous GPU arrays on this communicator's device; `out` may be x itself
  // (in place). Each is queued on `stream` (null: the default stream) and returns once NCCL has queued it.
  void all_reduce(const Array& x, const Array& out, nccl::ReduceOp op, cu::CUstream stream);
  void broadcast(const Array& x, int root, cu::CUstream stream);
  void reduce(const Array& x, const Array& out, nccl::ReduceOp op, int root, cu::CUstream stream);
  void all_gather(const Array& x, const Array& out, cu::CUstream stream);      // out: (world, *x.shape)
  void reduce_scatter(const Array& x, const Array& out, nccl::ReduceOp op, cu::CUstream stream);
  void all_to_all(const Array& x, const Array& out, cu::CUstream stream);      // row blocks by rank
  void send(const Array& x, int peer, cu::CUstream stream);
  void recv(const Array& x, int peer, cu::CUstream stream);
  // The shapes of the results of all_gather, reduce_scatter and all_to_all (checking x's first dimension).
  Shape gathered_shape(const Shape& x) const;
  Shape scattered_shape(const Shape& x) const;
  // An uninitialised result array on this communicator's GPU, allocated in order with `stream`'s work.
  Array new_result(const Shape& shape, DType dtype, cu::CUstream stream) const;

  // A collective over every rank, then a wait for all of this rank's outstanding work.
  void barrier(cu::CUstream stream);
  // Waits until the work queued so far has finished, polling (Ctrl-C ends the wait with Interrupted); raises
  // what made the communicator fail, if it failed.
  void synchronize();

  // A new communicator of the ranks that pass the same color (ordered by key, then rank); color < 0 leaves this
  // rank out (null returned). Every rank of this communicator must call it.
  std::shared_ptr<Communicator> split(int color, int key);
  // Stops this rank's part of the communicator at once (ncclCommAbort): its queued work is dropped, and later
  // calls raise. Peers waiting on it fail by their own timeouts.
  void abort();
  // Waits for outstanding work, then frees the communicator (ncclCommFinalize, ncclCommDestroy); falls back
  // to abort when that does not finish within the timeout.
  void destroy();
  bool alive() const;  // neither destroyed, aborted nor failed

  // The watchdog's check (distributed/watchdog): finishes completed work, and fails the communicator when work
  // is overdue or NCCL reports an asynchronous error. Never throws.
  void watch();

 private:
  Communicator(nccl::NcclComm handle, int rank, int world_size, int device, double timeout_s);
  struct Work {
    std::string what;  // "all_reduce", for messages
    Clock::time_point deadline;  // set when the work is recorded (a group's, at its end)
    cu::CUstream stream;
    std::unique_ptr<Event> done;  // null until recorded: the call is still in NCCL, or in an open group
  };
  struct Failure {
    std::string message;
    int code;
    bool timeout;
  };
  friend void group_end();
  // A communicator NCCL is still connecting: waits until it is ready (or the deadline), then hands it to the
  // watchdog.
  static std::shared_ptr<Communicator> joined(nccl::NcclComm handle, int device, double timeout_s,
                                              Clock::time_point deadline);

  // Runs one NCCL call as tracked work: `call(handle, stream)` enqueues it on the stream work goes to.
  template <typename Call>
  void run(const char* what, cu::CUstream stream, const Call& call);
  // NCCL frees a communicator in ncclCommAbort, so an abort must not overlap an NCCL call on it from another
  // thread: while calls are in flight (begun, or queued in an open group) the watchdog's abort is deferred to the
  // end of the last one. Returns the handle to call with (throws the failure, if any).
  nccl::NcclComm begin_call();
  void end_call();
  [[noreturn]] void raise_failure_locked();
  // Waits (polling) until NCCL has finished queuing or connecting; throws on an error or at the deadline.
  void wait_ready(const char* what, Clock::time_point deadline);
  // Records the done events of this communicator's unrecorded work (at the end of a call or group).
  void record_pending();
  // Marks the communicator failed (the first reason wins) and aborts it, or has the last call in flight abort it.
  // Holds mutex_.
  void fail_locked(Failure failure);
  void abort_locked();  // ncclCommAbort now; the handle is gone after it. Holds mutex_.
  std::string where() const;  // "rank 1 of 2"
  void check_peer(int peer, const char* what) const;  // BadValue outside 0..world_size-1
  // Debug mode: before a collective, every rank's (call, dtype, count, op, root) is gathered and compared; ranks
  // that disagree would hang or mix unrelated data in NCCL, so all of them raise BadValue instead, naming what
  // each rank passed. Costs one small all_gather and a wait per collective; not inside a group.
  void check_agreement(const char* what, const Array& x, int op, int root, cu::CUstream stream);

  mutable std::mutex mutex_;
  nccl::NcclComm handle_;  // null once destroyed or aborted
  std::deque<Work> work_;
  std::optional<Failure> failure_;
  std::vector<std::unique_ptr<Event>> spare_events_;  // events of finished work, reused
  std::unique_ptr<Array> barrier_buffer_;  // one int32 element, made at the first barrier
  std::unique_ptr<Array> call_record_, call_records_;  // check_agreement's: this rank's, and every rank's
  int rank_, world_size_, device_;
  double timeout_s_;
  bool check_calls_ = false;
  int calls_in_flight_ = 0;     // guarded by mutex_
  bool abort_pending_ = false;  // guarded by mutex_
};

// with jiasu.distributed.group(): NCCL calls between group_start and group_end (of any communicator of this
// thread) are issued together (ncclGroupStart / ncclGroupEnd); nests.
void group_start();
void group_end();

}  // namespace distributed
}  // namespace jiasu
