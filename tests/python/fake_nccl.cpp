// A stand-in for libnccl.so.2, for tests on machines without a GPU (with the stand-in libcuda of
// tools/launch-overhead, whose device memory is host memory). It works across processes, through files:
// ncclGetUniqueId makes a fresh folder (under $TMPDIR) and writes its path into the id; each collective (numbered
// per communicator) writes the rank's send buffer to <comm folder>/<seq>.<rank> (a temporary name, then a rename),
// waits, polling, until every rank's file exists, and computes this rank's result with NCCL's reduction semantics
// (float16 and bfloat16 through float). A send writes p2p.<from>.<to>.<n>, which the matching receive waits for.
// A call blocks until its peers arrive; it gives up with an error when ncclCommAbort is called from another thread
// or after $JIASU_FAKE_NCCL_WAIT_S seconds (default 60). ncclCommGetAsyncError reports ncclInProgress twice after
// an init or a split, as a non-blocking NCCL may. For tests: fake_nccl_last_call() gives the last collective's
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
#include <fstream>
#include <map>
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
};

std::string last_error;
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

// Waits until `path` exists and reads it; an error when the communicator is aborted or the wait is too long.
Result read_when_there(Comm* comm, const std::string& path, std::vector<char>& bytes) {
  const auto start = std::chrono::steady_clock::now();
  const double limit = wait_limit_s();
  while (access(path.c_str(), F_OK) != 0) {
    if (comm->aborted) {
      last_error = "fake NCCL: the communicator was aborted";
      return kInternalError;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      last_error = "fake NCCL: rank " + std::to_string(comm->rank) + " waited too long for " + path;
      return kRemoteError;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::ifstream in(path, std::ios::binary);
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return kSuccess;
}

// This rank's `bytes` bytes, then every rank's, by rank.
Result exchange(Comm* comm, const void* data, size_t bytes, std::vector<std::vector<char>>& all) {
  const std::string prefix = comm->dir + "/" + std::to_string(comm->seq++) + ".";
  write_file(prefix + std::to_string(comm->rank), data, bytes);
  all.assign(comm->nranks, {});
  for (int r = 0; r < comm->nranks; ++r)
    if (Result result = read_when_there(comm, prefix + std::to_string(r), all[r]); result != kSuccess) return result;
  return kSuccess;
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
  *version = 22805;
  return kSuccess;
}

Result ncclGetUniqueId(char* id) {
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
  if (Result r = check_config(config); r != kSuccess) return r;
  if (nranks < 1 || rank < 0 || rank >= nranks || id.internal[0] != '/') return kInvalidArgument;
  *comm = new_comm(std::string(id.internal, strnlen(id.internal, 128)) + "/world", rank, nranks);
  return kInProgress;
}

Result ncclCommSplit(Comm* comm, int color, int key, Comm** new_comm_out, Config* config) {
  if (Result r = check_config(config); r != kSuccess) return r;
  if (Result r = valid(comm, 2, -1); r != kSuccess) return r;
  const int mine[2] = {color, key};
  const uint64_t seq = comm->seq;
  std::vector<std::vector<char>> all;
  if (Result r = exchange(comm, mine, sizeof mine, all); r != kSuccess) return r;
  *new_comm_out = nullptr;
  if (color < 0) return kSuccess;
  std::vector<std::pair<int, int>> members;  // (key, rank) of the ranks of this color
  for (int r = 0; r < comm->nranks; ++r) {
    int theirs[2];
    std::memcpy(theirs, all[r].data(), sizeof theirs);
    if (theirs[0] == color) members.emplace_back(theirs[1], r);
  }
  std::sort(members.begin(), members.end());
  const int new_rank = static_cast<int>(std::find(members.begin(), members.end(), std::make_pair(key, comm->rank)) -
                                        members.begin());
  *new_comm_out = new_comm(comm->dir + "/split" + std::to_string(seq) + "." + std::to_string(color), new_rank,
                           static_cast<int>(members.size()));
  return kInProgress;
}

Result ncclCommGetAsyncError(Comm* comm, Result* state) {
  if (!comm) return kInvalidArgument;
  if (comm->init_polls > 0) {
    --comm->init_polls;
    *state = kInProgress;
  } else {
    *state = injected_error.load();
  }
  return kSuccess;
}

Result ncclCommCount(Comm* comm, int* count) {
  *count = comm->nranks;
  return kSuccess;
}

Result ncclCommUserRank(Comm* comm, int* rank) {
  *rank = comm->rank;
  return kSuccess;
}

Result ncclCommFinalize(Comm*) { return kSuccess; }

Result ncclCommDestroy(Comm* comm) {
  delete comm;
  return kSuccess;
}

// Not freed: another thread may be inside a call on it, which the flag ends.
Result ncclCommAbort(Comm* comm) {
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

Result ncclGroupStart() { return kSuccess; }
Result ncclGroupEnd() { return kSuccess; }

Result ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  std::vector<std::vector<char>> all;
  if (Result r = exchange(comm, send, count * element_size(datatype), all); r != kSuccess) return r;
  reduce_into(all, 0, count, datatype, op, recv);
  return kSuccess;
}

Result ncclReduce(const void* send, void* recv, size_t count, int datatype, int op, int root, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  std::vector<std::vector<char>> all;
  if (Result r = exchange(comm, send, count * element_size(datatype), all); r != kSuccess) return r;
  if (comm->rank == root) reduce_into(all, 0, count, datatype, op, recv);
  return kSuccess;
}

Result ncclBroadcast(const void* send, void* recv, size_t count, int datatype, int root, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  remember(datatype, -1, count);
  std::vector<std::vector<char>> all;
  const size_t bytes = count * element_size(datatype);
  if (Result r = exchange(comm, send, comm->rank == root ? bytes : 0, all); r != kSuccess) return r;
  std::memcpy(recv, all[root].data(), std::min(bytes, all[root].size()));
  return kSuccess;
}

Result ncclAllGather(const void* send, void* recv, size_t count, int datatype, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  remember(datatype, -1, count);
  std::vector<std::vector<char>> all;
  const size_t bytes = count * element_size(datatype);
  if (Result r = exchange(comm, send, bytes, all); r != kSuccess) return r;
  for (int r = 0; r < comm->nranks; ++r) std::memcpy(static_cast<char*>(recv) + r * bytes, all[r].data(), bytes);
  return kSuccess;
}

Result ncclReduceScatter(const void* send, void* recv, size_t count, int datatype, int op, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, op); r != kSuccess) return r;
  remember(datatype, op, count);
  std::vector<std::vector<char>> all;
  if (Result r = exchange(comm, send, count * comm->nranks * element_size(datatype), all); r != kSuccess) return r;
  reduce_into(all, count * comm->rank, count, datatype, op, recv);
  return kSuccess;
}

Result ncclSend(const void* send, size_t count, int datatype, int peer, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  if (peer < 0 || peer >= comm->nranks) return kInvalidArgument;
  const uint64_t n = comm->sent[peer]++;
  write_file(comm->dir + "/p2p." + std::to_string(comm->rank) + "." + std::to_string(peer) + "." + std::to_string(n),
             send, count * element_size(datatype));
  return kSuccess;
}

Result ncclRecv(void* recv, size_t count, int datatype, int peer, Comm* comm, void*) {
  if (Result r = valid(comm, datatype, -1); r != kSuccess) return r;
  if (peer < 0 || peer >= comm->nranks) return kInvalidArgument;
  const uint64_t n = comm->received[peer]++;
  std::vector<char> bytes;
  const std::string path =
      comm->dir + "/p2p." + std::to_string(peer) + "." + std::to_string(comm->rank) + "." + std::to_string(n);
  if (Result r = read_when_there(comm, path, bytes); r != kSuccess) return r;
  std::memcpy(recv, bytes.data(), std::min(bytes.size(), count * element_size(datatype)));
  return kSuccess;
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
