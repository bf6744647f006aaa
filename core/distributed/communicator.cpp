#include "distributed/communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "distributed/deadline.hpp"
#include "distributed/watchdog.hpp"
#include "runtime/device.hpp"
#include "runtime/graph.hpp"
#include "runtime/memory.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"
#include "support/interrupt.hpp"
#include "support/text.hpp"

namespace jiasu::distributed {
namespace {

using nccl::NcclComm;
using nccl::NcclResult;

// Polls quickly at first (most waits are short), then every millisecond.
void pause(int round) {
  if (round < 50) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(round < 200 ? 50 : 1000));
}

// The NCCL calls this thread has issued inside `with group():` and the communicators they went to.
struct OpenGroup {
  int depth = 0;
  std::vector<std::shared_ptr<Communicator>> touched;
};
thread_local OpenGroup open_group;

nccl::NcclConfig non_blocking_config() {
  nccl::NcclConfig config;
  std::memset(&config, 0, sizeof config);  // no stray bytes in the padding NCCL copies with the fields
  config.size = sizeof config;
  config.magic = nccl::kConfigMagic;
  config.version = nccl::kConfigVersion;
  config.blocking = 0;
  config.cga_cluster_size = config.min_ctas = config.max_ctas = config.split_share = nccl::kConfigUndefInt;
  config.net_name = nullptr;
  return config;
}

void check_buffer(const Array& a, int device, const char* what) {
  if (a.on_host()) throw BadArgument(std::string(what) + " is a CPU-device array; NCCL moves GPU memory");
  if (a.device() != device)
    throw BadValue(std::string(what) + " is on GPU " + std::to_string(a.device()) +
                   ", but this communicator's GPU is " + std::to_string(device));
  if (!a.c_contiguous())
    throw BadValue(std::string(what) + " must be C-contiguous; copy it with jiasu.ascontiguousarray(x)");
  nccl::data_type(a.dtype());
}

std::string shape_text(const Shape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// `out` must have `shape` and x's dtype.
void check_out(const Array& x, const Array& out, const Shape& shape, int device) {
  check_buffer(out, device, "out");
  if (out.shape() != shape)
    throw BadValue("out has shape " + shape_text(out.shape()) + "; this call's result has shape " + shape_text(shape));
  if (out.dtype() != x.dtype())
    throw BadValue(std::string("out has dtype ") + info(out.dtype()).name + "; the result's dtype is " +
                   info(x.dtype()).name);
}

const void* ptr(const Array& a) { return reinterpret_cast<const void*>(a.data()); }
void* mutable_ptr(const Array& a) { return reinterpret_cast<void*>(a.data()); }

}  // namespace

std::string new_unique_id() {
  nccl::NcclUniqueId id;
  nccl::check(nccl::api().ncclGetUniqueId(&id), "ncclGetUniqueId");
  return std::string(id.internal, sizeof id.internal);
}

Communicator::Communicator(NcclComm handle, int rank, int world_size, int device, double timeout_s)
    : handle_(handle), rank_(rank), world_size_(world_size), device_(device), timeout_s_(timeout_s) {}

Communicator::~Communicator() {
  if (!handle_) return;
  try {
    activate(device_);
  } catch (const std::exception&) {  // the driver is gone (exit): abort what can be aborted
  }
  nccl::api().ncclCommAbort(handle_);
}

std::shared_ptr<Communicator> Communicator::joined(NcclComm handle, int device, double timeout_s, Clock::time_point deadline) {
  int rank = 0, world_size = 0;
  std::shared_ptr<Communicator> comm(new Communicator(handle, 0, 0, device, timeout_s));
  comm->wait_ready("joining the communicator", deadline);
  nccl::check(nccl::api().ncclCommUserRank(handle, &rank), "ncclCommUserRank", handle);
  nccl::check(nccl::api().ncclCommCount(handle, &world_size), "ncclCommCount", handle);
  comm->rank_ = rank;
  comm->world_size_ = world_size;
  watch_communicator(comm);
  return comm;
}

std::shared_ptr<Communicator> Communicator::create(const std::string& unique_id, int rank, int world_size, int device,
                                                   double timeout_s, bool check_calls) {
  if (unique_id.size() != sizeof(nccl::NcclUniqueId))
    throw BadValue("an NCCL unique id has " + std::to_string(sizeof(nccl::NcclUniqueId)) + " bytes, not " +
                   std::to_string(unique_id.size()));
  if (world_size < 1) throw BadValue("world_size must be at least 1, not " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw BadValue("rank " + std::to_string(rank) + " is outside a world of " + std::to_string(world_size));
  if (!(timeout_s > 0)) throw BadValue("timeout must be a positive number of seconds");
  if (const char* blocking = std::getenv("NCCL_COMM_BLOCKING"); blocking && std::strcmp(blocking, "1") == 0)
    throw BadValue("NCCL_COMM_BLOCKING=1 makes NCCL wait inside its calls, where jiasu's timeouts cannot end a "
                   "wait for a lost peer: unset it");
  require_gpu("jiasu.distributed needs a GPU");
  if (device < 0 || device >= device_count())
    throw BadValue("device " + std::to_string(device) + " does not exist (" + std::to_string(device_count()) +
                   " GPUs are visible)");
  const nccl::Api& api = nccl::api();
  nccl::NcclUniqueId id;
  std::memcpy(id.internal, unique_id.data(), sizeof id.internal);
  nccl::NcclConfig config = non_blocking_config();
  NcclComm handle = nullptr;
  const Clock::time_point deadline = deadline_after(timeout_s);
  activate(device);  // NCCL takes the current device
  nccl::check(api.ncclCommInitRankConfig(&handle, world_size, id, rank, &config), "ncclCommInitRankConfig");
  std::shared_ptr<Communicator> comm = joined(handle, device, timeout_s, deadline);
  comm->check_calls_ = check_calls;
  return comm;
}

std::string Communicator::where() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(world_size_);
}

bool Communicator::alive() const {
  std::lock_guard lock(mutex_);
  return handle_ && !failure_;
}

void Communicator::raise_failure_locked() {
  if (failure_->timeout) throw DistributedTimeout(failure_->message, failure_->code);
  throw DistributedError(failure_->message, failure_->code);
}

void Communicator::fail_locked(Failure failure) {
  if (failure_) return;
  failure_ = std::move(failure);
  work_.clear();
  if (calls_in_flight_ > 0) abort_pending_ = true;
  else abort_locked();
}

void Communicator::abort_locked() {
  abort_pending_ = false;
  if (NcclComm handle = std::exchange(handle_, nullptr)) nccl::api().ncclCommAbort(handle);
}

NcclComm Communicator::begin_call() {
  std::lock_guard lock(mutex_);
  if (failure_) raise_failure_locked();
  if (!handle_) throw DistributedError("the communicator of " + where() + " was destroyed");
  ++calls_in_flight_;
  return handle_;
}

void Communicator::end_call() {
  std::lock_guard lock(mutex_);
  if (--calls_in_flight_ == 0 && abort_pending_) abort_locked();
}

void Communicator::wait_ready(const char* what, Clock::time_point deadline) {
  watch_interrupts();
  for (int round = 0;; ++round) {
    {
      std::lock_guard lock(mutex_);
      if (failure_) raise_failure_locked();
      NcclResult state = nccl::kSuccess;
      NcclResult r = nccl::api().ncclCommGetAsyncError(handle_, &state);
      if (r == nccl::kSuccess && state == nccl::kSuccess) return;
      if (r != nccl::kSuccess || state != nccl::kInProgress) {
        const NcclResult code = r != nccl::kSuccess ? r : state;
        fail_locked({std::string(what) + " on " + where() + " failed: " + nccl::error_text(code, handle_), code, false});
        raise_failure_locked();
      }
      if (Clock::now() > deadline) {
        fail_locked({format("%s on %s did not finish within %g s: a peer may have died, hung or not joined; the "
                                  "communicator was aborted", what, where().c_str(), timeout_s_),
                     nccl::kInProgress, true});
        raise_failure_locked();
      }
    }
    if (interrupted()) throw Interrupted(std::string(what) + " was interrupted");
    pause(round);
  }
}

void Communicator::record_pending() {
  std::lock_guard lock(mutex_);
  for (Work& w : work_) {
    if (w.done) continue;
    if (!spare_events_.empty()) {
      w.done = std::move(spare_events_.back());
      spare_events_.pop_back();
    } else {
      w.done = std::make_unique<Event>(device_, false);
    }
    w.done->record(w.stream);
    w.deadline = deadline_after(timeout_s_);
  }
}

template <typename Call>
void Communicator::run(const char* what, cu::CUstream stream, const Call& call) {
  refuse_in_capture("a collective");  // its completion is watched through events, which a graph does not run
  stream = work_stream(stream);
  const NcclComm handle = begin_call();
  {
    std::lock_guard lock(mutex_);
    work_.push_back({what, Clock::time_point::max(), stream, nullptr});
  }
  bool queued = false;
  try {
    activate(device_);
    const NcclResult r = call(handle, stream);
    if (r != nccl::kSuccess && r != nccl::kInProgress) {
      std::lock_guard lock(mutex_);
      if (failure_) raise_failure_locked();  // the watchdog failed the communicator meanwhile
      work_.pop_back();
      throw DistributedError(std::string(what) + " on " + where() + " failed: " + nccl::error_text(r, handle), r);
    }
    if (open_group.depth > 0) {  // issued at the group's end, which also ends this call
      open_group.touched.push_back(shared_from_this());
      queued = true;
      return;
    }
    if (r == nccl::kInProgress) wait_ready(what, deadline_after(timeout_s_));
    record_pending();
  } catch (...) {
    if (!queued) end_call();
    throw;
  }
  end_call();
}

void Communicator::all_reduce(const Array& x, const Array& out, nccl::ReduceOp op, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_out(x, out, x.shape(), device_);
  check_agreement("all_reduce", x, op, -1, stream);
  run("all_reduce", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclAllReduce(ptr(x), mutable_ptr(out), x.size(), nccl::data_type(x.dtype()), op, h, stream);
  });
}

