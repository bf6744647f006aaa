// Reductions on the CPU backend: the dispatch, the comparisons (max, min, argmax, argmin, any, all) and
// cumsum. The loops are in reduce_cpu_loops.hpp; sums and the statistics in reduce_cpu_sums.cpp.
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

using namespace cpu_reduce;

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
    default: return reduce_sums_on_host(launch);
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

void reduce_on_host(const ReduceLaunch& launch) {
  with_element_type(launch.in_dtype, [&](auto in_tag) { reduce_input<typename decltype(in_tag)::type>(launch); });
}

void cumsum_on_host(const ReduceLaunch& launch) {
  with_element_type(launch.in_dtype, [&](auto in_tag) {
    with_accumulator_type(launch.acc, [&](auto acc_tag) {
      using A = typename decltype(acc_tag)::type;
      if constexpr (!std::is_same_v<A, bool>) cumsum_typed<typename decltype(in_tag)::type, A>(launch);
    });
  });
}

}  // namespace jiasu::ops
