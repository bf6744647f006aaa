// Reductions: jiasu._core._reduce / _cumsum (called by python/jiasu/_reductions.py) and the Array methods
// (a.sum(), a.argmax(), ...). Conversion only: the work is ops/reduce.
#include <nanobind/stl/string.h>

#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "ops/reduce.hpp"

namespace jiasu::py {
namespace {

using ops::ReduceOp;

ReduceOp op_from(const std::string& name) {
  static const ReduceOp kOps[] = {ReduceOp::Sum,  ReduceOp::Prod,   ReduceOp::Max,    ReduceOp::Min,
                                  ReduceOp::Mean, ReduceOp::Var,    ReduceOp::Std,    ReduceOp::ArgMax,
                                  ReduceOp::ArgMin, ReduceOp::Any,  ReduceOp::All};
  for (ReduceOp op : kOps)
    if (name == ops::reduce_op_name(op)) return op;
  throw BadValue("no reduction named " + name);
}

int64_t axis_from(nb::handle axis) {
  PyObject* index = PyNumber_Index(axis.ptr());
  if (!index) {
    PyErr_Clear();
    throw BadArgument("'" + python_type_name(axis) + "' object cannot be interpreted as an integer");
  }
  const long long value = PyLong_AsLongLong(index);
  Py_DECREF(index);
  if (value == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw AxisError("axis " + python_str(axis) + " is out of bounds");
  }
  return value;
}

// None, an int or a tuple of ints; argmax and argmin take no tuple (as NumPy).
std::optional<std::vector<int64_t>> axes_from(nb::handle axis, bool single) {
  if (axis.is_none()) return std::nullopt;
  if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
    if (single) throw BadArgument("'" + python_type_name(axis) + "' object cannot be interpreted as an integer");
    std::vector<int64_t> axes;
    for (nb::handle item : axis) axes.push_back(axis_from(item));
    return axes;
  }
  return std::vector<int64_t>{axis_from(axis)};
}

Array reduce_call(const std::string& name, const Array& a, nb::handle axis, nb::handle dtype, nb::handle out,
                  bool keepdims, nb::handle ddof, nb::handle initial = nb::none()) {
  ops::ReduceRequest request;
  request.op = op_from(name);
  request.axes = axes_from(axis, request.op == ReduceOp::ArgMax || request.op == ReduceOp::ArgMin);
  request.keepdims = keepdims;
  if (!dtype.is_none()) request.dtype = dtype_from_object(dtype);
  if (!ddof.is_none()) request.ddof = axis_from(ddof);
  if (!initial.is_none()) request.initial = number_from(initial, "initial");
  std::optional<Array> out_array;
  if (!out.is_none()) {
    if (!nb::isinstance<Array>(out)) throw BadArgument("out= must be a jiasu.Array, not " + python_type_name(out));
    out_array = nb::cast<const Array&>(out);
    request.out = &*out_array;
  }
  nb::gil_scoped_release unlocked;
  return ops::reduce(a, request);
}

Array cumsum_call(const Array& a, nb::handle axis, nb::handle dtype) {
  std::optional<int64_t> axis_value;
  if (!axis.is_none()) axis_value = axis_from(axis);
  std::optional<DType> dtype_value;
  if (!dtype.is_none()) dtype_value = dtype_from_object(dtype);
  nb::gil_scoped_release unlocked;
  return ops::cumsum(a, axis_value, dtype_value);
}

}  // namespace

void bind_reductions(nb::module_& m) {
  m.def("_reduce", &reduce_call, nb::arg("op"), nb::arg("a"), nb::arg("axis").none(), nb::arg("dtype").none(),
        nb::arg("out").none(), nb::arg("keepdims"), nb::arg("ddof").none(), nb::arg("initial").none() = nb::none());
  m.def("_cumsum", &cumsum_call, nb::arg("a"), nb::arg("axis").none(), nb::arg("dtype").none());

  // The methods, with NumPy's parameters for each.
  nb::handle array = nb::type<Array>();
  auto method = [&](const char* name, nb::object function) { nb::setattr(array, name, function); };
  for (const char* name : {"sum", "prod"}) {
    const std::string op = name;
    method(name, nb::cpp_function([op](const Array& a, nb::handle axis, nb::handle dtype, nb::handle out, bool keepdims,
                                       nb::handle initial) {
      return reduce_call(op, a, axis, dtype, out, keepdims, nb::none(), initial);
    }, nb::scope(array), nb::name(name), nb::is_method(), nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
       nb::arg("out").none() = nb::none(), nb::arg("keepdims") = false, nb::arg("initial").none() = nb::none()));
  }
  method("mean", nb::cpp_function([](const Array& a, nb::handle axis, nb::handle dtype, nb::handle out, bool keepdims) {
    return reduce_call("mean", a, axis, dtype, out, keepdims, nb::none());
  }, nb::scope(array), nb::name("mean"), nb::is_method(), nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
     nb::arg("out").none() = nb::none(), nb::arg("keepdims") = false));
  for (const char* name : {"var", "std"}) {
    const std::string op = name;
    method(name, nb::cpp_function([op](const Array& a, nb::handle axis, nb::handle dtype, nb::handle out, nb::handle ddof,
                                       bool keepdims) { return reduce_call(op, a, axis, dtype, out, keepdims, ddof); },
       nb::scope(array), nb::name(name), nb::is_method(), nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
       nb::arg("out").none() = nb::none(), nb::arg("ddof").none() = 0, nb::arg("keepdims") = false));
  }
  for (const char* name : {"max", "min"}) {
    const std::string op = name;
    method(name, nb::cpp_function([op](const Array& a, nb::handle axis, nb::handle out, bool keepdims, nb::handle initial) {
      return reduce_call(op, a, axis, nb::none(), out, keepdims, nb::none(), initial);
    }, nb::scope(array), nb::name(name), nb::is_method(), nb::arg("axis").none() = nb::none(), nb::arg("out").none() = nb::none(),
       nb::arg("keepdims") = false, nb::arg("initial").none() = nb::none()));
  }
  for (const char* name : {"argmax", "argmin", "any", "all"}) {
    const std::string op = name;
    method(name, nb::cpp_function([op](const Array& a, nb::handle axis, nb::handle out, bool keepdims) {
      return reduce_call(op, a, axis, nb::none(), out, keepdims, nb::none());
    }, nb::scope(array), nb::name(name), nb::is_method(), nb::arg("axis").none() = nb::none(), nb::arg("out").none() = nb::none(),
       nb::arg("keepdims") = false));
  }
  method("cumsum", nb::cpp_function(&cumsum_call, nb::scope(array), nb::name("cumsum"), nb::is_method(),
                                    nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none()));
}

}  // namespace jiasu::py