void Communicator::broadcast(const Array& x, int root, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_peer(root, "root");
  check_agreement("broadcast", x, -1, root, stream);
  run("broadcast", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclBroadcast(ptr(x), mutable_ptr(x), x.size(), nccl::data_type(x.dtype()), root, h, stream);
  });
}

void Communicator::reduce(const Array& x, const Array& out, nccl::ReduceOp op, int root, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_out(x, out, x.shape(), device_);
  check_peer(root, "root");
  check_agreement("reduce", x, op, root, stream);
  run("reduce", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclReduce(ptr(x), mutable_ptr(out), x.size(), nccl::data_type(x.dtype()), op, root, h,
                                  stream);
  });
}

Shape Communicator::gathered_shape(const Shape& x) const {
  Shape shape{world_size_};
  shape.insert(shape.end(), x.begin(), x.end());
  return shape;
}

Shape Communicator::scattered_shape(const Shape& x) const {
  if (x.empty() || x[0] % world_size_ != 0)
    throw BadValue("x's first dimension must be divisible by the world size " + std::to_string(world_size_) +
                   "; x has shape " + shape_text(x));
  Shape shape = x;
  shape[0] /= world_size_;
  return shape;
}

Array Communicator::new_result(const Shape& shape, DType dtype, cu::CUstream stream) const {
  Layout layout = contiguous_layout(shape, static_cast<int64_t>(itemsize(dtype)));
  return Array(dtype, layout, allocate_device(device_, layout.size() * layout.itemsize, work_stream(stream)));
}

