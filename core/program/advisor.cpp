#include "program/advisor.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <tuple>

#include "runtime/device.hpp"
#include "runtime/memory.hpp"
#include "support/text.hpp"

namespace jiasu {
namespace {

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return format("%.2f GB", bytes / 1e9);
  if (bytes >= 1e6) return format("%.2f MB", bytes / 1e6);
  if (bytes >= 1e3) return format("%.1f kB", bytes / 1e3);
  return format("%.0f B", bytes);
}

std::string dims(Dim3 d) { return format("(%u, %u, %u)", d.x, d.y, d.z); }

using RowKey = std::tuple<std::string, int, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned>;
RowKey key_of(const std::string& name, int device, Dim3 g, Dim3 b) { return {name, device, g.x, g.y, g.z, b.x, b.y, b.z}; }

// What the launch configuration and resources say, on a GPU.
void advise_configuration(KernelAdvice& k, const DeviceProperties& p) {
  const Dim3 g = k.row.grid, b = k.row.block;
  const int64_t blocks = int64_t(g.x) * g.y * g.z, threads = int64_t(b.x) * b.y * b.z;
  if (threads % 32 != 0)
    k.advice.push_back(format("blocks of %lld threads are not a multiple of 32: the last warp of every block runs "
                              "partly idle; use a multiple of 32", (long long)threads));
  if (blocks < p.multiprocessor_count)
    k.advice.push_back(format("%lld block%s for %d multiprocessors: %lld of them stay idle; use more, smaller blocks "
                              "(at least 2 per multiprocessor) or more work per launch",
                              (long long)blocks, blocks == 1 ? "" : "s", p.multiprocessor_count,
                              (long long)(p.multiprocessor_count - blocks)));
  if (!k.occupancy) return;
  const Occupancy& o = *k.occupancy;
  if (o.active_blocks == 0) return;
  if (o.occupancy < 0.5) {
    std::string why;
    switch (o.limiter) {
      case OccupancyLimiter::Registers:
        why = format("%d registers per thread; fewer live variables (or smaller blocks) let more warps in",
                     k.attributes.registers);
        break;
      case OccupancyLimiter::SharedMemory:
        why = format("%s of shared memory per block; smaller tiles let more blocks in",
                     bytes_text(double(k.attributes.static_shared_bytes + k.dynamic_shared_bytes)).c_str());
        break;
      case OccupancyLimiter::Blocks:
        why = format("at most %d blocks per multiprocessor; larger blocks fill it", o.blocks_by_blocks);
        break;
      default:
        why = "the block size";
    }
    k.advice.push_back(format("theoretical occupancy %.0f%% (%d warps of %d per multiprocessor), limited by %s",
                              100 * o.occupancy, o.active_warps, o.max_warps, why.c_str()));
  }
  if (k.best_block_size > 0 && k.best_block_size != threads && o.occupancy < 1.0)
    k.advice.push_back(format("block size %d gives the most resident threads per multiprocessor", k.best_block_size));
  if (k.attributes.local_bytes > 0)
    k.advice.push_back(format("%d bytes of local memory per thread (local arrays, or registers spilled): it lives in "
                              "device memory; keep per-thread arrays small or move them to shared memory",
                              k.attributes.local_bytes));
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void advise_memory(KernelAdvice& k, const std::vector<AccessFinding>* findings) {
  if (findings)
    for (const AccessFinding& f : *findings) {
      if (!f.shared && f.sectors_per_request > 1.5 * f.ideal_sectors_per_request)
        k.advice.push_back(format("uncoalesced at %s `%s` (%s): %.1f sectors of 32 bytes per request, against %.1f "
                                  "when neighbouring threads read neighbouring elements",
                                  f.where.c_str(), f.code.c_str(), joined(f.arrays).c_str(), f.sectors_per_request,
                                  f.ideal_sectors_per_request));
      if (f.shared && f.conflict_ways > 1.5)
        k.advice.push_back(format("%.0f-way shared-memory bank conflicts at %s `%s` (%s): pad the array's rows (e.g. "
                                  "[32][33]) so a warp's threads hit different banks",
                                  f.conflict_ways, f.where.c_str(), f.code.c_str(), joined(f.arrays).c_str()));
    }
  if (k.bytes <= 0 || k.gbs <= 0) return;
  const double mean_us = 1e3 * k.row.total_ms / double(k.row.calls);
  if (k.bandwidth_fraction >= 0.7)
    k.advice.push_back(format("memory-bound at %.0f%% of the measured peak: close to what the memory gives; only "
                              "moving fewer bytes makes it faster", 100 * k.bandwidth_fraction));
  else if (k.bandwidth_fraction < 0.4 && mean_us > 20 && (k.flops < 0 || k.compute_fraction < 0.4))
    k.advice.push_back(format("reaches %.0f%% of the measured memory bandwidth: look for strided or scattered "
                              "access (k.analyze(blocks, threads, *args) shows it per line)",
                              100 * k.bandwidth_fraction));
}

std::mutex findings_mutex;
std::map<std::string, std::vector<AccessFinding>> latest_findings;  // by the kernel's origin

}  // namespace

std::vector<AccessFinding> access_findings(const AccessReport& report) {
  std::vector<AccessFinding> out;
  for (const AccessRow& row : report.rows) {  // in source order: a line's sites are neighbours
    if (row.stats.requests == 0) continue;
    const std::string where = format("%s:%d", row.site.file.c_str(), row.site.line);
    if (out.empty() || out.back().where != where || out.back().shared != row.site.shared) {
      out.emplace_back();
      out.back().where = where;
      out.back().code = row.site.source;
      out.back().shared = row.site.shared;
    }
    AccessFinding& f = out.back();
    if (std::find(f.arrays.begin(), f.arrays.end(), row.site.array) == f.arrays.end())
      f.arrays.push_back(row.site.array);
    const double requests = double(row.stats.requests);
    const double ways = row.stats.ideal > 0 ? double(row.stats.transactions) / double(row.stats.ideal) : 1;
    if (ways > f.conflict_ways) {
      f.sectors_per_request = double(row.stats.transactions) / requests;
      f.ideal_sectors_per_request = double(row.stats.ideal) / requests;
      f.conflict_ways = ways;
    }
  }
  return out;
}

void remember_access_report(const std::string& origin, const AccessReport& report) {
  std::vector<AccessFinding> findings = access_findings(report);
  std::lock_guard<std::mutex> lock(findings_mutex);
  latest_findings[origin] = std::move(findings);
}

ProfileReport advise(const Profile& profile, const std::map<std::string, int64_t>& flops) {
  std::map<std::string, std::vector<AccessFinding>> findings;
  {
    std::lock_guard<std::mutex> lock(findings_mutex);
    findings = latest_findings;
  }
  ProfileReport report;
  const std::vector<LaunchRecord>& records = profile.records();
  if (records.empty()) return report;
  report.device = records.front().device;
  report.peaks = device_peaks(report.device);
  // Per row: the traffic and arithmetic of its calls, where every call's is known.
  std::map<RowKey, std::pair<int64_t, int64_t>> totals;  // bytes, flops (-1: some call's unknown)
  for (const LaunchRecord& r : records) {
    auto [it, added] = totals.emplace(key_of(r.name, r.device, r.grid, r.block), std::make_pair(0, 0));
    auto& [bytes, ops] = it->second;
    bytes = (bytes < 0 || r.bytes_read < 0) ? -1 : bytes + r.bytes_read + r.bytes_written;
    const auto counted = flops.find(r.name);
    const int64_t f = counted != flops.end() ? counted->second : r.flops;
    ops = (ops < 0 || f < 0) ? -1 : ops + f;
  }
  for (const Profile::Summary& row : profile.summary()) {
    const LaunchRecord& first = records[row.first];
    KernelAdvice k;
    k.row = row;
    k.library = first.library;
    k.has_attributes = first.has_attributes;
    k.attributes = first.attributes;
    k.dynamic_shared_bytes = first.shared_bytes;
    const auto& [bytes, ops] = totals.at(key_of(row.name, row.device, row.grid, row.block));
    const double seconds = row.total_ms * 1e-3;
    if (bytes >= 0) {
      k.bytes = bytes / int64_t(row.calls);
      k.gbs = seconds > 0 ? double(bytes) / seconds / 1e9 : 0;
      k.bandwidth_fraction = report.peaks.bandwidth_gbs > 0 ? k.gbs / report.peaks.bandwidth_gbs : 0;
    }
    if (ops >= 0) {
      k.flops = ops / int64_t(row.calls);
      k.gflops = seconds > 0 ? double(ops) / seconds / 1e9 : 0;
      k.compute_fraction = report.peaks.fp32_gflops > 0 ? k.gflops / report.peaks.fp32_gflops : 0;
    }
    if (row.device != kCpuDevice && k.has_attributes) {
      const DeviceProperties& p = device_properties(row.device);
      const KernelNeeds needs{k.attributes.registers, size_t(k.attributes.static_shared_bytes),
                              k.attributes.max_threads_per_block};
      const int threads = int(row.block.x * row.block.y * row.block.z);
      const MultiprocessorLimits limits = multiprocessor_limits(p);
      k.occupancy = occupancy(limits, needs, threads, k.dynamic_shared_bytes);
      k.best_block_size = best_block_size(limits, needs, k.dynamic_shared_bytes);
      advise_configuration(k, p);
    }
    const double mean_us = 1e3 * row.total_ms / double(row.calls);
    if (row.calls >= 20 && mean_us < 10 && row.device != kCpuDevice)
      k.advice.push_back(format("%zu launches of %.1f us each: launch overhead dominates; record the sequence in "
                                "`with jiasu.graph()` and replay it, or fuse the kernels", row.calls, mean_us));
    const auto found = first.origin.empty() ? findings.end() : findings.find(first.origin);
    advise_memory(k, found != findings.end() ? &found->second : nullptr);
    report.kernels.push_back(std::move(k));
  }
  return report;
}

std::string ProfileReport::text() const {
  std::string out;
  const bool cpu = device == kCpuDevice;
  out += format("peaks: memory %.0f GB/s measured (%s)", peaks.bandwidth_gbs, peaks.bandwidth_method.c_str());
  if (peaks.fp32_gflops > 0) out += format(", FP32 %.1f TFLOP/s", peaks.fp32_gflops / 1e3);
  out += "\n";
  for (const KernelAdvice& k : kernels) {
    out += format("\n%s  %s, %zu call%s, %.3f ms total, %.2f us mean\n", k.row.name.c_str(),
                  k.library ? "(library call)" : (dims(k.row.grid) + " x " + dims(k.row.block)).c_str(), k.row.calls,
                  k.row.calls == 1 ? "" : "s", k.row.total_ms, 1e3 * k.row.total_ms / double(k.row.calls));
    if (k.has_attributes)
      out += format("  resources: %d registers/thread, %d B local/thread, %d B static + %zu B dynamic shared/block\n",
                    k.attributes.registers, k.attributes.local_bytes, k.attributes.static_shared_bytes,
                    k.dynamic_shared_bytes);
    if (k.occupancy)
      out += format("  occupancy: %.0f%% (%d blocks, %d of %d warps per multiprocessor), limited by %s; best block "
                    "size %d\n", 100 * k.occupancy->occupancy, k.occupancy->active_blocks, k.occupancy->active_warps,
                    k.occupancy->max_warps, limiter_name(k.occupancy->limiter), k.best_block_size);
    if (k.bytes >= 0)
      out += format("  memory: %s per call, %.1f GB/s = %.0f%% of the measured peak\n",
                    bytes_text(double(k.bytes)).c_str(), k.gbs, 100 * k.bandwidth_fraction);
    if (k.flops >= 0)
      out += format("  compute: %.3g FLOP per call, %.1f GFLOP/s%s\n", double(k.flops), k.gflops,
                    cpu || peaks.fp32_gflops <= 0 ? "" : format(" = %.0f%% of FP32 peak", 100 * k.compute_fraction).c_str());
    for (const std::string& a : k.advice) out += "  - " + a + "\n";
  }
  return out;
}

}  // namespace jiasu
