// Generalized ufuncs (NumPy's gufuncs, Numba's @guvectorize): a function of arrays applied at every index of
// the *loop dimensions*, the leading dimensions each operand has beyond the *core dimensions* that the layout
// ("(m,n),(n,p)->(m,p)") names for it. This is the call's shape logic: the layout's grammar, the signature a
// call takes, the binding of the core dimensions, the loop shape (the inputs' loop dimensions broadcast, as
// NumPy's), the outputs' shapes, and the operands as the kernel takes them; plus the text of that kernel, a
// jiasu kernel that calls the function on each loop index's views (the front end compiles it as any other).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "array/array.hpp"

namespace jiasu::ops {

// A layout's operands, each as the names of its core dimensions; BadValue for what is not one.
struct GufuncLayout {
  std::vector<std::vector<std::string>> inputs, outputs;
};
GufuncLayout parse_gufunc_layout(const std::string& text);
std::string layout_string(const GufuncLayout& layout);  // "(m,n),(n,p)->(m,p)", for messages

// One parameter of a signature: its dtype, and how the function takes it.
struct GufuncParam {
  DType dtype;
  int ndim;  // an array of ndim dimensions; kScalar: a number (an input of core dimensions ())
  static constexpr int kScalar = -1;
};

// One call's shapes: the loop's (the inputs' loop dimensions broadcast) and each output's (loop, then core).
struct GufuncShapes {
  Shape loop;
  std::vector<Shape> outputs;
};

// What a call launches: the kernel's loop shape (at least one dimension: (1,) for a loop of none) and element
// count, its operands (inputs broadcast, outputs viewed, each as (loop..., core...)), and the outputs as the
// caller gets them (those given, and those made, of the result's shape).
struct GufuncLaunch {
  Shape loop;
  int64_t count = 0;
  std::vector<Array> operands;
  std::vector<Array> outputs;
};

class Gufunc {
 public:
  // Each signature has a parameter per operand (inputs, then outputs). An input of core dimensions () may be a
  // number or a 1-D array (the function then gets a 1-element view, as Numba gives it); any other operand is an
  // array of as many dimensions as its core has. BadArgument/BadValue naming the signature otherwise.
  Gufunc(const std::string& layout, std::vector<std::vector<GufuncParam>> signatures);

  const GufuncLayout& layout() const { return layout_; }
  size_t nin() const { return layout_.inputs.size(); }
  size_t nout() const { return layout_.outputs.size(); }
  const std::vector<GufuncParam>& signature(size_t index) const { return signatures_.at(index); }

  // The signature for inputs of these dtypes, as Numba chooses it: the one that takes exactly these, else the
  // first whose every input dtype casts safely to the given one's (the inputs are then converted to it).
  // BadArgument when there is none.
  size_t choose(const std::vector<DType>& inputs) const;

  // The core dimensions bound from the inputs' shapes (BadValue when one has too few dimensions or two disagree
  // on a dimension's length), the loop shape and the outputs' shapes.
  GufuncShapes shapes(const std::vector<Shape>& inputs) const;

  // A call of signature `index` on these inputs (each of the signature's dtype) and outputs: a given output
  // must have its dtype and the result's shape, up to leading dimensions of length 1 (which the loop may have
  // and the output not, or the other way round); the others (nullopt) are made on the inputs' device.
  GufuncLaunch prepare(size_t index, const std::vector<Array>& inputs,
                       const std::vector<std::optional<Array>>& outputs) const;

  // The jiasu kernel `name(n, loop, arg0, arg1, ...)` for signature `index` and a loop of `loop_rank`
  // dimensions: thread t < n unravels t into loop indices i0, i1, ... and calls `core` (the function, a global
  // the caller resolves) on each operand indexed by them: the core's view, the number of a scalar parameter, or
  // a 1-element slice of a 1-D parameter of core ().
  std::string kernel_source(size_t index, size_t loop_rank, const std::string& name) const;

 private:
  std::string signature_string(size_t index) const;
  GufuncLayout layout_;
  std::vector<std::vector<GufuncParam>> signatures_;
};

}  // namespace jiasu::ops
