// Planning a reduction: which axes, and the collapsed walk over memory (ops/reduce.hpp).
#include <string>

#include "ops/reduce.hpp"

namespace jiasu::ops {
namespace {

// Appends `dim` to `dims`, merged into the last one when the two address memory as one dimension.
void push_collapsed(std::vector<ReduceDim>& dims, const ReduceDim& dim) {
  if (dim.size == 1) return;
  if (!dims.empty()) {
    ReduceDim& last = dims.back();
    if (last.stride == dim.stride * dim.size && last.out_stride == dim.out_stride * dim.size) {
      last.size *= dim.size;
      last.stride = dim.stride;
      last.out_stride = dim.out_stride;
      return;
    }
  }
  dims.push_back(dim);
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Var: return "var";
    case ReduceOp::Std: return "std";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::Any: return "any";
    case ReduceOp::All: return "all";
  }
  return "?";
}

std::vector<bool> reduced_axes(int64_t ndim, const std::optional<std::vector<int64_t>>& axes) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), !axes.has_value());
  if (!axes) return reduced;
  for (int64_t axis : *axes) {
    if (axis < -ndim || axis >= ndim)
      throw AxisError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(ndim));
    const size_t d = static_cast<size_t>(axis < 0 ? axis + ndim : axis);
    if (reduced[d]) throw BadValue("duplicate value in 'axis'");
    reduced[d] = true;
  }
  return reduced;
}

ReducePlan plan_reduction(const Layout& in, const std::vector<bool>& reduced, const Shape& out_strides) {
  ReducePlan plan;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    const ReduceDim dim{in.shape[d], in.strides[d], out_strides[d]};
    (reduced[d] ? plan.reduced_count : plan.kept_count) *= dim.size;
    push_collapsed(reduced[d] ? plan.reduced : plan.kept, dim);
  }
  if (plan.reduced_count == 0) plan.reduced.clear();  // each result is the identity (no element to read)
  if (plan.reduced_count == 0)
    plan.kind = ReduceCase::Strided;
  else if (!plan.reduced.empty() && plan.reduced.back().stride == in.itemsize)
    plan.kind = ReduceCase::Rows;
  else if (plan.reduced.size() == 1 && !plan.kept.empty() && plan.kept.back().stride == in.itemsize)
    plan.kind = ReduceCase::Columns;
  else
    plan.kind = ReduceCase::Strided;
  return plan;
}

}  // namespace jiasu::ops
