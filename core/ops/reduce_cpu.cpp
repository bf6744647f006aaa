// Reductions on the CPU backend: the threads they share, and the dispatch to the loops of the input's part
// of the dtypes (reduce_cpu_part.cpp, compiled once per part).
#include <array>
#include <utility>

#include "cpu/host_kernel.hpp"
#include "ops/reduce_cpu_loops.hpp"

namespace jiasu::ops {
namespace cpu_reduce {

WorkPool& reduce_pool() {
  static WorkPool* pool = new WorkPool(static_cast<unsigned>(host_thread_count()));  // lives to the end
  return *pool;
}

}  // namespace cpu_reduce

namespace {

using PartFn = void (*)(const ReduceLaunch&);

template <size_t... Parts> constexpr auto reduce_parts(std::index_sequence<Parts...>) {
  return std::array<PartFn, sizeof...(Parts)>{&cpu_reduce::reduce_part<Parts>...};
}
template <size_t... Parts> constexpr auto cumsum_parts(std::index_sequence<Parts...>) {
  return std::array<PartFn, sizeof...(Parts)>{&cpu_reduce::cumsum_part<Parts>...};
}
constexpr auto kReduceParts = reduce_parts(std::make_index_sequence<kLoopParts>());
constexpr auto kCumsumParts = cumsum_parts(std::make_index_sequence<kLoopParts>());

}  // namespace

void reduce_on_host(const ReduceLaunch& launch) { kReduceParts[loop_part(launch.in_dtype)](launch); }

void cumsum_on_host(const ReduceLaunch& launch) { kCumsumParts[loop_part(launch.in_dtype)](launch); }

}  // namespace jiasu::ops
