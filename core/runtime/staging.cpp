#include "runtime/staging.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "support/error.hpp"

namespace jiasu::staging {
namespace {

constexpr unsigned kEventBlockingSync = 0x1;  // CU_EVENT_BLOCKING_SYNC: the waiting thread sleeps

size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }
size_t round_up(size_t a, size_t b) { return ceil_div(a, b) * b; }

bool parse_count(const char* text, size_t* out) {
  if (!text || !std::isdigit(static_cast<unsigned char>(*text))) return false;
  size_t value = 0;
  for (; std::isdigit(static_cast<unsigned char>(*text)); ++text) {
    size_t digit = static_cast<size_t>(*text - '0');
    if (value > (std::numeric_limits<size_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (*text) return false;
  *out = value;
  return true;
}

bool equals_ignoring_case(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b)
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  return *a == *b;
}

}  // namespace

// ---- Planning ----

std::vector<Chunk> plan_chunks(size_t bytes, size_t chunk_size) {
  std::vector<Chunk> chunks;
  if (bytes == 0) return chunks;
  if (chunk_size == 0 || chunk_size >= bytes) {
    chunks.push_back({0, bytes});
    return chunks;
  }
  chunks.reserve(ceil_div(bytes, chunk_size));
  for (size_t offset = 0; offset < bytes; offset += chunk_size)
    chunks.push_back({offset, std::min(chunk_size, bytes - offset)});
  return chunks;
}

size_t chunk_size_for(size_t bytes, size_t max_chunk) {
  if (max_chunk == 0) max_chunk = std::numeric_limits<size_t>::max();
  size_t target = round_up(ceil_div(bytes, kTargetChunks), kChunkAlignment);
  return std::clamp(target, std::min(kMinChunk, max_chunk), max_chunk);
}

size_t slice_size_for(size_t bytes, unsigned lanes) {
  size_t pieces = 2 * static_cast<size_t>(std::max(lanes, 1u));
  return std::max(kMinSlice, round_up(ceil_div(bytes, pieces), kSliceAlignment));
}

bool wait_can_sleep(size_t index, size_t chunks, size_t chunk_bytes) {
  return chunk_bytes >= kSleepChunk && index + kStagingBuffers - 1 < chunks;
}

bool parse_bytes(const char* text, size_t* out) {
  if (!text) return false;
  std::string s(text);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return false;
  size_t value = 0;
  if (!parse_count(s.substr(0, digits).c_str(), &value)) return false;
  std::string suffix = s.substr(digits);
  unsigned shift = 0;
  if (!suffix.empty()) {
    switch (std::tolower(static_cast<unsigned char>(suffix[0]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    std::string rest = suffix.substr(1);
    if (!rest.empty() && !equals_ignoring_case(rest.c_str(), "b") && !equals_ignoring_case(rest.c_str(), "ib"))
      return false;
  }
  if (shift && value > (std::numeric_limits<size_t>::max() >> shift)) return false;
  *out = value << shift;
  return true;
}

Config parse_config(const char* staging, const char* min_bytes, const char* chunk_bytes, const char* threads,
                    unsigned hardware_threads) {
  Config c;
  if (staging) {
    for (const char* off : {"0", "off", "false", "no"})
      if (equals_ignoring_case(staging, off)) c.enabled = false;
  }
  size_t value = 0;
  if (parse_bytes(min_bytes, &value)) c.min_bytes = value;
  if (parse_bytes(chunk_bytes, &value)) c.chunk_bytes = std::clamp<size_t>(value, 64 * kKiB, 256 * kMiB);
  c.threads = hardware_threads == 0 ? 4u : std::min(8u, hardware_threads);
  if (parse_count(threads, &value)) c.threads = static_cast<unsigned>(std::clamp<size_t>(value, 1, 64));
  return c;
}

const Config& config() {
  static const Config c = parse_config(std::getenv("JIASU_STAGING"), std::getenv("JIASU_STAGING_MIN_BYTES"),
                                       std::getenv("JIASU_STAGING_CHUNK_BYTES"),
                                       std::getenv("JIASU_STAGING_THREADS"), usable_cpus());
  return c;
}

// ---- Parallel host memcpy ----

void MemcpyPool::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  const size_t slice = slice_size_for(bytes, lanes());
  char* const to = static_cast<char*>(dst);
  const char* const from = static_cast<const char*>(src);
  workers_.run(ceil_div(bytes, slice), [&](size_t i) {
    const size_t offset = i * slice;
    std::memcpy(to + offset, from + offset, std::min(slice, bytes - offset));
  });
}

MemcpyPool& memcpy_pool() {
  static MemcpyPool* pool = new MemcpyPool(config().threads);  // never destroyed: late copies may still run
  return *pool;
}

// ---- The engine ----

namespace {

class Engine {
 public:
  // Creates the stream, events and pinned buffers in the current context; throws CudaError.
  explicit Engine(size_t buffer_bytes) : buffer_bytes_(buffer_bytes) {
    try {
      const auto& d = cu::driver();
      cu::check(d.cuStreamCreateWithPriority(&stream_, cu::kStreamNonBlocking, 0), "cuStreamCreateWithPriority");
      cu::check(d.cuEventCreate(&start_, cu::kEventDisableTiming), "cuEventCreate");
      cu::check(d.cuEventCreate(&finish_, cu::kEventDisableTiming), "cuEventCreate");
      for (unsigned b = 0; b < kStagingBuffers; ++b) {
        cu::check(d.cuEventCreate(&ready_[b], cu::kEventDisableTiming), "cuEventCreate");
        cu::check(d.cuEventCreate(&ready_sleeping_[b], cu::kEventDisableTiming | kEventBlockingSync),
                  "cuEventCreate");
        cu::check(d.cuMemHostAlloc(&buffers_[b], buffer_bytes_, cu::kMemHostAllocPortable), "cuMemHostAlloc");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void host_to_device(cu::CUdeviceptr dst, const char* src, size_t bytes, cu::CUstream order) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& d = cu::driver();
    MemcpyPool& pool = memcpy_pool();
    std::vector<Chunk> chunks = plan_chunks(bytes, chunk_size_for(bytes, buffer_bytes_));
    try {
      begin(order);
      for (size_t i = 0; i < chunks.size(); ++i) {
        const Chunk& c = chunks[i];
        size_t b = i % kStagingBuffers;
        // The buffer's previous chunk must have left it; the ones after that are still on their way.
        if (i >= kStagingBuffers)
          cu::check(d.cuEventSynchronize(ready_event(chunks, i - kStagingBuffers)), "cuEventSynchronize");
        pool.copy(buffers_[b], src + c.offset, c.bytes);
        cu::check(d.cuMemcpyHtoDAsync(dst + c.offset, buffers_[b], c.bytes, stream_), "cuMemcpyHtoDAsync");
        cu::check(d.cuEventRecord(ready_event(chunks, i), stream_), "cuEventRecord");
      }
      finish(order);
    } catch (...) {
      abandon();
      throw;
    }
  }

  void device_to_host(char* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream order) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& d = cu::driver();
    MemcpyPool& pool = memcpy_pool();
    std::vector<Chunk> chunks = plan_chunks(bytes, chunk_size_for(bytes, buffer_bytes_));
    auto fetch = [&](size_t i) {
      const Chunk& c = chunks[i];
      size_t b = i % kStagingBuffers;
      cu::check(d.cuMemcpyDtoHAsync(buffers_[b], src + c.offset, c.bytes, stream_), "cuMemcpyDtoHAsync");
      cu::check(d.cuEventRecord(ready_event(chunks, i), stream_), "cuEventRecord");
    };
    try {
      begin(order);
      for (size_t i = 0; i < std::min<size_t>(chunks.size(), kStagingBuffers); ++i) fetch(i);
      for (size_t i = 0; i < chunks.size(); ++i) {
        const Chunk& c = chunks[i];
        size_t b = i % kStagingBuffers;
        cu::check(d.cuEventSynchronize(ready_event(chunks, i)), "cuEventSynchronize");
        pool.copy(dst + c.offset, buffers_[b], c.bytes);  // while the next chunks arrive
        if (i + kStagingBuffers < chunks.size()) fetch(i + kStagingBuffers);
      }
      finish(order);
    } catch (...) {
      abandon();
      throw;
    }
  }

 private:
  // The staging stream starts after the work queued on `order` so far (for the legacy stream, that
  // includes the work of every blocking stream).
  void begin(cu::CUstream order) {
    const auto& d = cu::driver();
    cu::check(d.cuEventRecord(start_, order), "cuEventRecord");
    cu::check(d.cuStreamWaitEvent(stream_, start_, 0), "cuStreamWaitEvent");
  }

  // Work queued on `order` from now on starts after the copy; the copy has finished when this returns.
  // The last wait follows the context's scheduling policy, like the driver's own synchronous copies.
  void finish(cu::CUstream order) {
    const auto& d = cu::driver();
    cu::check(d.cuEventRecord(finish_, stream_), "cuEventRecord");
    cu::check(d.cuStreamWaitEvent(order, finish_, 0), "cuStreamWaitEvent");
    cu::check(d.cuEventSynchronize(finish_), "cuEventSynchronize");
  }

  // After an error: let what is queued finish, so the buffers are free and no DMA still writes the
  // destination when the caller sees the exception.
  void abandon() noexcept { cu::driver().cuStreamSynchronize(stream_); }

  // The event recorded after chunk i's DMA (in its buffer's pair): one the waiting thread sleeps on when
  // enough DMA is queued behind the chunk to hide the wake-up (wait_can_sleep), else one that follows the
  // context's spin-or-yield policy, as the driver's own synchronous copies do.
  cu::CUevent ready_event(const std::vector<Chunk>& chunks, size_t i) const {
    size_t b = i % kStagingBuffers;
    return wait_can_sleep(i, chunks.size(), chunks.front().bytes) ? ready_sleeping_[b] : ready_[b];
  }

  void release() noexcept {
    const auto& d = cu::driver();
    for (unsigned b = 0; b < kStagingBuffers; ++b) {
      if (buffers_[b]) d.cuMemFreeHost(buffers_[b]);
      if (ready_[b]) d.cuEventDestroy(ready_[b]);
      if (ready_sleeping_[b]) d.cuEventDestroy(ready_sleeping_[b]);
    }
    if (start_) d.cuEventDestroy(start_);
    if (finish_) d.cuEventDestroy(finish_);
    if (stream_) d.cuStreamDestroy(stream_);
  }

  std::mutex mutex_;  // one transfer at a time
  size_t buffer_bytes_;
  cu::CUstream stream_ = nullptr;
  cu::CUevent start_ = nullptr;
  cu::CUevent finish_ = nullptr;
  void* buffers_[kStagingBuffers] = {};
  cu::CUevent ready_[kStagingBuffers] = {};           // recorded after a buffer's DMA ...
  cu::CUevent ready_sleeping_[kStagingBuffers] = {};  // ... or this one, which the waiting thread sleeps on
};

// The engine of the current context, created on first use; nullptr when there is no current context or
// the engine could not be set up (then this context never stages). Engines are never destroyed: jiasu's
// contexts are primary contexts retained for the life of the process.
Engine* current_engine() {
  cu::CUcontext context = nullptr;
  if (cu::driver().cuCtxGetCurrent(&context) != cu::CUDA_SUCCESS || !context) return nullptr;
  static std::mutex mutex;
  static auto* engines = new std::vector<std::pair<cu::CUcontext, Engine*>>();
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [c, engine] : *engines)
    if (c == context) return engine;
  Engine* engine = nullptr;
  try {
    engine = new Engine(config().chunk_bytes);
  } catch (const Error&) {
    // e.g. no pinned memory to be had: this context keeps the driver's path.
  }
  engines->emplace_back(context, engine);
  return engine;
}

// Memory the driver does not know (malloc, NumPy): cuPointerGetAttribute refuses it. Page-locked,
// registered, managed and device memory are copied best by the driver directly.
bool pageable(const void* host) {
  unsigned int type = 0;
  return cu::driver().cuPointerGetAttribute(&type, cu::kPointerAttrMemoryType,
                                            static_cast<cu::CUdeviceptr>(reinterpret_cast<uintptr_t>(host))) !=
         cu::CUDA_SUCCESS;
}

bool wanted(const void* host, size_t bytes) {
  const Config& c = config();
  return c.enabled && bytes > 0 && bytes >= c.min_bytes && pageable(host);
}

}  // namespace

bool host_to_device(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream order) {
  if (!wanted(src, bytes)) return false;
  Engine* engine = current_engine();
  if (!engine) return false;
  engine->host_to_device(dst, static_cast<const char*>(src), bytes, order);
  return true;
}

bool device_to_host(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream order) {
  if (!wanted(dst, bytes)) return false;
  Engine* engine = current_engine();
  if (!engine) return false;
  engine->device_to_host(static_cast<char*>(dst), src, bytes, order);
  return true;
}

}  // namespace jiasu::staging