void Communicator::all_gather(const Array& x, const Array& out, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_out(x, out, gathered_shape(x.shape()), device_);
  check_agreement("all_gather", x, -1, -1, stream);
  run("all_gather", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclAllGather(ptr(x), mutable_ptr(out), x.size(), nccl::data_type(x.dtype()), h, stream);
  });
}

void Communicator::reduce_scatter(const Array& x, const Array& out, nccl::ReduceOp op, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_out(x, out, scattered_shape(x.shape()), device_);
  check_agreement("reduce_scatter", x, op, -1, stream);
  run("reduce_scatter", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclReduceScatter(ptr(x), mutable_ptr(out), out.size(), nccl::data_type(x.dtype()), op, h,
                                         stream);
  });
}

// NCCL before 2.28 has no all-to-all call: one send and one receive per peer, in one group.
void Communicator::all_to_all(const Array& x, const Array& out, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_out(x, out, x.shape(), device_);
  scattered_shape(x.shape());  // x's rows split evenly among the ranks
  const int64_t block_bytes = x.nbytes() / world_size_;
  const size_t count = static_cast<size_t>(x.size() / world_size_);
  const int type = nccl::data_type(x.dtype());
  check_agreement("all_to_all", x, -1, -1, stream);
  run("all_to_all", stream, [&](NcclComm h, cu::CUstream stream) {
    const nccl::Api& api = nccl::api();
    auto queued = [](NcclResult r) { return r == nccl::kSuccess || r == nccl::kInProgress; };
    NcclResult r = api.ncclGroupStart();
    for (int peer = 0; peer < world_size_ && queued(r); ++peer) {
      r = api.ncclSend(reinterpret_cast<const char*>(ptr(x)) + peer * block_bytes, count, type, peer, h, stream);
      if (queued(r))
        r = api.ncclRecv(reinterpret_cast<char*>(mutable_ptr(out)) + peer * block_bytes, count, type, peer, h, stream);
    }
    const NcclResult end = api.ncclGroupEnd();
    return queued(r) ? end : r;
  });
}

