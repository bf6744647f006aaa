// Memory-access analysis on the CPU backend (k.analyze): a kernel built with emit_host's trace_accesses records
// every element access of global and shared arrays (HostAccessLog); here they become the GPU's memory requests
// and their cost, as Nsight Compute counts them from hardware counters, exactly and on any machine.
//
// Requests: the accesses of one block are grouped per warp (32 consecutive linear threads) and per access site;
// the k-th execution of a site by each lane of a warp belongs to the warp's k-th request there (the CPU runs a
// block's threads one after another or as fibers, so a lane's count is what matches them).
// Global memory: a request costs the distinct 32-byte sectors its lanes touch; ideally, ceil(distinct bytes / 32)
// (what perfectly coalesced access to the same bytes touches). Each argument's memory is taken to start at a
// 256-byte boundary, as a GPU allocation does.
// Shared memory (32 banks of 4 bytes, bank = address / 4 % 32): a request takes as many wavefronts as the most
// distinct 4-byte words any one bank holds (lanes reading one word share it: a broadcast); ideally,
// ceil(distinct words / 32). Its conflict is n-way for n = wavefronts / ideal (32-way: 32 lanes reading 32 words of
// one bank); bank conflicts = wavefronts - ideal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/runtime/host_abi.h"
#include "emit/emit.hpp"
#include "runtime/module.hpp"

namespace jiasu {

// One lane's part of a request: the address and bytes of its element.
struct LaneAccess {
  uint64_t address;
  uint32_t bytes;
};
// A request's cost in transactions (global: sectors, shared: wavefronts) and the fewest its bytes need.
struct RequestCost {
  int64_t transactions = 0, ideal = 0;
};
RequestCost global_request(const std::vector<LaneAccess>& lanes);
RequestCost shared_request(const std::vector<LaneAccess>& lanes);

// What the requests of one site add up to.
struct AccessStats {
  int64_t requests = 0;      // warp requests (a[i] += v: each a load and a store, counted once)
  int64_t accesses = 0;      // lanes' accesses
  int64_t bytes = 0;         // bytes the lanes asked for
  int64_t transactions = 0;  // global: 32-byte sectors; shared: wavefronts
  int64_t ideal = 0;         // the fewest transactions the same distinct bytes need
  double max_ways = 0;       // shared: the largest transactions / ideal of one request
  void add(const RequestCost& cost, int64_t lanes, int64_t lane_bytes);
  void merge(const AccessStats& other);
};

// A launch's memory a global address may lie in (an argument's allocation).
struct MemoryRange {
  uint64_t begin = 0, bytes = 0;
};

// The logs of one traced launch and their analysis. The launch hands logs(n)[r] to range r (to block r, in a
// cooperative launch); each log keeps the accesses of the block it is recording, and analyses them when the next
// block starts and at finish(), so memory holds one block's accesses per OS thread.
class AccessTrace {
 public:
  static constexpr int64_t kMaxBlockAccesses = int64_t(1) << 22;  // per block (16 bytes each)
  // shared[s]: whether site s accesses shared memory (else global); ranges: the launch's global memory.
  AccessTrace(std::vector<bool> shared, std::vector<MemoryRange> ranges, int64_t max_block_accesses = kMaxBlockAccesses);
  ~AccessTrace();
  AccessTrace(const AccessTrace&) = delete;
  AccessTrace& operator=(const AccessTrace&) = delete;

  HostAccessLog* logs(size_t count);  // count fresh logs, one per range of the launch
  // After the launch: each site's requests (the last blocks analysed).
  std::vector<AccessStats> finish();
  // Whether a block made more accesses than max_block_accesses (its log refused the rest).
  bool full() const;
  int64_t max_block_accesses() const { return max_block_accesses_; }

 private:
  struct Log;
  uint64_t global_address(uint64_t address) const;  // in its range's memory, placed as described at the top
  std::vector<bool> shared_;
  std::vector<MemoryRange> ranges_;  // sorted by begin
  int64_t max_block_accesses_;
  std::vector<std::unique_ptr<Log>> recorders_;
  std::vector<HostAccessLog> logs_;
};

// One row of a report: a site and what its requests cost.
struct AccessRow {
  emit::AccessSite site;
  AccessStats stats;
  double efficiency() const;  // ideal / transactions, in percent
};
struct AccessReport {
  std::string kernel;
  Dim3 grid, block;
  std::vector<AccessRow> rows;  // the sites that ran, in source order
  std::string table() const;    // a readable table, one row per site
};
AccessReport access_report(std::string kernel, Dim3 grid, Dim3 block, const std::vector<emit::AccessSite>& sites,
                           const std::vector<AccessStats>& stats);

}  // namespace jiasu
