#include "runtime/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/graph.hpp"
#include "runtime/memory.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {

namespace detail {
std::atomic<bool> profiling{false};
}  // namespace detail

namespace {

std::mutex profile_mutex;        // guards open_profile and its records
Profile* open_profile = nullptr;
thread_local LaunchNote next_note;
thread_local bool has_note = false;

double host_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace

void note_next_launch(LaunchNote note) {
  next_note = std::move(note);
  has_note = true;
}

size_t profile_begin(LaunchRecord record, cu::CUstream stream) {
  if (has_note) {
    if (!next_note.name.empty()) record.name = std::move(next_note.name);
    record.origin = std::move(next_note.origin);
    record.bytes_read = next_note.bytes_read;
    record.bytes_written = next_note.bytes_written;
    record.flops = next_note.flops;
    has_note = false;
  }
  if (capturing()) return kNotProfiled;
  record.start = std::make_shared<Event>(record.device, true);
  record.start->record(stream);
  std::lock_guard<std::mutex> lock(profile_mutex);
  if (!open_profile) return kNotProfiled;
  open_profile->records_.push_back(std::move(record));
  return open_profile->records_.size() - 1;
}

void profile_end(size_t token, cu::CUstream stream) {
  if (token == kNotProfiled) return;
  int device;
  {
    std::lock_guard<std::mutex> lock(profile_mutex);
    if (!open_profile || token >= open_profile->records_.size()) return;
    device = open_profile->records_[token].device;
  }
  auto end = std::make_shared<Event>(device, true);
  end->record(stream);
  std::lock_guard<std::mutex> lock(profile_mutex);
  if (open_profile && token < open_profile->records_.size()) open_profile->records_[token].end = std::move(end);
}

ProfiledCall::ProfiledCall(std::string name, int device, cu::CUstream stream, Dim3 grid, Dim3 block, bool library)
    : stream_(stream), exceptions_(std::uncaught_exceptions()) {
  if (!profiling()) return;
  LaunchRecord record;
  record.name = std::move(name);
  record.device = device;
  record.grid = grid;
  record.block = block;
  record.library = library;
  token_ = profile_begin(std::move(record), stream);
}

ProfiledCall::~ProfiledCall() {
  if (token_ == kNotProfiled || std::uncaught_exceptions() != exceptions_) return;
  try {
    profile_end(token_, stream_);
  } catch (const Error&) {  // the record stays without an end and is dropped when the profile closes
  }
}

Profile::~Profile() {
  if (!open_) return;
  std::lock_guard<std::mutex> lock(profile_mutex);
  if (open_profile == this) {
    open_profile = nullptr;
    detail::profiling.store(false, std::memory_order_relaxed);
  }
}

void Profile::start() {
  std::lock_guard<std::mutex> lock(profile_mutex);
  if (open_profile) throw BadValue("a profile is already open: jiasu.profile() blocks do not nest");
  records_.clear();
  open_profile = this;
  open_ = true;
  start_host_ms_ = host_ms();
  detail::profiling.store(true, std::memory_order_relaxed);
}

void Profile::stop() {
  {
    std::lock_guard<std::mutex> lock(profile_mutex);
    if (open_profile != this) throw BadValue("this profile is not open");
    open_profile = nullptr;
    open_ = false;
    detail::profiling.store(false, std::memory_order_relaxed);
  }
  wall_ms_ = host_ms() - start_host_ms_;
  // A launch that failed after its start event has no end: it did not run.
  records_.erase(std::remove_if(records_.begin(), records_.end(), [](const LaunchRecord& r) { return !r.end; }),
                 records_.end());
  for (LaunchRecord& r : records_) {
    r.end->synchronize();
    r.ms = r.start->elapsed_ms(*r.end);
    r.start.reset();
    r.end.reset();
  }
}

std::vector<Profile::Summary> Profile::summary() const {
  std::vector<Summary> rows;
  std::map<std::tuple<std::string, int, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned>, size_t> index;
  for (size_t i = 0; i < records_.size(); ++i) {
    const LaunchRecord& r = records_[i];
    const auto key = std::make_tuple(r.name, r.device, r.grid.x, r.grid.y, r.grid.z, r.block.x, r.block.y, r.block.z);
    auto [it, added] = index.emplace(key, rows.size());
    if (added) rows.push_back(Summary{r.name, r.device, r.grid, r.block, 0, 0, r.ms, r.ms, i});
    Summary& s = rows[it->second];
    ++s.calls;
    s.total_ms += r.ms;
    s.min_ms = std::min(s.min_ms, r.ms);
    s.max_ms = std::max(s.max_ms, r.ms);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Summary& a, const Summary& b) { return a.total_ms > b.total_ms; });
  return rows;
}

std::string Profile::table() const {
  const std::vector<Summary> rows = summary();
  double total = 0;
  for (const Summary& s : rows) total += s.total_ms;
  size_t width = 6;
  for (const Summary& s : rows) width = std::max(width, std::min<size_t>(s.name.size(), 48));
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line, "%-*s %7s %10s %6s %10s %10s %10s  %s\n", int(width), "kernel", "calls", "total ms",
                "%", "mean us", "min us", "max us", "grid x block");
  out += line;
  for (const Summary& s : rows) {
    const LaunchRecord& first = records_[s.first];
    const std::string config = first.library ? std::string("(library call)") : dims(s.grid) + " x " + dims(s.block);
    std::snprintf(line, sizeof line, "%-*s %7zu %10.3f %6.1f %10.2f %10.2f %10.2f  %s\n", int(width),
                  s.name.substr(0, 48).c_str(), s.calls, s.total_ms, total > 0 ? 100 * s.total_ms / total : 0.0,
                  1e3 * s.total_ms / double(s.calls), 1e3 * s.min_ms, 1e3 * s.max_ms, config.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%zu launches, %.3f ms of %s time in %.3f ms of wall time\n", records_.size(), total,
                !records_.empty() && records_[0].device == kCpuDevice ? "CPU" : "GPU", wall_ms_);
  out += line;
  return out;
}

}  // namespace jiasu