void Communicator::send(const Array& x, int peer, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_peer(peer, "peer");
  run("send", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclSend(ptr(x), x.size(), nccl::data_type(x.dtype()), peer, h, stream);
  });
}

void Communicator::recv(const Array& x, int peer, cu::CUstream stream) {
  check_buffer(x, device_, "x");
  check_peer(peer, "peer");
  run("recv", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclRecv(mutable_ptr(x), x.size(), nccl::data_type(x.dtype()), peer, h, stream);
  });
}

// The collectives check_agreement knows, by their code in a call record.
constexpr const char* kCollectives[] = {"all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
                                        "all_to_all"};
constexpr const char* kOps[] = {"sum", "prod", "max", "min", "avg"};

void Communicator::check_agreement(const char* what, const Array& x, int op, int root, cu::CUstream stream) {
  if (!check_calls_ || open_group.depth > 0) return;
  constexpr int kFields = 5;  // collective, dtype, count, op, root
  int64_t mine[kFields] = {0, static_cast<int64_t>(x.dtype()), x.size(), op, root};
  while (std::strcmp(kCollectives[mine[0]], what) != 0) ++mine[0];
  if (!call_record_) {
    call_record_ = std::make_unique<Array>(Array::empty({kFields}, DType::Int64, device_));
    call_records_ = std::make_unique<Array>(Array::empty({world_size_, kFields}, DType::Int64, device_));
  }
  stream = work_stream(stream);
  call_record_->copy_from_host(mine, stream, true);
  run("the argument check", stream, [&](NcclComm h, cu::CUstream stream) {
    return nccl::api().ncclAllGather(ptr(*call_record_), mutable_ptr(*call_records_), kFields,
                                     nccl::data_type(DType::Int64), h, stream);
  });
  synchronize();
  std::vector<int64_t> all(static_cast<size_t>(world_size_) * kFields);
  call_records_->copy_to_host(all.data(), stream, true);
  auto describe = [&](const int64_t* r) {
    std::string text = format("%s of %lld %s", kCollectives[r[0]], static_cast<long long>(r[2]),
                              info(static_cast<DType>(r[1])).name);
    if (r[3] >= 0) text += std::string(" (") + kOps[r[3]] + ")";
    if (r[4] >= 0) text += format(" with root %lld", static_cast<long long>(r[4]));
    return text;
  };
  bool agree = true;
  for (int r = 0; r < world_size_; ++r) agree = agree && std::equal(mine, mine + kFields, all.data() + r * kFields);
  if (agree) return;
  // Every rank's call, ranks that made the same one together: "ranks 0, 2 called ...; rank 1 called ...".
  std::vector<std::pair<std::string, std::string>> calls;  // (call, its ranks)
  for (int r = 0; r < world_size_; ++r) {
    const std::string call = describe(all.data() + r * kFields);
    auto same = std::find_if(calls.begin(), calls.end(), [&](const auto& c) { return c.first == call; });
    if (same == calls.end()) calls.emplace_back(call, "rank " + std::to_string(r));
    else same->second = (same->second.rfind("rank ", 0) == 0 ? "ranks " + same->second.substr(5) : same->second) +
                        ", " + std::to_string(r);
  }
  std::string text;
  for (const auto& [call, ranks] : calls) text += (text.empty() ? "" : "; ") + ranks + " called " + call;
  throw BadValue("the ranks' calls disagree (seen by " + where() + "): " + text + "; nothing was sent");
}

