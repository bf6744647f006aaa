// Translates the core's exception hierarchy into the Python classes defined in jiasu/_errors.py.
#include "common.hpp"

#include "frontend/source.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// The Python exception classes, registered by jiasu/__init__.py before anything can raise.
nb::dict& error_types() {
  static nb::dict* types = new nb::dict();  // leaked on purpose: outlives interpreter teardown order
  return *types;
}

// The exception classes kernels raise, each under the handle the front end saw (its index): kept alive for good,
// as the classes are module-level ones.
std::vector<PyObject*>& exception_classes() {
  static auto* classes = new std::vector<PyObject*>();  // leaked on purpose, as error_types()
  return *classes;
}

void raise(const char* kind, const char* message, nb::handle extra_name = {}, nb::handle extra = {},
           nb::handle extra_name2 = {}, nb::handle extra2 = {}) {
  nb::object type = error_types().contains(kind) ? nb::object(error_types()[kind])
                                                 : nb::borrow(PyExc_RuntimeError);
  nb::object error = type(nb::str(message));
  if (extra_name) nb::setattr(error, extra_name, extra);
  if (extra_name2) nb::setattr(error, extra_name2, extra2);
  PyErr_SetObject(type.ptr(), error.ptr());
}

void translate(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const CudaError& e) {
    const char* kind = dynamic_cast<const OutOfMemoryError*>(&e)    ? "CudaOutOfMemoryError"
                       : dynamic_cast<const LaunchError*>(&e)       ? "LaunchError"
                       : dynamic_cast<const InvalidArrayError*>(&e) ? "InvalidArrayError"
                                                                    : "CudaError";
    raise(kind, e.what(), nb::str("name"), nb::str(e.name().c_str()), nb::str("code"), nb::int_(e.code()));
  } catch (const fe::CompileError& e) {
    nb::object type = error_types()["CompileError"];
    nb::object error = type(nb::str(e.what()));
    nb::setattr(error, "file", nb::str(e.file().c_str()));
    nb::setattr(error, "line", nb::int_(e.line()));
    nb::setattr(error, "column", nb::int_(e.column()));
    nb::setattr(error, "reason", nb::str(e.message().c_str()));
    PyErr_SetObject(type.ptr(), error.ptr());
  } catch (const NvrtcError& e) {
    raise("NvrtcError", e.what(), nb::str("log"), nb::str(e.log().c_str()));
  } catch (const DistributedError& e) {
    const char* kind = dynamic_cast<const DistributedTimeout*>(&e) ? "DistributedTimeoutError" : "DistributedError";
    raise(kind, e.what(), nb::str("code"), nb::int_(e.code()));
  } catch (const LibraryNotFound& e) {
    raise("LibraryNotFoundError", e.what());
  } catch (const nb::cast_error&) {
    PyErr_SetString(PyExc_TypeError, "an argument has the wrong type (or is out of range) for this jiasu call");
  } catch (const BadArgument& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const BadValue& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const AxisError& e) {
    nb::object type = nb::module_::import_("numpy.exceptions").attr("AxisError");
    PyErr_SetObject(type.ptr(), type(nb::str(e.what())).ptr());
  } catch (const OutOfRange& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const DivisionByZero& e) {
    PyErr_SetString(PyExc_ZeroDivisionError, e.what());
  } catch (const KernelRaised& e) {
    const auto& classes = exception_classes();
    nb::handle type = e.handle() >= 0 && e.handle() < static_cast<int64_t>(classes.size())
                          ? nb::handle(classes[static_cast<size_t>(e.handle())])
                          : nb::handle(PyExc_RuntimeError);
    PyErr_SetObject(type.ptr(), type(nb::str(e.what())).ptr());
  } catch (const Interrupted& e) {
    // Python's own SIGINT handler decides what Ctrl-C raises (KeyboardInterrupt unless replaced); off the main
    // thread, or when it raised nothing, the interrupted call still fails.
    if (PyErr_CheckSignals() == 0) PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  } catch (const Error& e) {
    raise("JiasuError", e.what());
  }
}

}  // namespace

int64_t exception_class_handle(nb::handle type) {
  auto& classes = exception_classes();
  for (size_t i = 0; i < classes.size(); ++i)
    if (classes[i] == type.ptr()) return static_cast<int64_t>(i);
  classes.push_back(nb::borrow(type).release().ptr());
  return static_cast<int64_t>(classes.size() - 1);
}

// Translating must not throw out of a raw slot (that would abort the interpreter): a failure to build the
// Python exception (a stray pending error, memory) is raised instead.
void translate_or_raise_why_not(const std::exception_ptr& error) {
  try {
    translate(error, nullptr);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

void set_python_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const Error&) {
    translate_or_raise_why_not(std::current_exception());
  } catch (const nb::cast_error&) {
    translate_or_raise_why_not(std::current_exception());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void bind_errors(nb::module_& m) {
  nb::register_exception_translator(translate);
  m.def("_register_errors", [](nb::dict types) { error_types().update(types); });
}

}  // namespace jiasu::py
