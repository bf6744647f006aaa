// Reductions: NumPy's result types and errors, the result array, and the backend that runs the plan.
#include "ops/reduce.hpp"

#include <string>

#include "runtime/driver.hpp"

namespace jiasu::ops {
namespace {

bool is_arg(ReduceOp op) { return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin; }

// The elementwise operation that combines initial= with a result: the reduction's own, on two values.
Ufunc combining_ufunc(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return Ufunc::Add;
    case ReduceOp::Prod: return Ufunc::Multiply;
    case ReduceOp::Max: return Ufunc::Maximum;
    case ReduceOp::Min: return Ufunc::Minimum;
    default: throw BadArgument(std::string("jiasu.") + reduce_op_name(op) + " takes no initial=");
  }
}
bool takes_dtype(ReduceOp op) {
  return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Mean || op == ReduceOp::Var ||
         op == ReduceOp::Std;
}
bool is_statistic(ReduceOp op) { return op == ReduceOp::Mean || op == ReduceOp::Var || op == ReduceOp::Std; }

[[noreturn]] void unsupported(const char* op, DType dtype, const char* what = "") {
  throw BadArgument(std::string("jiasu.") + op + " does not support " + what + "dtype " + info(dtype).name);
}

// Sum's and prod's result type without dtype=: NumPy widens bool and integers to the platform integer.
DType summed(DType in) {
  switch (info(in).kind) {
    case DTypeKind::Bool:
    case DTypeKind::Signed: return DType::Int64;
    case DTypeKind::Unsigned: return DType::UInt64;
    default: return in;
  }
}

AccType widened(DType t) {
  switch (info(t).kind) {
    case DTypeKind::Bool: return AccType::Bool;
    case DTypeKind::Signed: return AccType::Int64;
    case DTypeKind::Unsigned: return AccType::UInt64;
    default: return t == DType::Float64 ? AccType::Float64 : AccType::Float32;
  }
}

void check_out(const Array& a, const Array& out, const Shape& shape, DType dtype, ReduceOp op) {
  if (out.device() != a.device())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                            std::string("jiasu.") + reduce_op_name(op) + ": out= lives on another device than the input");
  if (out.shape() != shape) {
    std::string want, got;
    for (int64_t n : shape) want += (want.empty() ? "" : ", ") + std::to_string(n);
    for (int64_t n : out.shape()) got += (got.empty() ? "" : ", ") + std::to_string(n);
    throw BadValue(std::string("jiasu.") + reduce_op_name(op) + ": out= has shape (" + got + ") but the result has shape (" + want + ")");
  }
  if (out.dtype() != dtype)
    throw BadArgument(std::string("jiasu.") + reduce_op_name(op) + ": out= has dtype " + info(out.dtype()).name +
                      " but the result has dtype " + info(dtype).name + " (jiasu does not cast into out=)");
}

void run(const ReduceLaunch& launch, int device, bool cumulative) {
  if (device == kCpuDevice) {
    cumulative ? cumsum_on_host(launch) : reduce_on_host(launch);
  } else {
    cumulative ? cumsum_on_gpu(launch, device) : reduce_on_gpu(launch, device);
  }
}

}  // namespace

DType reduce_result_dtype(ReduceOp op, DType in, std::optional<DType> dtype) {
  const char* name = reduce_op_name(op);
  if (info(in).kind == DTypeKind::Complex) unsupported(name, in);
  if (dtype && !takes_dtype(op)) throw BadArgument(std::string("jiasu.") + name + " does not take dtype=");
  if (dtype && info(*dtype).kind == DTypeKind::Complex) unsupported(name, *dtype, "the result ");
  if (dtype && is_statistic(op) && info(*dtype).kind != DTypeKind::Float) unsupported(name, *dtype, "the non-float result ");
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: return dtype ? *dtype : summed(in);
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std: return dtype ? *dtype : info(in).kind == DTypeKind::Float ? in : DType::Float64;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: return DType::Int64;
    case ReduceOp::Any:
    case ReduceOp::All: return DType::Bool;
    case ReduceOp::Max:
    case ReduceOp::Min: return in;
  }
  return in;
}