void Communicator::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= world_size_)
    throw BadValue(std::string(what) + " " + std::to_string(peer) + " is outside the communicator's ranks 0.." +
                   std::to_string(world_size_ - 1));
}

void Communicator::barrier(cu::CUstream stream) {
  if (open_group.depth > 0) throw BadValue("barrier() cannot be part of a group: it waits for the group's work");
  if (!barrier_buffer_) barrier_buffer_ = std::make_unique<Array>(Array::empty({1}, DType::Int32, device_));
  all_reduce(*barrier_buffer_, *barrier_buffer_, nccl::kSum, stream);
  synchronize();
}

void Communicator::synchronize() {
  if (open_group.depth > 0) throw BadValue("synchronize() cannot be part of a group: the group's work is issued at its end");
  watch_interrupts();
  for (int round = 0;; ++round) {
    watch();
    {
      std::lock_guard lock(mutex_);
      if (failure_) raise_failure_locked();
      if (work_.empty()) return;
    }
    if (interrupted()) throw Interrupted("waiting for the communicator's work was interrupted");
    pause(round);
  }
}

void Communicator::watch() {
  std::lock_guard lock(mutex_);
  if (!handle_ || failure_) return;
  NcclResult state = nccl::kSuccess;
  const NcclResult r = nccl::api().ncclCommGetAsyncError(handle_, &state);
  if (r != nccl::kSuccess || (state != nccl::kSuccess && state != nccl::kInProgress)) {
    const NcclResult code = r != nccl::kSuccess ? r : state;
    fail_locked({"NCCL reported an error on " + where() + ": " + nccl::error_text(code, handle_) +
                     "; the communicator was aborted",
                 code, false});
    return;
  }
  try {
    activate(device_);
    while (!work_.empty()) {
      Work& w = work_.front();
      if (!w.done) break;  // still in an open group: not on the GPU yet
      if (w.done->done()) {
        spare_events_.push_back(std::move(w.done));
        work_.pop_front();
        continue;
      }
      if (Clock::now() > w.deadline)
        fail_locked({format("%s on %s did not finish within %g s: a peer may have died, hung or not called "
                                  "it; the communicator was aborted", w.what.c_str(), where().c_str(), timeout_s_),
                     0, true});
      break;
    }
  } catch (const std::exception& e) {  // the GPU failed (a sticky CUDA error)
    fail_locked({std::string("the GPU work of ") + where() + " failed: " + e.what(), 0, false});
  }
}

