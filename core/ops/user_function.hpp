// @jiasu.vectorize and @jiasu.reduce: a user's scalar Python function made an elementwise operation and a
// reduction. The front end types the function for each dtype signature it is called with
// (fe::check_scalar_function); it is emitted as a __device__ function that the elementwise engine's generated
// kernels call (one kernel per layout class, as for the built-in operations), or as a host function inside a
// generated inner loop that the host compiler builds. Both go through the disk cache.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/check.hpp"
#include "ops/elementwise.hpp"

namespace jiasu {
class HostLibrary;
}

namespace jiasu::ops {

class UserFunction {
 public:
  // `arity`: the function's number of parameters (every call passes that many operands).
  UserFunction(std::shared_ptr<const fe::FunctionSource> source, std::string name, int arity);

  const std::string& name() const { return name_; }
  int arity() const { return arity_; }

  // The loop for these operands (each Python scalar typed per NEP 50 beside the arrays), compiled the first time
  // for their dtype signature and backend. Compiling runs the front end, whose resolver may call back into
  // Python: a Python caller holds the GIL here, and may release it for ops::apply(loop, ...).
  const CustomLoop& loop_for(const Operand* inputs, int count, const Array* out = nullptr);

  // f(inputs...) element by element: broadcast, into `out` (same_kind cast) or a new array of f's result type
  // for those dtypes. loop_for, then ops::apply.
  Array call(const Operand* inputs, int count, const Array* out = nullptr);

  // A binary f folded over `axes` of `a` (each once; none: no reduction), in order as a balanced tree (so f
  // must be associative), then f(init, result) when `init` is given. The fold runs in f's settled result type
  // (the first t, from a's dtype, with f(t, t) of type t; a is converted to it first when it differs), whatever
  // the length. An empty reduction gives `init` (in the type of f(init, t)), and is a BadValue without one.
  // keepdims keeps the reduced axes with size 1. prepare_reduce() first compiles every loop it uses (the GIL
  // rule of loop_for) and gives the fold's type; reduce() calls it too.
  DType prepare_reduce(DType dtype, bool cuda, const std::optional<Scalar>& init);
  Array reduce(const Array& a, const std::vector<int64_t>& axes, bool keepdims, const std::optional<Scalar>& init);

  // The loop's generated source for these input dtypes: CUDA (the device function) or host C++ (whole).
  std::string source_for(const std::vector<DType>& dtypes, bool cuda);

 private:
  struct Compiled {
    CustomLoop loop;
    std::string host_source;
    std::shared_ptr<HostLibrary> library;  // holds the CPU loop's code
  };
  Compiled& compiled(const DType* dtypes, int count, bool cuda);
  DType fold_dtype(DType dtype, bool cuda);  // the settled t of reduce()
  const CustomLoop& init_loop(const Scalar& init, DType folded, bool cuda);
  Array fold_last_axis(Array x);

  std::shared_ptr<const fe::FunctionSource> source_;
  std::string name_;
  int arity_;
  std::mutex mutex_;
  std::map<std::pair<std::vector<DType>, bool>, std::unique_ptr<Compiled>> loops_;
};

}  // namespace jiasu::ops
