// The elementwise operations' Python face: jiasu.add & co. and Array's operators (+ - * / // % ** comparisons
// & | ^ ~ << >> unary - + abs, reflected and in-place forms); Array's astype, copy and a[k] = v, which go
// through the engine too, are in array.cpp. Conversion only: the core (ops/elementwise.hpp) resolves types,
// broadcasts and computes.
#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "common.hpp"
#include "ops/elementwise.hpp"
#include "runtime/backend.hpp"

namespace jiasu::py {
namespace {

using ops::Operand;
using ops::Ufunc;

// A Python int as a weak scalar (NEP 50), whatever its size.
ops::Scalar weak_int(PyObject* o) {
  ops::Scalar s;
  s.dtype = DType::Int64;
  s.weak = true;
  int overflow = 0;
  s.i = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (s.i == -1 && PyErr_Occurred()) throw nb::python_error();
  if (!overflow) return s;
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      s.u = u;
      s.beyond_int64 = true;
      return s;
    }
    PyErr_Clear();
  }
  s.beyond_uint64 = true;
  s.f = PyLong_AsDouble(o);
  if (s.f == -1.0 && PyErr_Occurred()) {  // beyond even a double: an infinity of its sign
    PyErr_Clear();
    s.f = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
  }
  return s;
}

// A NumPy scalar: strong, of its own dtype.
ops::Scalar numpy_scalar(nb::handle o, DType dtype) {
  ops::Scalar s;
  s.dtype = dtype;
  switch (category(dtype)) {
    case Category::Bool: s.b = PyObject_IsTrue(o.ptr()) == 1; break;
    case Category::Integer: {
      nb::object value = nb::steal(PyNumber_Long(o.ptr()));
      if (!value.is_valid()) throw nb::python_error();
      if (info(dtype).kind == DTypeKind::Unsigned) s.u = PyLong_AsUnsignedLongLong(value.ptr());
      else s.i = PyLong_AsLongLong(value.ptr());
      break;
    }
    case Category::Float: s.f = PyFloat_AsDouble(o.ptr()); break;
    case Category::Complex: {
      const Py_complex c = PyComplex_AsCComplex(o.ptr());
      s.f = c.real;
      s.imag = c.imag;
      break;
    }
  }
  if (PyErr_Occurred()) throw nb::python_error();
  return s;
}

}  // namespace

// `value` as an operand; false when it is no kind of operand (operators then return NotImplemented).
// `array` holds a converted array for as long as the operand is used.
bool operand_from(nb::handle value, Operand& operand, std::optional<Array>& array) {
  PyObject* o = value.ptr();
  if (Py_TYPE(o) == array_type || nb::isinstance<Array>(value)) {
    operand.array = nb::inst_ptr<Array>(value);
    return true;
  }
  if (PyBool_Check(o)) {
    operand.scalar.dtype = DType::Bool;
    operand.scalar.b = o == Py_True;
    return true;
  }
  if (PyLong_Check(o)) {
    operand.scalar = weak_int(o);
    return true;
  }
  if (PyFloat_Check(o) && (PyFloat_CheckExact(o) || !numpy_scalar_type(o))) {  // numpy.float64 is strong
    operand.scalar.dtype = DType::Float64;
    operand.scalar.weak = true;
    operand.scalar.f = PyFloat_AS_DOUBLE(o);
    return true;
  }
  if (PyComplex_Check(o) && (PyComplex_CheckExact(o) || !numpy_scalar_type(o))) {  // numpy.complex128 is strong
    operand.scalar.dtype = DType::Complex128;
    operand.scalar.weak = true;
    operand.scalar.f = PyComplex_RealAsDouble(o);
    operand.scalar.imag = PyComplex_ImagAsDouble(o);
    return true;
  }
  if (const NumpyScalarType* scalar = numpy_scalar_type(o)) {
    if (!scalar->dtype) throw BadArgument("jiasu has no dtype for " + scalar->what);
    operand.scalar = numpy_scalar(value, *scalar->dtype);
    return true;
  }
  if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type()))
    throw BadArgument("jiasu's operations take jiasu arrays and Python or NumPy scalars, not a numpy.ndarray "
                      "(host memory); copy it with jiasu.asarray(x) first");
  if (is_device_object(value)) {
    array = device_array_from(value);
    operand.array = &*array;
    return true;
  }
  return false;
}

