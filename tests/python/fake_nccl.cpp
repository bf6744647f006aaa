// A stand-in for libnccl.so.2, for tests on machines without a GPU (with the stand-in libcuda of
// tools/launch-overhead, whose device memory is host memory). It works across processes, through files:
// ncclGetUniqueId makes a fresh folder (under $TMPDIR) and writes its path into the id; each collective (numbered
// per communicator) writes the rank's send buffer to <comm folder>/<seq>.<rank> (a temporary name, then a rename),
// waits, polling, until every rank's file exists, and computes this rank's result with NCCL's reduction semantics
// (float16 and bfloat16 through float). A send writes p2p.<from>.<to>.<n>, which the matching receive waits for.
// As NCCL in non-blocking mode, no call waits for the peers: a call writes its file and returns ncclInProgress
// until the peers' files are there, and ncclCommGetAsyncError (or a later call) finishes the work queued so far, in
// order, as far as they allow; ncclGroupEnd of a group that issued calls returns ncclInProgress. Work that waits
// longer than $JIASU_FAKE_NCCL_WAIT_S seconds (default 60) fails with ncclRemoteError, and an aborted
// communicator's with ncclInternalError. Every call holds one lock, as the work queues are shared with the
// watchdog's polling thread. ncclCommGetAsyncError also reports ncclInProgress twice after an init or a
// split. For tests: fake_nccl_last_call() gives the last collective's
// (datatype, op, count) and the blocking field of the last config; fake_nccl_fail_async(code) makes every
// communicator report an asynchronous error.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Result = int;
constexpr Result kSuccess = 0, kInternalError = 3, kInvalidArgument = 4, kInvalidUsage = 5, kRemoteError = 6,
                 kInProgress = 7;

struct Config {  // ncclConfig_t as NCCL 2.18 laid it out (the prefix every later layout keeps)
  size_t size;
  unsigned magic, version;
  int blocking, cga_cluster_size, min_ctas, max_ctas;
  const char* net_name;
  int split_share;
};

struct Comm {
  std::string dir;
  int rank, nranks;
  uint64_t seq = 0;
  std::atomic<bool> aborted{false};
  std::atomic<int> init_polls{2};
  std::map<int, uint64_t> sent, received;  // per peer
  std::deque<std::function<Result()>> pending;  // issued work: each returns kInProgress until it can finish
  std::chrono::steady_clock::time_point stalled_since;  // when the work at the front started waiting
};

std::recursive_mutex api_mutex;  // NCCL's calls may come from several threads (jiasu's watchdog polls)
std::string last_error;
int calls_in_group = 0, group_depth = 0;
std::atomic<int> injected_error{kSuccess};
int last_datatype = -1, last_op = -1, last_blocking = 0;
size_t last_count = 0;

void remember(int datatype, int op, size_t count) {
  last_datatype = datatype;
  last_op = op;
  last_count = count;
}

size_t element_size(int datatype) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return datatype >= 0 && datatype <= 9 ? sizes[datatype] : 0;
}

Result check_config(const Config* config) {
  if (!config) return kSuccess;
  if (config->magic != 0xcafebeef || config->size < sizeof(Config) || config->version < 21800) {
    last_error = "fake NCCL: the config is not an initialised ncclConfig_t of NCCL 2.18 or later";
    return kInvalidArgument;
  }
  last_blocking = config->blocking;
  return kSuccess;
}

double wait_limit_s() {
  const char* text = std::getenv("JIASU_FAKE_NCCL_WAIT_S");
  return text ? std::atof(text) : 60.0;
}

void write_file(const std::string& path, const void* data, size_t bytes) {
  const std::string temporary = path + ".partial";
  std::ofstream(temporary, std::ios::binary).write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  std::rename(temporary.c_str(), path.c_str());
}

// Reads `path` into `bytes`; kInProgress while it does not exist yet.
Result try_read(const std::string& path, std::vector<char>& bytes) {
  if (access(path.c_str(), F_OK) != 0) return kInProgress;
  std::ifstream in(path, std::ios::binary);
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return kSuccess;
}

// Finishes the communicator's queued work, in order, as far as the peers' files allow: kSuccess when all is done,
// kInProgress while some waits, or the error that ended it.
Result progress(Comm* comm) {
  const auto now = std::chrono::steady_clock::now();
  while (!comm->pending.empty()) {
    if (comm->aborted) {
      last_error = "fake NCCL: the communicator was aborted";
      return kInternalError;
    }
    const Result result = comm->pending.front()();
    if (result == kInProgress) {
      if (std::chrono::duration<double>(now - comm->stalled_since).count() > wait_limit_s()) {
        last_error = "fake NCCL: rank " + std::to_string(comm->rank) + " waited too long for its peers";
        return kRemoteError;
      }
      return kInProgress;
    }
    comm->pending.pop_front();
    comm->stalled_since = now;
    if (result != kSuccess) return result;
  }
  return kSuccess;
}

