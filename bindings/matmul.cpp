// jiasu.matmul / jiasu.dot, the @ operators and Array.dot: conversion, and on the CPU device NumPy's own
// product on views of the arrays (NumPy's BLAS is as fast as anything jiasu could run there).
#include <nanobind/stl/string.h>

#include "common.hpp"
#include "ops/matmul.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

const Array& operand(nb::handle x, const char* op) {
  if (!nb::isinstance<Array>(x))
    throw BadArgument(std::string(op) + " takes jiasu.Array operands, not " + python_type_name(x) +
                      "; convert with jiasu.asarray(x)");
  return *nb::inst_ptr<Array>(x);
}

// A NumPy array over a CPU array's memory, in place (it holds the memory while it lives). bfloat16 goes
// through a uint16 view, since the buffer protocol has no bfloat16.
nb::object numpy_view(const Array& a) {
  if (a.dtype() == DType::BFloat16)
    return numpy().attr("asarray")(nb::cast(Array(DType::UInt16, a.layout(), a.memory())))
        .attr("view")(numpy_dtype(DType::BFloat16));
  return numpy().attr("asarray")(nb::cast(a));
}

// The core's host product (ops::set_host_product); core code may call it without the GIL.
void run_on_cpu(const ops::Product& p) {
  nb::gil_scoped_acquire locked;
  nb::object a = numpy_view(p.a), b = numpy_view(p.b), out = numpy_view(p.result);
  if (!p.dot) {
    numpy().attr("matmul")(a, b, nb::arg("out") = out);
  } else if (p.result.c_contiguous()) {  // np.dot writes only C-contiguous arrays of its result's dtype
    numpy().attr("dot")(a, b, nb::arg("out") = out);
  } else {
    numpy().attr("copyto")(out, numpy().attr("dot")(a, b));
  }
}

Array computed(const ops::Product& p) {
  if (p.result.on_host()) return ops::compute(p);
  nb::gil_scoped_release unlocked;
  return ops::compute(p);
}

const Array* optional_out(nb::handle out, const char* op) {
  return out.is_none() ? nullptr : &operand(out, op);
}

// The result: `out` itself when given, as NumPy returns it.
nb::object matmul(nb::handle a, nb::handle b, nb::handle out) {
  Array result = computed(ops::prepare_matmul(operand(a, "matmul"), operand(b, "matmul"), optional_out(out, "matmul")));
  return out.is_none() ? nb::cast(std::move(result)) : nb::borrow(out);
}

nb::object dot(nb::handle a, nb::handle b, nb::handle out) {
  Array result = computed(ops::prepare_dot(operand(a, "dot"), operand(b, "dot"), optional_out(out, "dot")));
  return out.is_none() ? nb::cast(std::move(result)) : nb::borrow(out);
}

// The binary operators give other types their turn (NotImplemented) instead of failing.
nb::object binary(nb::handle a, nb::handle b, nb::handle out) {
  if (!nb::isinstance<Array>(a) || !nb::isinstance<Array>(b)) return nb::borrow(Py_NotImplemented);
  return matmul(a, b, out);
}

}  // namespace

void bind_matmul(nb::module_& m) {
  ops::set_host_product(&run_on_cpu);
  m.def("matmul", &matmul, nb::arg("a"), nb::arg("b"), nb::arg("out").none() = nb::none());
  m.def("dot", &dot, nb::arg("a"), nb::arg("b"), nb::arg("out").none() = nb::none());
  m.def("set_matmul_precision", &ops::set_matmul_precision, nb::arg("precision"));
  m.def("get_matmul_precision", &ops::matmul_precision);

  nb::handle array = nb::type<Array>();
  array.attr("__matmul__") = nb::cpp_function(
      [](nb::handle self, nb::handle other) { return binary(self, other, nb::none()); }, nb::is_method(),
      nb::arg("other").none());
  array.attr("__rmatmul__") = nb::cpp_function(
      [](nb::handle self, nb::handle other) { return binary(other, self, nb::none()); }, nb::is_method(),
      nb::arg("other").none());
  // a @= b writes the product into a, which must keep its shape and dtype (as NumPy).
  array.attr("__imatmul__") = nb::cpp_function(
      [](nb::handle self, nb::handle other) -> nb::object {
        if (!nb::isinstance<Array>(other)) return nb::borrow(Py_NotImplemented);
        matmul(self, other, self);
        return nb::borrow(self);
      },
      nb::is_method(), nb::arg("other").none());
  array.attr("dot") = nb::cpp_function(
      [](nb::handle self, nb::handle other, nb::handle out) { return dot(self, other, out); }, nb::is_method(),
      nb::arg("b"), nb::arg("out").none() = nb::none(), "np.dot(self, b, out): see jiasu.dot.");
}

}  // namespace jiasu::py
