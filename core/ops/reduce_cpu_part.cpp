// The CPU backend's reductions of one part of the input dtypes (ops/reduce_elements.hpp: loop_part): sum,
// prod, mean, var, std, max, min, argmax, argmin, any, all and cumsum, for every accumulator type, over
// the loops of reduce_cpu_loops.hpp. The build compiles this file once per part, with JIASU_LOOP_PART
// defined (CMakeLists.txt), so that the many instantiations compile in parallel; reduce_cpu.cpp dispatches.
#include <cmath>

#include "ops/reduce_cpu_loops.hpp"

#ifndef JIASU_LOOP_PART
#error "JIASU_LOOP_PART is defined by the file the build generates for each part (CMakeLists.txt)"
#endif

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

// The operations whose accumulator type is chosen by the caller: sums and the statistics built on them.
template <typename In, typename A>
void reduce_summed(const ReduceLaunch& launch) {
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

// The comparisons, in the widest type of the input's kind; the rest by the accumulator type.
template <typename In>
void reduce_input(const ReduceLaunch& launch) {
  using W = Widened<In>;
  switch (launch.op) {
    case ReduceOp::Max: return reduce_values<reduce::Max, In, W>(launch);
    case ReduceOp::Min: return reduce_values<reduce::Min, In, W>(launch);
    case ReduceOp::ArgMax: return reduce_values<reduce::ArgMax, In, W>(launch);
    case ReduceOp::ArgMin: return reduce_values<reduce::ArgMin, In, W>(launch);
    case ReduceOp::Any: return reduce_values<reduce::Any, In, bool>(launch);
    case ReduceOp::All: return reduce_values<reduce::All, In, bool>(launch);
    default:
      with_accumulator_type(launch.acc, [&](auto acc_tag) {
        using A = typename decltype(acc_tag)::type;
        if constexpr (!std::is_same_v<A, bool>) reduce_summed<In, A>(launch);
      });
  }
}

template <typename In, typename A>
void cumsum_typed(const ReduceLaunch& launch) {
  const ReducePlan& plan = *launch.plan;
  const char* in = static_cast<const char*>(launch.in_data);
  char* out = static_cast<char*>(launch.out_data);
  const std::vector<ReduceDim>& dims = plan.reduced;
  const int64_t tasks = plan.kept_count * plan.reduced_count < kParallelElements ? 1 : plan.kept_count;
  const StoreFn<A> store = store_as<A>(launch.out_dtype);
  auto one_result = [&](int64_t o) {
    int64_t out_base;
    const int64_t in_base = kept_offset(plan.kept, o, &out_base);
    A acc = A(0);
    for (int64_t i = 0; i < plan.reduced_count; ++i) {
      int64_t in_at = in_base, out_at = out_base;
      for (size_t d = dims.size(), rest = i; d-- > 0;) {
        const int64_t k = static_cast<int64_t>(rest % dims[d].size);
        rest /= dims[d].size;
        in_at += k * dims[d].stride;
        out_at += k * dims[d].out_stride;
      }
      acc += widen<A>(load<In>(in + in_at));
      store(out + out_at, acc);
    }
  };
  reduce_pool().run(tasks, [&](size_t t) {
    if (tasks == 1) {
      for (int64_t o = 0; o < plan.kept_count; ++o) one_result(o);
    } else {
      one_result(static_cast<int64_t>(t));
    }
  });
}

}  // namespace

template <int Part>
void reduce_part(const ReduceLaunch& launch) {
  with_element_type_of_part<Part>(launch.in_dtype, [&](auto in_tag) { reduce_input<typename decltype(in_tag)::type>(launch); });
}

template <int Part>
void cumsum_part(const ReduceLaunch& launch) {
  with_element_type_of_part<Part>(launch.in_dtype, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    with_accumulator_type(launch.acc, [&](auto acc_tag) {
      using A = typename decltype(acc_tag)::type;
      if constexpr (!std::is_same_v<A, bool>) cumsum_typed<In, A>(launch);
    });
  });
}

template void reduce_part<JIASU_LOOP_PART>(const ReduceLaunch& launch);
template void cumsum_part<JIASU_LOOP_PART>(const ReduceLaunch& launch);

}  // namespace jiasu::ops::cpu_reduce