ops::Scalar number_from(nb::handle value, const std::string& what) {
  Operand operand;
  std::optional<Array> held;
  if (!operand_from(value, operand, held) || operand.array)
    throw BadArgument(what + " must be a Python or NumPy number, not " + python_type_name(value));
  return operand.scalar;
}

namespace {

int64_t work_size(const Operand* inputs, int count) {
  int64_t n = 0;
  for (int i = 0; i < count; ++i)
    if (inputs[i].array) n = std::max(n, inputs[i].array->size());
  return n;
}

Array run(Ufunc op, const Operand* inputs, int count, const Array* out) {
  if (work_size(inputs, count) >= kReleaseGilElements) {
    nb::gil_scoped_release unlocked;
    return ops::apply(op, inputs, count, out);
  }
  return ops::apply(op, inputs, count, out);
}

// jiasu.NAME(x1, ..., out=None).
nb::object call(Ufunc op, std::initializer_list<nb::handle> args, nb::handle out) {
  Operand inputs[3];
  std::optional<Array> held[3];
  int count = 0;
  for (nb::handle arg : args) {
    if (!operand_from(arg, inputs[count], held[count]))
      throw BadArgument(ops::qualified_name(op) + " takes jiasu arrays and Python or NumPy "
                        "scalars, not " + python_type_name(arg));
    ++count;
  }
  if (out.is_none()) {
    if (!inputs[0].array && (count < 2 || !inputs[1].array) && (count < 3 || !inputs[2].array)) {
      // Python scalars alone: a 0-d array on the active backend's device, as NumPy gives a NumPy scalar.
      Array zero_d = Array::empty({}, ops::resolve_types(op, inputs, count).result, default_device());
      return nb::cast(run(op, inputs, count, &zero_d));
    }
    return nb::cast(run(op, inputs, count, nullptr));
  }
  if (!nb::isinstance<Array>(out)) throw BadArgument("out must be a jiasu.Array, not " + python_type_name(out));
  run(op, inputs, count, nb::inst_ptr<Array>(out));
  return nb::borrow(out);
}

// An operator: NotImplemented for operands it does not know, so that Python tries the other side.
nb::object binary_operator(Ufunc op, nb::handle left, nb::handle right, bool in_place) {
  Operand inputs[2];
  std::optional<Array> held[2];
  if (!operand_from(left, inputs[0], held[0]) || !operand_from(right, inputs[1], held[1]))
    return nb::borrow(Py_NotImplemented);
  if (in_place) {
    const Array* self = inputs[0].array;
    run(op, inputs, 2, self);
    return nb::borrow(left);
  }
  return nb::cast(run(op, inputs, 2, nullptr));
}

void set_method(nb::handle type, const char* name, nb::object function) { nb::setattr(type, name, function); }

template <typename F, typename... Extra>
void method(nb::handle type, const char* name, F&& f, const Extra&... extra) {
  set_method(type, name, nb::cpp_function(std::forward<F>(f), nb::is_method(), nb::name(name), extra...));
}

void bind_operators(nb::handle type) {
  struct Binary {
    Ufunc op;
    const char *name, *reflected, *in_place;
  };
  static const Binary kBinary[] = {
      {Ufunc::Add, "__add__", "__radd__", "__iadd__"},
      {Ufunc::Subtract, "__sub__", "__rsub__", "__isub__"},
      {Ufunc::Multiply, "__mul__", "__rmul__", "__imul__"},
      {Ufunc::Divide, "__truediv__", "__rtruediv__", "__itruediv__"},
      {Ufunc::FloorDivide, "__floordiv__", "__rfloordiv__", "__ifloordiv__"},
      {Ufunc::Mod, "__mod__", "__rmod__", "__imod__"},
      {Ufunc::BitwiseAnd, "__and__", "__rand__", "__iand__"},
      {Ufunc::BitwiseOr, "__or__", "__ror__", "__ior__"},
      {Ufunc::BitwiseXor, "__xor__", "__rxor__", "__ixor__"},
      {Ufunc::LeftShift, "__lshift__", "__rlshift__", "__ilshift__"},
      {Ufunc::RightShift, "__rshift__", "__rrshift__", "__irshift__"},
      {Ufunc::Equal, "__eq__", nullptr, nullptr},
      {Ufunc::NotEqual, "__ne__", nullptr, nullptr},
      {Ufunc::Less, "__lt__", nullptr, nullptr},
      {Ufunc::LessEqual, "__le__", nullptr, nullptr},
      {Ufunc::Greater, "__gt__", nullptr, nullptr},
      {Ufunc::GreaterEqual, "__ge__", nullptr, nullptr},
  };
  for (const Binary& b : kBinary) {
    const Ufunc op = b.op;
    const auto other = nb::arg("other").none();
    method(type, b.name, [op](nb::handle self, nb::handle x) { return binary_operator(op, self, x, false); }, other);
    if (b.reflected)
      method(type, b.reflected, [op](nb::handle self, nb::handle x) { return binary_operator(op, x, self, false); }, other);
    if (b.in_place)
      method(type, b.in_place, [op](nb::handle self, nb::handle x) { return binary_operator(op, self, x, true); }, other);
  }
  // ** takes Python's optional third argument, which NumPy arrays refuse too.
  method(type, "__pow__", [](nb::handle self, nb::handle other, nb::handle modulo) {
    if (!modulo.is_none()) throw BadArgument("pow() with a modulus is not supported for jiasu arrays");
    return binary_operator(Ufunc::Power, self, other, false);
  }, nb::arg("other").none(), nb::arg("modulo").none() = nb::none());
  method(type, "__rpow__", [](nb::handle self, nb::handle other, nb::handle) {
    return binary_operator(Ufunc::Power, other, self, false);
  }, nb::arg("other").none(), nb::arg("modulo").none() = nb::none());
  method(type, "__ipow__", [](nb::handle self, nb::handle other) { return binary_operator(Ufunc::Power, self, other, true); },
         nb::arg("other").none());
  struct Unary {
    Ufunc op;
    const char* name;
  };
  static const Unary kUnary[] = {{Ufunc::Negative, "__neg__"}, {Ufunc::Positive, "__pos__"},
                                 {Ufunc::Absolute, "__abs__"}, {Ufunc::Invert, "__invert__"}};
  for (const Unary& u : kUnary) {
    const Ufunc op = u.op;
    method(type, u.name, [op](const Array& self) {
      Operand in;
      in.array = &self;
      return run(op, &in, 1, nullptr);
    });
  }
  // Hashing goes with identity-based equality, which __eq__ replaces (as for NumPy arrays).
  nb::setattr(type, "__hash__", nb::none());
}

}  // namespace

