#include "cpu/access_trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "support/text.hpp"

namespace jiasu {

constexpr uint64_t kSectorBytes = 32;
constexpr uint64_t kBankBytes = 4;
constexpr int kBanks = 32;
constexpr int kWarpSize = 32;
constexpr int kMaxBlockThreads = 1024;
constexpr int kRangeShift = 40;  // argument r's memory is analysed at (r + 1) << 40: 256-byte aligned, apart

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The distinct units of `unit` bytes the lanes' bytes fall in.
std::vector<uint64_t> units_touched(const std::vector<LaneAccess>& lanes, uint64_t unit) {
  std::vector<uint64_t> units;
  for (const LaneAccess& lane : lanes)
    for (uint64_t u = lane.address / unit; u <= (lane.address + lane.bytes - 1) / unit; ++u) units.push_back(u);
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  return units;
}

}  // namespace

RequestCost global_request(const std::vector<LaneAccess>& lanes) {
  RequestCost cost;
  if (lanes.empty()) return cost;
  cost.transactions = static_cast<int64_t>(units_touched(lanes, kSectorBytes).size());
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [begin, end) of each lane's bytes, merged below
  for (const LaneAccess& lane : lanes) spans.emplace_back(lane.address, lane.address + lane.bytes);
  std::sort(spans.begin(), spans.end());
  uint64_t distinct = 0, covered = 0;  // covered: the end of the bytes counted so far
  for (const auto& [begin, end] : spans) {
    const uint64_t from = std::max(begin, covered);
    if (end > from) distinct += end - from;
    covered = std::max(covered, end);
  }
  cost.ideal = ceil_div(static_cast<int64_t>(distinct), kSectorBytes);
  return cost;
}

RequestCost shared_request(const std::vector<LaneAccess>& lanes) {
  RequestCost cost;
  if (lanes.empty()) return cost;
  const std::vector<uint64_t> words = units_touched(lanes, kBankBytes);
  std::array<int64_t, kBanks> per_bank{};
  for (uint64_t word : words) cost.transactions = std::max(cost.transactions, ++per_bank[word % kBanks]);
  cost.ideal = ceil_div(static_cast<int64_t>(words.size()), kBanks);
  return cost;
}

void AccessStats::add(const RequestCost& cost, int64_t lanes, int64_t lane_bytes) {
  ++requests;
  accesses += lanes;
  bytes += lane_bytes;
  transactions += cost.transactions;
  ideal += cost.ideal;
  if (cost.ideal > 0) max_ways = std::max(max_ways, double(cost.transactions) / double(cost.ideal));
}

void AccessStats::merge(const AccessStats& other) {
  requests += other.requests;
  accesses += other.accesses;
  bytes += other.bytes;
  transactions += other.transactions;
  ideal += other.ideal;
  max_ways = std::max(max_ways, other.max_ways);
}

// One range's log: the accesses of the block it is recording, and the requests of the blocks before.
struct AccessTrace::Log {
  const AccessTrace* trace = nullptr;
  int64_t block = -1;
  std::vector<HostAccess> records;
  std::vector<uint32_t> executions;  // per (thread, site): how often the thread ran the site in this block
  std::vector<AccessStats> stats;    // per site
  bool full = false;

  static int record(void* recorder, long long block, const HostAccess* access) {
    Log& log = *static_cast<Log*>(recorder);
    try {  // runs inside the kernel: nothing may be thrown through it
      if (block != log.block) {
        log.analyse();
        log.block = block;
      }
      if (log.full || static_cast<int64_t>(log.records.size()) >= log.trace->max_block_accesses_) {
        log.full = true;
        return 1;
      }
      log.records.push_back(*access);
      return 0;
    } catch (...) {  // out of memory
      log.full = true;
      return 1;
    }
  }

  // The block's accesses become requests, added to stats; the records are then cleared.
  void analyse() {
    if (records.empty()) return;
    const size_t sites = trace->shared_.size();
    executions.resize(kMaxBlockThreads * sites);
    struct Item {
      uint32_t site, warp, execution;
      LaneAccess lane;
    };
    std::vector<Item> items;
    items.reserve(records.size());
    auto slot = [&](const HostAccess& r) {  // in executions; -1 for a record no site or thread has
      const bool known = r.site >= 0 && static_cast<size_t>(r.site) < sites && r.thread < kMaxBlockThreads;
      return known ? static_cast<int64_t>(r.thread * sites + static_cast<size_t>(r.site)) : int64_t(-1);
    };
    for (const HostAccess& r : records) {
      const int64_t k = slot(r);
      if (k < 0) continue;
      const auto site = static_cast<uint32_t>(r.site);
      const uint64_t address = trace->shared_[site] ? r.address : trace->global_address(r.address);
      items.push_back({site, r.thread / uint32_t(kWarpSize), executions[k]++, LaneAccess{address, r.bytes}});
    }
    for (const HostAccess& r : records)  // zero again for the next block
      if (const int64_t k = slot(r); k >= 0) executions[k] = 0;
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tie(a.site, a.warp, a.execution) < std::tie(b.site, b.warp, b.execution);
    });
    stats.resize(sites);
    std::vector<LaneAccess> lanes;
    for (size_t i = 0; i < items.size();) {
      const Item& first = items[i];
      lanes.clear();
      int64_t bytes = 0;
      for (; i < items.size() && items[i].site == first.site && items[i].warp == first.warp &&
             items[i].execution == first.execution; ++i) {
        lanes.push_back(items[i].lane);
        bytes += items[i].lane.bytes;
      }
      const RequestCost cost = trace->shared_[first.site] ? shared_request(lanes) : global_request(lanes);
      stats[first.site].add(cost, static_cast<int64_t>(lanes.size()), bytes);
    }
    records.clear();
  }
};