// Queues `finish` behind the communicator's other work and goes as far as it can now: what a non-blocking
// NCCL call returns.
Result issue(Comm* comm, std::function<Result()> finish) {
  if (comm->pending.empty()) comm->stalled_since = std::chrono::steady_clock::now();
  comm->pending.push_back(std::move(finish));
  if (group_depth > 0) ++calls_in_group;
  return progress(comm);
}

// One collective's files: this rank's is written when the exchange starts; gather() reads the others' as they come.
struct Exchange {
  std::string prefix;
  std::vector<std::vector<char>> all;
  std::vector<bool> got;
  Result gather() {
    for (size_t r = 0; r < all.size(); ++r) {
      if (got[r]) continue;
      if (try_read(prefix + std::to_string(r), all[r]) != kSuccess) return kInProgress;
      got[r] = true;
    }
    return kSuccess;
  }
};

std::shared_ptr<Exchange> exchange(Comm* comm, const void* data, size_t bytes) {
  auto ex = std::make_shared<Exchange>();
  ex->prefix = comm->dir + "/" + std::to_string(comm->seq++) + ".";
  write_file(ex->prefix + std::to_string(comm->rank), data, bytes);
  ex->all.assign(comm->nranks, {});
  ex->got.assign(comm->nranks, false);
  return ex;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 31, mantissa = h & 1023;
  float value = exponent == 0    ? std::ldexp(static_cast<float>(mantissa), -24)
                : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                 : std::ldexp(static_cast<float>(mantissa | 1024), static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}

uint16_t float_to_half(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (f >= 65520.0f) return sign | 0x7c00;
  if (f < std::ldexp(1.0f, -14)) return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(f, 24)));
  int exponent;
  const float fraction = std::frexp(f, &exponent);  // f = fraction * 2^exponent, fraction in [0.5, 1)
  uint32_t mantissa = static_cast<uint32_t>(std::nearbyint(std::ldexp(fraction, 11)));  // 11 bits, round to even
  if (mantissa == 2048) {
    mantissa = 1024;
    ++exponent;
  }
  if (exponent + 14 >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>((exponent + 14) << 10) | static_cast<uint16_t>(mantissa - 1024);
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

// Integers wrap (through their unsigned type), as on the GPU; floats are combined in double, rounded once.
template <typename T, typename Wide>
Wide combine(Wide a, Wide b, int op) {
  switch (op) {
    case 1: return a * b;
    case 2: return std::max(a, b);
    case 3: return std::min(a, b);
    default: return a + b;  // sum, avg
  }
}

template <typename T, typename Wide, typename Load, typename Store>
void reduce_as(const std::vector<std::vector<char>>& all, size_t offset, size_t count, int op, void* out,
               Load load, Store store) {
  const size_t n = all.size();
  for (size_t i = 0; i < count; ++i) {
    auto element = [&](size_t r) {
      T v;
      std::memcpy(&v, all[r].data() + (offset + i) * sizeof(T), sizeof(T));
      return load(v);
    };
    Wide acc = element(0);
    for (size_t r = 1; r < n; ++r) acc = combine<T, Wide>(acc, element(r), op);
    if (op == 4) acc = static_cast<Wide>(acc / static_cast<Wide>(n));
    T value = store(acc);
    std::memcpy(static_cast<char*>(out) + i * sizeof(T), &value, sizeof(T));
  }
}

template <typename T>
void reduce_integers(const std::vector<std::vector<char>>& all, size_t offset, size_t count, int op, void* out) {
  using U = std::make_unsigned_t<T>;
  for (size_t i = 0; i < count; ++i) {
    auto element = [&](size_t r) {
      T v;
      std::memcpy(&v, all[r].data() + (offset + i) * sizeof(T), sizeof(T));
      return v;
    };
    T acc = element(0);
    for (size_t r = 1; r < all.size(); ++r) {
      const T v = element(r);
      if (op == 0 || op == 4) acc = static_cast<T>(static_cast<U>(acc) + static_cast<U>(v));
      else if (op == 1) acc = static_cast<T>(static_cast<U>(acc) * static_cast<U>(v));
      else if (op == 2) acc = std::max(acc, v);
      else acc = std::min(acc, v);
    }
    if (op == 4) acc = static_cast<T>(acc / static_cast<T>(all.size()));
    std::memcpy(static_cast<char*>(out) + i * sizeof(T), &acc, sizeof(T));
  }
}

// Elements [offset, offset + count) of every rank's buffer, reduced into `out`.
void reduce_into(const std::vector<std::vector<char>>& all, size_t offset, size_t count, int datatype, int op,
                 void* out) {
  auto same = [](auto v) { return v; };
  switch (datatype) {
    case 0: return reduce_integers<int8_t>(all, offset, count, op, out);
    case 1: return reduce_integers<uint8_t>(all, offset, count, op, out);
    case 2: return reduce_integers<int32_t>(all, offset, count, op, out);
    case 3: return reduce_integers<uint32_t>(all, offset, count, op, out);
    case 4: return reduce_integers<int64_t>(all, offset, count, op, out);
    case 5: return reduce_integers<uint64_t>(all, offset, count, op, out);
    case 6:
      return reduce_as<uint16_t, double>(all, offset, count, op, out, half_to_float,
                                         [](double v) { return float_to_half(static_cast<float>(v)); });
    case 7:
      return reduce_as<float, double>(all, offset, count, op, out, same, [](double v) { return static_cast<float>(v); });
    case 8: return reduce_as<double, double>(all, offset, count, op, out, same, same);
    case 9:
      return reduce_as<uint16_t, double>(all, offset, count, op, out, bf16_to_float,
                                         [](double v) { return float_to_bf16(static_cast<float>(v)); });
  }
}

Result valid(Comm* comm, int datatype, int op) {
  if (!comm || comm->aborted) {
    last_error = "fake NCCL: a destroyed or aborted communicator";
    return kInvalidUsage;
  }
  if (!element_size(datatype) || op < -1 || op > 4) {
    last_error = "fake NCCL: datatype " + std::to_string(datatype) + " or op " + std::to_string(op) + " is invalid";
    return kInvalidArgument;
  }
  return kSuccess;
}

Comm* new_comm(const std::string& dir, int rank, int nranks) {
  mkdir(dir.c_str(), 0700);  // every rank makes it; the first one wins
  auto* comm = new Comm();
  comm->dir = dir;
  comm->rank = rank;
  comm->nranks = nranks;
  return comm;
}

}  // namespace