void bind_ops(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ops::ScalarOverflow& e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    }
  });
  static std::string docs[ops::kUfuncCount];  // nanobind keeps the pointers
  for (int i = 0; i < ops::kUfuncCount; ++i) {
    const ops::UfuncInfo& u = ops::info(static_cast<Ufunc>(i));
    const Ufunc op = u.id;
    if (op == Ufunc::Copy || u.rule == ops::TypeRule::Activation) continue;  // jiasu.nn's: bindings/nn.cpp
    docs[i] = std::string("numpy.") + u.name + " on jiasu arrays (and Python or NumPy scalars), on their device; "
              "NumPy's types and broadcasting, out= of the broadcast shape (docs/arrays.md).";
    const char* doc = docs[i].c_str();
    if (u.arity == 1)
      m.def(u.name, [op](nb::handle x, nb::handle out) { return call(op, {x}, out); }, nb::arg("x"),
            nb::arg("out").none() = nb::none(), doc);
    else if (u.arity == 2)
      m.def(u.name, [op](nb::handle x1, nb::handle x2, nb::handle out) { return call(op, {x1, x2}, out); },
            nb::arg("x1"), nb::arg("x2"), nb::arg("out").none() = nb::none(), doc);
    else if (op == Ufunc::Where)
      m.def(u.name, [op](nb::handle a, nb::handle b, nb::handle c, nb::handle out) { return call(op, {a, b, c}, out); },
            nb::arg("condition"), nb::arg("x"), nb::arg("y"), nb::arg("out").none() = nb::none(), doc);
    else
      m.def(u.name, [op](nb::handle a, nb::handle b, nb::handle c, nb::handle out) { return call(op, {a, b, c}, out); },
            nb::arg("a"), nb::arg("a_min"), nb::arg("a_max"), nb::arg("out").none() = nb::none(), doc);
  }
  nb::handle type = nb::type<Array>();
  bind_operators(type);
}

}  // namespace jiasu::py