AccessTrace::AccessTrace(std::vector<bool> shared, std::vector<MemoryRange> ranges, int64_t max_block_accesses)
    : shared_(std::move(shared)), ranges_(std::move(ranges)), max_block_accesses_(max_block_accesses) {
  std::sort(ranges_.begin(), ranges_.end(), [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
}

AccessTrace::~AccessTrace() = default;

uint64_t AccessTrace::global_address(uint64_t address) const {
  auto after = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                [](uint64_t a, const MemoryRange& r) { return a < r.begin; });
  if (after == ranges_.begin()) return address;
  const MemoryRange& range = *(after - 1);
  if (address - range.begin >= range.bytes) return address;
  return (static_cast<uint64_t>(after - ranges_.begin()) << kRangeShift) + (address - range.begin);
}

HostAccessLog* AccessTrace::logs(size_t count) {
  const size_t first = recorders_.size();
  for (size_t i = 0; i < count; ++i) {
    recorders_.push_back(std::make_unique<Log>());
    recorders_.back()->trace = this;
  }
  logs_.resize(first + count);  // the launch reads them as one array
  for (size_t i = 0; i < count; ++i) logs_[first + i] = HostAccessLog{&Log::record, recorders_[first + i].get()};
  return logs_.data() + first;
}

std::vector<AccessStats> AccessTrace::finish() {
  std::vector<AccessStats> total(shared_.size());
  for (auto& log : recorders_) {
    log->analyse();
    for (size_t s = 0; s < log->stats.size(); ++s) total[s].merge(log->stats[s]);
  }
  return total;
}

bool AccessTrace::full() const {
  for (const auto& log : recorders_)
    if (log->full) return true;
  return false;
}

double AccessRow::efficiency() const {
  return stats.transactions > 0 ? 100.0 * double(stats.ideal) / double(stats.transactions) : 100.0;
}

AccessReport access_report(std::string kernel, Dim3 grid, Dim3 block, const std::vector<emit::AccessSite>& sites,
                           const std::vector<AccessStats>& stats) {
  AccessReport report{std::move(kernel), grid, block, {}};
  for (size_t s = 0; s < sites.size() && s < stats.size(); ++s)
    if (stats[s].requests > 0) report.rows.push_back(AccessRow{sites[s], stats[s]});
  std::stable_sort(report.rows.begin(), report.rows.end(), [](const AccessRow& a, const AccessRow& b) {
    return std::tie(a.site.file, a.site.line, a.site.column) < std::tie(b.site.file, b.site.line, b.site.column);
  });
  return report;
}

namespace {

std::string dims(Dim3 d) { return format("(%u, %u, %u)", d.x, d.y, d.z); }

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// "32-way" or "1.5-way"
std::string ways(double n) {
  return std::fabs(n - std::round(n)) < 0.005 ? format("%.0f-way", n) : format("%.2f-way", n);
}

}  // namespace

std::string AccessReport::table() const {
  const std::string file = rows.empty() ? std::string() : rows.front().site.file;
  std::string out = "kernel '" + kernel + "'" + (file.empty() ? "" : " (" + base_name(file) + ")") +
                    ": memory accesses of a grid of " + dims(grid) + " blocks of " + dims(block) +
                    " threads, traced on the CPU\n";
  if (rows.empty()) return out + "  (no accesses to global or shared arrays)\n";
  out += "  global: 32-byte sectors per warp request (ideal: the bytes coalesced); shared: wavefronts per request "
         "(32 banks of 4 bytes)\n";
  out += format("  %-12s %-8s %-7s %-10s %9s %18s %9s %10s  %-18s %s\n", "line:col", "array", "space", "access",
                "requests", "per request", "ideal", "efficiency", "bank conflicts", "source");
  for (const AccessRow& row : rows) {
    const emit::AccessSite& s = row.site;
    const AccessStats& t = row.stats;
    std::string where = format("%d:%d", s.line, s.column);
    if (s.file != file) where = base_name(s.file) + ":" + where;
    const double requests = double(t.requests);
    const std::string per_request = format("%.2f %s", double(t.transactions) / requests, s.shared ? "wavefronts" : "sectors");
    std::string conflicts;
    if (s.shared)
      conflicts = t.transactions == t.ideal ? "none"
                  : ways(double(t.transactions) / double(t.ideal)) +
                        (t.max_ways > double(t.transactions) / double(t.ideal) + 0.005 ? " (max " + ways(t.max_ways) + ")" : "");
    out += format("  %-12s %-8s %-7s %-10s %9lld %18s %9.2f %9.1f%%  %-18s ", where.c_str(), s.array.c_str(),
                  s.shared ? "shared" : "global", emit::access_kind_name(s.kind), static_cast<long long>(t.requests),
                  per_request.c_str(), double(t.ideal) / requests, row.efficiency(), conflicts.c_str()) +
           s.source + "\n";
  }
  return out;
}

}  // namespace jiasu