extern "C" {

Result ncclGetVersion(int* version) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  *version = 22805;
  return kSuccess;
}

Result ncclGetUniqueId(char* id) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/jiasu-fake-nccl-XXXXXX";
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  if (!mkdtemp(path.data()) || std::strlen(path.data()) >= 128) return kInternalError;
  std::memset(id, 0, 128);
  std::strcpy(id, path.data());
  return kSuccess;
}

struct UniqueId {
  char internal[128];
};

Result ncclCommInitRankConfig(Comm** comm, int nranks, UniqueId id, int rank, Config* config) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = check_config(config); r != kSuccess) return r;
  if (nranks < 1 || rank < 0 || rank >= nranks || id.internal[0] != '/') return kInvalidArgument;
  *comm = new_comm(std::string(id.internal, strnlen(id.internal, 128)) + "/world", rank, nranks);
  return kInProgress;
}

Result ncclCommSplit(Comm* comm, int color, int key, Comm** new_comm_out, Config* config) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = check_config(config); r != kSuccess) return r;
  if (Result r = valid(comm, 2, -1); r != kSuccess) return r;
  const int mine[2] = {color, key};
  const uint64_t seq = comm->seq;
  auto ex = exchange(comm, mine, sizeof mine);
  *new_comm_out = nullptr;  // as NCCL, written when the split is done
  issue(comm, [=]() -> Result {
    if (Result r = ex->gather(); r != kSuccess) return r;
    if (color < 0) return kSuccess;
    std::vector<std::pair<int, int>> members;  // (key, rank) of the ranks of this color
    for (int r = 0; r < comm->nranks; ++r) {
      int theirs[2];
      std::memcpy(theirs, ex->all[r].data(), sizeof theirs);
      if (theirs[0] == color) members.emplace_back(theirs[1], r);
    }
    std::sort(members.begin(), members.end());
    const int new_rank = static_cast<int>(
        std::find(members.begin(), members.end(), std::make_pair(key, comm->rank)) - members.begin());
    *new_comm_out = new_comm(comm->dir + "/split" + std::to_string(seq) + "." + std::to_string(color), new_rank,
                             static_cast<int>(members.size()));
    return kSuccess;
  });
  return kInProgress;
}

Result ncclCommGetAsyncError(Comm* comm, Result* state) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (!comm) return kInvalidArgument;
  if (comm->init_polls > 0) {
    --comm->init_polls;
    *state = kInProgress;
  } else if (injected_error != kSuccess) {
    *state = injected_error.load();
  } else {
    *state = progress(comm);
  }
  return kSuccess;
}

Result ncclCommCount(Comm* comm, int* count) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  *count = comm->nranks;
  return kSuccess;
}

Result ncclCommUserRank(Comm* comm, int* rank) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  *rank = comm->rank;
  return kSuccess;
}