std::shared_ptr<Communicator> Communicator::split(int color, int key) {
  if (open_group.depth > 0) throw BadValue("split() cannot be part of a group");
  constexpr int kNoColor = -1;  // NCCL_SPLIT_NOCOLOR
  nccl::NcclConfig config = non_blocking_config();
  // In non-blocking mode NCCL writes the new communicator at the end of its own job, after ncclCommSplit has
  // returned: the slot lives on the heap, and is left to NCCL (leaked) if the wait for it fails.
  auto* child = new NcclComm(nullptr);
  const Clock::time_point deadline = deadline_after(timeout_s_);
  const NcclComm parent = begin_call();
  try {
    activate(device_);
    nccl::check(nccl::api().ncclCommSplit(parent, color < 0 ? kNoColor : color, key, child, &config),
                "ncclCommSplit", parent);
    wait_ready("split", deadline);  // the parent is in progress until the child is made
  } catch (...) {
    end_call();
    throw;
  }
  end_call();
  const NcclComm made = *child;
  delete child;
  if (!made) return nullptr;  // this rank passed no color
  std::shared_ptr<Communicator> comm = joined(made, device_, timeout_s_, deadline);
  comm->check_calls_ = check_calls_;
  return comm;
}

void Communicator::abort() {
  std::lock_guard lock(mutex_);
  fail_locked({"the communicator of " + where() + " was aborted", 0, false});
}

void Communicator::destroy() {
  if (open_group.depth > 0) throw BadValue("destroy() cannot be part of a group: the group's work is issued at its end");
  try {
    synchronize();
  } catch (const DistributedError&) {
    return;  // failed, so already aborted
  }
  NcclComm handle;
  {
    std::lock_guard lock(mutex_);
    if (failure_) return;
    failure_ = Failure{"the communicator of " + where() + " was destroyed", 0, false};
    handle = std::exchange(handle_, nullptr);
  }
  const nccl::Api& api = nccl::api();
  activate(device_);
  const Clock::time_point deadline = deadline_after(timeout_s_);
  NcclResult state = api.ncclCommFinalize(handle);
  for (int round = 0; state == nccl::kInProgress || state == nccl::kSuccess; ++round) {
    if (api.ncclCommGetAsyncError(handle, &state) != nccl::kSuccess || state != nccl::kInProgress) break;
    if (Clock::now() > deadline) break;
    pause(round);
  }
  if (state == nccl::kSuccess) api.ncclCommDestroy(handle);
  else api.ncclCommAbort(handle);  // finalizing failed or did not end: free what can be freed
}

void group_start() {
  nccl::check(nccl::api().ncclGroupStart(), "ncclGroupStart");
  ++open_group.depth;
}

void group_end() {
  if (open_group.depth == 0) throw BadValue("group_end() without group_start()");
  const NcclResult r = nccl::api().ncclGroupEnd();
  if (--open_group.depth > 0) {
    nccl::check(r, "ncclGroupEnd");
    return;
  }
  auto touched = std::move(open_group.touched);
  open_group.touched.clear();
  // Every call of the group ends here, even when one communicator fails: the first error is raised after.
  std::exception_ptr first_error;
  for (auto& comm : touched) {
    try {
      if (r != nccl::kSuccess && r != nccl::kInProgress) {  // nothing of the group was queued
        std::lock_guard lock(comm->mutex_);
        auto& work = comm->work_;
        work.erase(std::remove_if(work.begin(), work.end(), [](const Communicator::Work& w) { return !w.done; }),
                   work.end());
      } else {
        if (r == nccl::kInProgress) comm->wait_ready("the group", deadline_after(comm->timeout_s_));
        comm->record_pending();
      }
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
    comm->end_call();
  }
  if (first_error) std::rethrow_exception(first_error);
  nccl::check(r, "ncclGroupEnd");
}

}  // namespace jiasu::distributed
