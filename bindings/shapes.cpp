// jiasu.Array's shape methods (T, transpose, squeeze, ravel, ...) and the module functions that join arrays.
// The rules are the core's (array/layout, array/join); this only converts arguments.
#include <nanobind/stl/vector.h>

#include "ops/elementwise.hpp"
#include "ops/join.hpp"
#include "common.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// An axis argument: an int, or a tuple/list of ints (None is handled by the callers).
std::vector<int64_t> axes_from(nb::handle axes) {
  if (PyIndex_Check(axes.ptr()) && !PyBool_Check(axes.ptr())) return {nb::cast<int64_t>(axes)};
  if (!PyTuple_Check(axes.ptr()) && !PyList_Check(axes.ptr()))
    throw BadArgument("an axis must be an int or a tuple of ints, not " + python_type_name(axes));
  std::vector<int64_t> out;
  for (nb::handle a : axes) {
    if (!PyIndex_Check(a.ptr()) || PyBool_Check(a.ptr()))
      throw BadArgument("an axis must be an int, not " + python_type_name(a));
    out.push_back(nb::cast<int64_t>(a));
  }
  return out;
}

std::vector<Array> arrays_from(nb::handle sequence, const char* what) {
  std::vector<Array> out;
  if (nb::isinstance<Array>(sequence)) {  // NumPy iterates an array's first axis
    const Array& a = nb::cast<const Array&>(sequence);
    if (a.ndim() == 0) throw BadValue(std::string("cannot ") + what + " the elements of a 0-d array");
    for (int64_t i = 0; i < a.shape()[0]; ++i) out.push_back(a.index({IndexItem{IndexItem::Integer, i}}));
    return out;
  }
  for (nb::handle item : sequence) {
    if (!nb::isinstance<Array>(item))
      throw BadArgument(std::string(what) + " takes jiasu arrays, not " + python_type_name(item) +
                        "; convert it with jiasu.asarray(x)");
    out.push_back(nb::cast<const Array&>(item));
  }
  return out;
}

}  // namespace

void bind_shape_methods(nb::class_<Array>& cls) {
  cls.def_prop_ro("T", [](const Array& a) { return a.view(transpose_layout(a.layout(), {})); },
                  "The view with the axes reversed.")
      .def_prop_ro("is_f_contiguous", [](const Array& a) { return a.layout().f_contiguous(); })
      .def("transpose", [](const Array& a, nb::args axes) {
        std::vector<int64_t> order;
        if (axes.size() == 1 && !axes[0].is_none()) order = axes_from(axes[0]);
        else if (axes.size() > 1) order = axes_from(axes);
        return a.view(transpose_layout(a.layout(), order));
      }, "The view with the axes permuted (reversed when none are given).")
      .def("swapaxes", [](const Array& a, int64_t axis1, int64_t axis2) {
        std::vector<int64_t> order(a.ndim());
        for (int64_t i = 0; i < a.ndim(); ++i) order[i] = i;
        std::swap(order[normalize_axis(axis1, a.ndim())], order[normalize_axis(axis2, a.ndim())]);
        return a.view(transpose_layout(a.layout(), order));
      }, nb::arg("axis1"), nb::arg("axis2"))
      .def("squeeze", [](const Array& a, nb::handle axis) {
        return a.view(squeeze_layout(a.layout(), axis.is_none() ? std::vector<int64_t>{} : axes_from(axis)));
      }, nb::arg("axis").none() = nb::none(), "The view without length-1 axes (all of them, or those named).")
      .def("ravel", [](const Array& a) { return ops::reshape(a, {-1}); },
           "A 1-D view when the strides allow one, else a 1-D copy.")
      .def("flatten", [](const Array& a) { return ops::astype(a, a.dtype()).reshape({-1}); }, "A 1-D copy.");
}

void bind_shapes(nb::module_& m) {
  m.def("expand_dims", [](const Array& a, nb::handle axis) {
    return a.view(expand_dims_layout(a.layout(), axes_from(axis)));
  }, nb::arg("a"), nb::arg("axis"));
  m.def("broadcast_to", [](const Array& a, nb::handle shape) {
    return a.view(broadcast_layout(a.layout(), shape_from(shape)));
  }, nb::arg("array"), nb::arg("shape"), "A read-only-by-convention view of `array` broadcast to `shape`.");
  m.def("broadcast_shapes", [](nb::args shapes) {
    std::vector<Shape> all;
    for (nb::handle s : shapes) all.push_back(shape_from(s));
    return to_tuple(broadcast_shapes(all));
  });
  m.def("concatenate", [](nb::handle arrays, nb::handle axis) {
    std::vector<Array> parts = arrays_from(arrays, "concatenate");
    if (!axis.is_none()) return ops::concatenate(parts, nb::cast<int64_t>(axis));
    for (Array& p : parts) p = ops::reshape(p, {-1});
    return ops::concatenate(parts, 0);
  }, nb::arg("arrays"), nb::arg("axis").none() = 0);
  m.def("stack", [](nb::handle arrays, int64_t axis) { return ops::stack(arrays_from(arrays, "stack"), axis); },
        nb::arg("arrays"), nb::arg("axis") = 0);
  m.def("ascontiguousarray", [](nb::handle self) -> nb::object {
    const Array& a = nb::cast<const Array&>(self);
    if (a.c_contiguous() && a.ndim()) return nb::borrow(self);
    return nb::cast(ops::astype(a, a.dtype()).reshape(a.ndim() ? a.shape() : Shape{1}));
  }, nb::arg("a"), "The array itself when it is C-contiguous, else a C-contiguous copy (0-d becomes 1-d, as NumPy).");
}

}  // namespace jiasu::py
