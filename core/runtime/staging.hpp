// Fast synchronous copies between pageable host memory and the device.
//
// The driver copies pageable memory through its own small pinned buffers, one thread, one chunk at a
// time: about 8.6 GB/s host to device on an H200 where pinned memory reaches 55 GB/s. The staging engine
// does the same job in a pipeline: the copy is cut into chunks; several threads copy chunk k between the
// pageable memory and one of a few pinned staging buffers while the DMA engine moves chunk k-1 (or, device
// to host, chunks k+1.. are already on their way into the other buffers).
//
// One engine per CUDA context (created lazily, kept for the life of the process): a non-blocking stream,
// kStagingBuffers pinned buffers of the configured chunk size (16 MiB per device by default) with their
// events, one transfer at a time (a mutex). One process-wide pool of memcpy threads serves every engine.
// Only the calling thread talks to the driver; the pool threads only copy host memory.
//
// Environment (read once, at the process's first synchronous copy):
//   JIASU_STAGING=0              off: every copy takes the driver's own path (also "off", "false", "no")
//   JIASU_STAGING_MIN_BYTES      smallest copy that is staged (default 1M); smaller ones keep the driver call
//   JIASU_STAGING_CHUNK_BYTES    largest chunk, also each staging buffer's size (default 4M)
//   JIASU_STAGING_THREADS        memcpy lanes, the calling thread included (default: min(8, CPUs this
//                                process may run on))
// Sizes take an optional K, M or G suffix (powers of 1024).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "runtime/driver.hpp"
#include "support/work_pool.hpp"

namespace jiasu::staging {

// ---- Planning (pure functions, unit-tested without a GPU) ----

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr unsigned kStagingBuffers = 4;         // chunks in flight at once
constexpr size_t kMinChunk = 512 * kKiB;        // smallest chunk the planner picks on its own
constexpr size_t kChunkAlignment = 64 * kKiB;   // planned chunks are multiples of this (but the last)
constexpr size_t kTargetChunks = 8;             // small copies get smaller chunks, to overlap at all
constexpr size_t kMinSlice = 64 * kKiB;         // smallest piece one memcpy thread takes
constexpr size_t kSliceAlignment = 4 * kKiB;

struct Chunk {
  size_t offset = 0;
  size_t bytes = 0;
  bool operator==(const Chunk& o) const { return offset == o.offset && bytes == o.bytes; }
};

// [0, bytes) cut into consecutive pieces of `chunk_size` bytes, the last one shorter when it does not
// divide evenly. Empty for 0 bytes; one piece when chunk_size is 0 or at least `bytes`.
std::vector<Chunk> plan_chunks(size_t bytes, size_t chunk_size);

// The chunk size for a copy of `bytes`: about bytes / kTargetChunks rounded up to kChunkAlignment,
// kept within [kMinChunk, max_chunk] (max_chunk wins when it is smaller than kMinChunk; 0 means no limit).
// Large copies get max_chunk, so the per-chunk cost (a thread hand-off, a driver call) stays small next to
// the chunk's own time; small ones get several chunks so the memcpy and the DMA overlap.
size_t chunk_size_for(size_t bytes, size_t max_chunk);

// The piece of a host memcpy of `bytes` that one of `lanes` threads takes at a time: about two pieces per
// lane (threads that wake late take fewer), a multiple of kSliceAlignment, at least kMinSlice.
size_t slice_size_for(size_t bytes, unsigned lanes);

// Whether the wait for chunk `index` (of `chunks`, `chunk_bytes` each) may sleep (an event created with
// CU_EVENT_BLOCKING_SYNC) instead of following the context's spin-or-yield policy. It may when
// kStagingBuffers - 1 chunks of at least kSleepChunk are queued behind it by then: their DMA (about 40 us
// per MiB at 55 GB/s) hides the thread's wake-up. The same rule holds in both directions: host to device,
// the wait for chunk j comes right after chunk j + kStagingBuffers - 1 was queued; device to host, chunks
// up to index + kStagingBuffers - 1 are queued before the wait for `index`.
constexpr size_t kSleepChunk = 2 * kMiB;
bool wait_can_sleep(size_t index, size_t chunks, size_t chunk_bytes);

struct Config {
  bool enabled = true;
  size_t min_bytes = 1 * kMiB;
  size_t chunk_bytes = 4 * kMiB;
  unsigned threads = 8;
};

// "4194304", "4096K", "4M", "1G" (also "4MiB", "4MB", lower case): the number of bytes; false for anything
// else (empty, negative, junk, overflow).
bool parse_bytes(const char* text, size_t* out);

// The configuration from the environment variables' values (nullptr: unset). Values that do not parse are
// ignored; chunk_bytes is kept within [64K, 256M] and threads within [1, 64].
Config parse_config(const char* staging, const char* min_bytes, const char* chunk_bytes, const char* threads,
                    unsigned hardware_threads);

// parse_config() of this process's environment, read once.
const Config& config();

// ---- Parallel host memcpy ----

// Copies one buffer in slices (slice_size_for) on a WorkPool of `lanes` threads, the calling one included,
// so lanes - 1 are started (fewer when the system refuses more). Any number of threads may call copy();
// one copy of several slices runs at a time, the others wait for it (a single slice is copied at once).
class MemcpyPool {
 public:
  explicit MemcpyPool(unsigned lanes) : workers_(std::max(lanes, 1u)) {}

  unsigned lanes() const { return workers_.threads(); }
  // memcpy(dst, src, bytes), the ranges not overlapping; returns when every byte is copied.
  void copy(void* dst, const void* src, size_t bytes);

 private:
  WorkPool workers_;
};

// The process-wide pool (config().threads lanes), started on first use and never stopped.
MemcpyPool& memcpy_pool();

// ---- Staged copies ----

// Synchronous copies through the current context's engine, ordered after the work queued so far on
// `order` (nullptr: the legacy default stream) and before the work queued on it afterwards; they return
// once the data has arrived. They return false, having done nothing, when the copy is not for staging
// (staging off, fewer than config().min_bytes, host memory that is page-locked, registered or managed, no
// current context, or the engine could not be set up): the caller then makes the driver call itself.
// A driver error during a staged copy throws, after the engine's queued work has finished.
bool host_to_device(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream order);
bool device_to_host(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream order);

}  // namespace jiasu::staging