Result ncclCommFinalize(Comm*) { return kSuccess; }

Result ncclCommDestroy(Comm* comm) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  delete comm;
  return kSuccess;
}

// Not freed: another thread may be inside a call on it, which the flag ends.
Result ncclCommAbort(Comm* comm) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (comm) comm->aborted = true;
  return kSuccess;
}

const char* ncclGetErrorString(Result result) {
  static const char* names[] = {"no error", "unhandled cuda error", "unhandled system error", "internal error",
                                "invalid argument", "invalid usage", "remote process exited or there was a network error",
                                "NCCL operation in progress"};
  return result >= 0 && result <= 7 ? names[result] : "unknown result code";
}

const char* ncclGetLastError(Comm*) { return last_error.c_str(); }

Result ncclGroupStart() {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (group_depth++ == 0) calls_in_group = 0;
  return kSuccess;
}

Result ncclGroupEnd() {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (group_depth == 0) return kInvalidUsage;
  return --group_depth == 0 && calls_in_group > 0 ? kInProgress : kSuccess;
}

Result ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  auto ex = exchange(comm, send, count * element_size(datatype));
  return issue(comm, [=] {
    if (Result r = ex->gather(); r != kSuccess) return r;
    reduce_into(ex->all, 0, count, datatype, op, recv);
    return kSuccess;
  });
}

Result ncclReduce(const void* send, void* recv, size_t count, int datatype, int op, int root, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  auto ex = exchange(comm, send, count * element_size(datatype));
  const bool is_root = comm->rank == root;
  return issue(comm, [=] {
    if (Result r = ex->gather(); r != kSuccess) return r;
    if (is_root) reduce_into(ex->all, 0, count, datatype, op, recv);
    return kSuccess;
  });
}

Result ncclBroadcast(const void* send, void* recv, size_t count, int datatype, int root, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  remember(datatype, -1, count);
  const size_t bytes = count * element_size(datatype);
  auto ex = exchange(comm, send, comm->rank == root ? bytes : 0);
  return issue(comm, [=] {
    if (Result r = ex->gather(); r != kSuccess) return r;
    std::memcpy(recv, ex->all[root].data(), std::min(bytes, ex->all[root].size()));
    return kSuccess;
  });
}

Result ncclAllGather(const void* send, void* recv, size_t count, int datatype, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  remember(datatype, -1, count);
  const size_t bytes = count * element_size(datatype);
  auto ex = exchange(comm, send, bytes);
  return issue(comm, [=] {
    if (Result r = ex->gather(); r != kSuccess) return r;
    for (size_t r = 0; r < ex->all.size(); ++r)
      std::memcpy(static_cast<char*>(recv) + r * bytes, ex->all[r].data(), bytes);
    return kSuccess;
  });
}

Result ncclReduceScatter(const void* send, void* recv, size_t count, int datatype, int op, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  auto ex = exchange(comm, send, count * comm->nranks * element_size(datatype));
  const size_t offset = count * comm->rank;
  return issue(comm, [=] {
    if (Result r = ex->gather(); r != kSuccess) return r;
    reduce_into(ex->all, offset, count, datatype, op, recv);
    return kSuccess;
  });
}

Result ncclSend(const void* send, size_t count, int datatype, int peer, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  if (peer < 0 || peer >= comm->nranks) return kInvalidArgument;
  const uint64_t n = comm->sent[peer]++;
  write_file(comm->dir + "/p2p." + std::to_string(comm->rank) + "." + std::to_string(peer) + "." + std::to_string(n),
             send, count * element_size(datatype));
  return issue(comm, [] { return kSuccess; });
}

Result ncclRecv(void* recv, size_t count, int datatype, int peer, Comm* comm, void*) {
  std::lock_guard<std::recursive_mutex> lock(api_mutex);
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  if (peer < 0 || peer >= comm->nranks) return kInvalidArgument;
  const uint64_t n = comm->received[peer]++;
  const std::string path =
      comm->dir + "/p2p." + std::to_string(peer) + "." + std::to_string(comm->rank) + "." + std::to_string(n);
  const size_t capacity = count * element_size(datatype);
  return issue(comm, [=] {
    std::vector<char> bytes;
    if (Result r = try_read(path, bytes); r != kSuccess) return r;
    std::memcpy(recv, bytes.data(), std::min(bytes.size(), capacity));
    return kSuccess;
  });
}

// For tests.
void fake_nccl_last_call(int* datatype, int* op, size_t* count, int* blocking) {
  *datatype = last_datatype;
  *op = last_op;
  *count = last_count;
  *blocking = last_blocking;
}

void fake_nccl_fail_async(int code) { injected_error = code; }

}  // extern "C"
