// The host build that analyses memory accesses (k.analyze, emit_host's trace_accesses): every element access of a
// global or shared array goes through at_traced, which checks it as debug mode does and records its address in the
// launch's access log (HostLaunch::access_log, read by cpu/access_trace). Included by host_runtime.h after
// debug_checks.h.
#pragma once

namespace jiasu {

template <typename A, typename... I>
inline auto& at_traced(const HostThread& thread, CheckSite site, int access_site, const A& a, I... indices) {
  auto& element = at_checked(thread, site, a, indices...);
  detail::HostBlock& block = *detail::current_block;
  if (HostAccessLog* log = block.access_log) {
    const HostDim3 &t = thread.threadIdx, &b = thread.blockIdx, &d = thread.blockDim, &g = thread.gridDim;
    const HostAccess access{reinterpret_cast<unsigned long long>(&element), access_site,
                            static_cast<unsigned short>(t.x + t.y * d.x + t.z * d.x * d.y),
                            static_cast<unsigned short>(sizeof element)};
    if (log->record(log->recorder, b.x + b.y * g.x + b.z * g.x * g.y, &access) != 0)
      detail::fail(block, "block (%lld, %lld, %lld) made more element accesses than the analysis records for one "
                   "block", b.x, b.y, b.z);
  }
  return element;
}

}  // namespace jiasu