AccType accumulator_of(ReduceOp op, DType in, DType result) {
  switch (op) {
    case ReduceOp::Any:
    case ReduceOp::All: return AccType::Bool;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: return widened(in);
    default: {
      const AccType acc = widened(result);
      return acc == AccType::Bool ? AccType::Int64 : acc;  // sum(dtype=bool) counts, then tests for zero
    }
  }
}

Array reduce(const Array& a, const ReduceRequest& request) {
  const ReduceOp op = request.op;
  const DType result = reduce_result_dtype(op, a.dtype(), request.dtype);
  const std::vector<bool> reduced = reduced_axes(a.ndim(), request.axes);
  Shape shape;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!reduced[d] || request.keepdims) shape.push_back(reduced[d] ? 1 : a.shape()[d]);
  if (request.out) check_out(a, *request.out, shape, result, op);
  std::optional<Array> initial;  // 0-d, of the result's type
  if (request.initial) {
    combining_ufunc(op);  // refuses the operations that take none
    initial = Array::empty({}, result, a.device());
    assign(*initial, *request.initial);
  }
  Array out = request.out ? *request.out : Array::empty(shape, result, a.device());

  Shape out_strides(a.ndim(), 0);
  for (int64_t d = 0, j = 0; d < a.ndim(); ++d) {
    if (!reduced[d]) out_strides[d] = out.strides()[j];
    if (!reduced[d] || request.keepdims) ++j;
  }
  const ReducePlan plan = plan_reduction(a.layout(), reduced, out_strides);
  if (plan.reduced_count == 0 && plan.kept_count > 0) {
    if (is_arg(op)) throw BadValue(std::string("attempt to get ") + reduce_op_name(op) + " of an empty sequence");
    if (op == ReduceOp::Max || op == ReduceOp::Min) {
      if (!initial)
        throw BadValue(std::string("zero-size array to reduction operation ") +
                       (op == ReduceOp::Max ? "maximum" : "minimum") + " which has no identity");
      assign(out, *initial);
      return out;
    }
  }
  const auto in_use = a.memory()->hold(), out_in_use = out.memory()->hold();
  if (out.size() == 0) return out;
  const ReduceLaunch launch{op, a.dtype(), result, accumulator_of(op, a.dtype(), result), &plan,
                            reinterpret_cast<const void*>(a.data()), reinterpret_cast<void*>(out.data()),
                            request.ddof};
  run(launch, a.device(), false);
  if (initial) {
    Operand both[2];
    both[0].array = &out;
    both[1].array = &*initial;
    apply(combining_ufunc(op), both, 2, &out);
  }
  return out;
}

Array cumsum(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype) {
  const DType result = reduce_result_dtype(ReduceOp::Sum, a.dtype(), dtype);
  // Without an axis every dimension is summed along, in C order, into a flat result: the same memory as a
  // C-contiguous result of a's shape.
  std::optional<std::vector<int64_t>> axes;
  if (axis) axes = std::vector<int64_t>{*axis};
  const std::vector<bool> reduced = reduced_axes(a.ndim(), axes);
  Array out = Array::empty(axis ? a.shape() : Shape{a.size()}, result, a.device());
  const auto in_use = a.memory()->hold();
  if (out.size() == 0) return out;
  const ReducePlan plan = plan_reduction(a.layout(), reduced, contiguous_layout(a.shape(), itemsize(result)).strides);
  const ReduceLaunch launch{ReduceOp::Sum, a.dtype(), result, accumulator_of(ReduceOp::Sum, a.dtype(), result),
                            &plan, reinterpret_cast<const void*>(a.data()), reinterpret_cast<void*>(out.data()), 0};
  run(launch, a.device(), true);
  return out;
}

}  // namespace jiasu::ops
