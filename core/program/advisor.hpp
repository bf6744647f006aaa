// The performance advisor: for each kernel of a profile (runtime/profiler), what it uses (registers, local and
// shared memory), its theoretical occupancy and what limits it (runtime/occupancy), the memory traffic and the
// arithmetic it reached against the device's roofs (runtime/device_peaks), and plain-language advice.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cpu/access_trace.hpp"
#include "runtime/device_peaks.hpp"
#include "runtime/occupancy.hpp"
#include "runtime/profiler.hpp"

namespace jiasu {

// What the CPU-side memory-access analysis (k.analyze) found at one source line of a kernel, for one memory space:
// quoted by the advice. Several accesses on the line: the worst one's numbers.
struct AccessFinding {
  std::string where;     // "file:line"
  std::string code;      // the line's text
  std::vector<std::string> arrays;  // the arrays accessed there, each once
  bool shared = false;   // shared memory (bank conflicts), else global memory (coalescing)
  double sectors_per_request = 0, ideal_sectors_per_request = 0;  // global
  double conflict_ways = 0;                                       // shared: the average n-way conflict
};

struct KernelAdvice {
  Profile::Summary row;
  bool library = false;
  bool has_attributes = false;
  KernelAttributes attributes;
  size_t dynamic_shared_bytes = 0;
  std::optional<Occupancy> occupancy;  // GPU kernels
  int best_block_size = 0;
  int64_t bytes = -1;   // read + written per call, where known
  double gbs = 0;       // achieved, from bytes and the mean time
  double bandwidth_fraction = 0;  // of the measured peak
  int64_t flops = -1;   // per call, where known
  double gflops = 0;
  double compute_fraction = 0;  // of the FP32 peak (GPU)
  std::vector<std::string> advice;
};

struct ProfileReport {
  int device = 0;  // of the first record (kCpuDevice: the CPU backend)
  DevicePeaks peaks;
  std::vector<KernelAdvice> kernels;  // the most total time first
  std::string text() const;
};

// The findings of one k.analyze report: one per source line and memory space that ran.
std::vector<AccessFinding> access_findings(const AccessReport& report);
// Keeps the latest k.analyze findings of the kernel defined at `origin` (Specialization::origin) for the reports
// that follow to quote.
void remember_access_report(const std::string& origin, const AccessReport& report);

// The report of a closed profile. `flops`: FLOPs per call by kernel name, for kernels whose arithmetic the caller
// counted (a matmul's are counted already). Each kernel's advice quotes its latest k.analyze findings.
ProfileReport advise(const Profile& profile, const std::map<std::string, int64_t>& flops = {});

}  // namespace jiasu
