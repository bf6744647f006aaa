// Array methods in kernels that make views, as Numba's CUDA target has them: a.reshape(shape) of a C-contiguous
// array and a.view(dtype), the same memory with another shape or element type. visit_call made the array the
// call's first argument.
#include <string>

#include "frontend/checker.hpp"

namespace jiasu::fe::checking {

// a.reshape(t), a.reshape((n, m)) or a.reshape(n, m): a C-contiguous array of as many axes as the shape has
// items; one of them may be -1 (the rest of the size), as in NumPy.
Type Checker::reshape(Expr& e) {
  if (!e.keywords.empty()) fail(start_of(*e.keywords[0].second), "reshape() takes no keyword arguments");
  Expr& array = *e.args[1];
  if (!array.type.contiguous)
    fail(start_of(array), "reshape() needs a C-contiguous array, not " + to_string(array.type) +
                              " (a view made by slicing is not known to be contiguous)");
  int ndim = 0;
  for (size_t i = 2; i < e.args.size(); ++i) {
    const Type& part = visit(*e.args[i]);
    const bool ints = part.is_integer() || (part.kind == TypeKind::Tuple && [&] {
      for (const Type& item : part.items)
        if (!item.is_integer()) return false;
      return true;
    }());
    if (!ints) fail(start_of(*e.args[i]), "reshape() takes a shape: integers or a tuple of them, not " + to_string(part));
    ndim += part.kind == TypeKind::Tuple ? static_cast<int>(part.items.size()) : 1;
  }
  if (ndim == 0) fail(start_of(array), "reshape() to a 0-d array is not supported in kernels");
  Type view = array.type;
  view.ndim = ndim;
  return view;
}

// a.view(dtype): the array's bytes as elements of `dtype`; the last axis holds itemsize / dtype's itemsize times
// as many (it must be contiguous, and its bytes a whole number of the new elements, or the view is empty).
Type Checker::view_as(Expr& e) {
  Expr& array = *e.args[1];
  if (e.args.size() != 3 || !e.keywords.empty()) fail(start_of(array), "view() takes one argument, a dtype");
  const Type& dtype = visit(*e.args[2]);
  if (e.args[2]->meaning != Meaning::DTypeValue)
    fail(start_of(*e.args[2]), "view() takes a dtype such as np.int32, not " + to_string(dtype));
  if (array.type.record) fail(start_of(array), "view() of a record array is not supported in kernels");
  if (array.type.ndim == 0) fail(start_of(array), "view() of a 0-d array is not supported in kernels");
  Type view = array.type;
  view.dtype = dtype.dtype;
  return view;
}

}  // namespace jiasu::fe::checking
