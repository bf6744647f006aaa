// Sums, products and the statistics built on sums (mean, var, std) on the CPU backend, for every input and
// accumulator type: the loops of reduce_cpu_loops.hpp.
#include <cmath>

#include "ops/reduce_cpu_loops.hpp"

namespace jiasu::ops::cpu_reduce {
namespace {

// mean, var, std: sums divided by the count; var's second pass sums squared deviations from the mean.
template <typename In, typename A>
void reduce_statistic(const ReduceLaunch& launch) {
  const ReducePlan& plan = *launch.plan;
  const char* in = static_cast<const char*>(launch.in_data);
  std::vector<A> sums(plan.kept_count);
  reduce_all<reduce::Sum, A, sizeof(In), std::is_same_v<In, A>>(
      plan, in, sums.data(), [](const char* x, int64_t, int64_t) { return widen<A>(load<In>(x)); });
  const A count = static_cast<A>(plan.reduced_count);
  if (launch.op == ReduceOp::Mean) {
    store_results(launch, sums.data(), [count](A s) { return s / count; });
    return;
  }
  for (A& s : sums) s /= count;
  std::vector<A> squares(plan.kept_count);
  reduce_all<reduce::Sum, A, sizeof(In), false>(plan, in, squares.data(), [&sums](const char* x, int64_t, int64_t o) {
    return reduce::squared_deviation(widen<A>(load<In>(x)), sums[o]);
  });
  const A divisor = static_cast<A>(reduce::var_divisor(plan.reduced_count, launch.ddof));
  if (launch.op == ReduceOp::Var)
    store_results(launch, squares.data(), [divisor](A s) { return s / divisor; });
  else
    store_results(launch, squares.data(), [divisor](A s) { return std::sqrt(s / divisor); });
}

template <typename In, typename A>
void reduce_typed(const ReduceLaunch& launch) {
  switch (launch.op) {
    case ReduceOp::Sum: return reduce_values<reduce::Sum, In, A>(launch);
    case ReduceOp::Prod: return reduce_values<reduce::Prod, In, A>(launch);
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std:
      if constexpr (std::is_floating_point_v<A>) return reduce_statistic<In, A>(launch);
      break;
    default: break;
  }
  throw BadValue(std::string("jiasu: no CPU loop for ") + reduce_op_name(launch.op));
}
}  // namespace

void reduce_sums_on_host(const ReduceLaunch& launch) {
  with_element_type(launch.in_dtype, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    with_accumulator_type(launch.acc, [&](auto acc_tag) {
      using A = typename decltype(acc_tag)::type;
      if constexpr (!std::is_same_v<A, bool>) reduce_typed<In, A>(launch);
    });
  });
}

}  // namespace jiasu::ops::cpu_reduce
