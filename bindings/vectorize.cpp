// @jiasu.vectorize and @jiasu.reduce: ops::UserFunction over a Python function's description (bindings/
// kernel_source.cpp), and the conversion of its operands (as the built-in operations convert theirs).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "ops/user_function.hpp"

namespace jiasu::py {
namespace {

class UserFunction {
 public:
  UserFunction(nb::handle description, int arity)
      : description(nb::borrow(description)), held(nb::steal(PyList_New(0))),
        function(function_source(description, held.ptr()), nb::cast<std::string>(description.attr("name")), arity) {}
  nb::object description;  // kept alive here for the resolver, which borrows it
  nb::object held;         // the descriptions of the device functions it calls (idem)
  ops::UserFunction function;
};

int user_function_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  UserFunction* f = nb::inst_ptr<UserFunction>(self);
  Py_VISIT(f->description.ptr());
  Py_VISIT(f->held.ptr());
  return 0;
}

int user_function_clear(PyObject*) { return 0; }  // the descriptions stay: the resolver borrows them

PyType_Slot user_function_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(user_function_traverse)},
                                     {Py_tp_clear, reinterpret_cast<void*>(user_function_clear)},
                                     {0, nullptr}};

nb::object call(UserFunction& f, nb::tuple args, nb::handle out) {
  const std::string& name = f.function.name();
  if (args.size() > 3)
    throw BadArgument(name + "() takes " + std::to_string(f.function.arity()) + " arguments (" +
                      std::to_string(args.size()) + " given)");
  ops::Operand inputs[3];
  std::optional<Array> held[3];
  int64_t work = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!operand_from(args[i], inputs[i], held[i]))
      throw BadArgument(name + " takes jiasu arrays and Python or NumPy scalars, not " + python_type_name(args[i]));
    if (inputs[i].array) work = std::max(work, inputs[i].array->size());
  }
  const Array* out_array = nullptr;
  if (!out.is_none()) {
    if (!nb::isinstance<Array>(out)) throw BadArgument("out must be a jiasu.Array, not " + python_type_name(out));
    out_array = nb::inst_ptr<Array>(out);
  }
  const int count = static_cast<int>(args.size());
  // The loop first, with the GIL: compiling it runs the front end, whose resolver calls into Python.
  const ops::CustomLoop& loop = f.function.loop_for(inputs, count, out_array);
  auto run = [&] {
    if (work < kReleaseGilElements) return ops::apply(loop, inputs, count, out_array);
    nb::gil_scoped_release unlocked;
    return ops::apply(loop, inputs, count, out_array);
  };
  Array result = run();
  return out_array ? nb::borrow(out) : nb::cast(std::move(result));
}

Array reduce(UserFunction& f, const Array& a, const std::vector<int64_t>& axes, bool keepdims, nb::handle init) {
  std::optional<ops::Scalar> initial;
  if (!init.is_none()) initial = number_from(init, f.function.name() + ": init");
  f.function.prepare_reduce(a.dtype(), !a.on_host(), initial);  // compiles with the GIL (see call)
  if (a.size() >= kReleaseGilElements) {
    nb::gil_scoped_release unlocked;
    return f.function.reduce(a, axes, keepdims, initial);
  }
  return f.function.reduce(a, axes, keepdims, initial);
}

}  // namespace

void bind_vectorize(nb::module_& m) {
  nb::class_<UserFunction>(m, "UserFunction", "A scalar Python function as an elementwise operation (@jiasu.vectorize).",
                           nb::type_slots(user_function_slots))
      .def(nb::init<nb::handle, int>(), nb::arg("description"), nb::arg("arity"))
      .def_prop_ro("name", [](UserFunction& f) { return f.function.name(); })
      .def_prop_ro("arity", [](UserFunction& f) { return f.function.arity(); })
      .def("__call__", &call, nb::arg("args"), nb::arg("out").none() = nb::none())
      .def("reduce", &reduce, nb::arg("a"), nb::arg("axes"), nb::arg("keepdims"), nb::arg("init").none())
      .def("source", [](UserFunction& f, const std::vector<nb::handle>& dtypes, bool cuda) {
        std::vector<DType> types;
        for (nb::handle d : dtypes) types.push_back(dtype_from_object(d));
        return f.function.source_for(types, cuda);
      }, nb::arg("dtypes"), nb::arg("cuda"));
}

}  // namespace jiasu::py
