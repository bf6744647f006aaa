// A Python function described to the C++ front end: its source text, file and line, and a resolver that
// describes the module-level names it uses (numbers, tuples, modules, dtypes, other device functions, exception
// classes and strings, the messages of the exceptions a kernel raises, enum classes and members).
#include <nanobind/stl/string.h>

#include <cerrno>

#include "common.hpp"
#include "frontend/check.hpp"
#include "toolchain/file_io.hpp"

namespace jiasu::py {
namespace {

// The files of a link= list (paths), read now: when the kernel is made, or when a compile resolves the external
// function that names them.
std::vector<fe::LinkedFile> linked_files(nb::handle paths) {
  std::vector<fe::LinkedFile> files;
  for (nb::handle path : paths) {
    fe::LinkedFile& file = files.emplace_back();
    file.path = nb::cast<std::string>(path);
    if (int error = read_regular_file(file.path, file.text)) {
      errno = error;
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, file.path.c_str());
      throw nb::python_error();
    }
  }
  return files;
}

// ("enum", name, identity, int_valued, [(member, value), ...]): an enum class (jiasu._kernel._enum_description).
std::shared_ptr<const fe::EnumClass> enum_class_from(nb::handle description) {
  auto cls = std::make_shared<fe::EnumClass>();
  nb::tuple t = nb::borrow<nb::tuple>(description);
  cls->name = nb::cast<std::string>(t[1]);
  cls->identity = nb::cast<uint64_t>(t[2]);
  cls->int_valued = nb::cast<bool>(t[3]);
  for (nb::handle member : t[4])
    cls->members.emplace_back(nb::cast<std::string>(member[0]), nb::cast<int64_t>(member[1]));
  return cls;
}

// The Python layer describes each global as a tuple: ("int", 3), ("module", "math"), ("function", f),
// ("builtin", "jiasu.grid"), ...
// `held`: the kernel's list of the device functions' descriptions (see function_source).
fe::GlobalValue global_from(nb::handle description, PyObject* held) {
  fe::GlobalValue g;
  nb::tuple t = nb::borrow<nb::tuple>(description);
  std::string kind = nb::cast<std::string>(t[0]);
  if (kind == "int") {
    g.kind = fe::GlobalValue::Int;
    if (!nb::try_cast(t[1], g.int_value)) {  // the front end says where it is used
      g.kind = fe::GlobalValue::Unsupported;
      g.name = "Python int too large for int64 (" + python_str(t[1]) + ")";
    }
  } else if (kind == "bool") {
    g.kind = fe::GlobalValue::Bool;
    g.int_value = nb::cast<bool>(t[1]);
  } else if (kind == "float") {
    g.kind = fe::GlobalValue::Float;
    g.float_value = nb::cast<double>(t[1]);
  } else if (kind == "tuple") {
    g.kind = fe::GlobalValue::Tuple;
    for (nb::handle item : t[1]) g.items.push_back(global_from(item, held));
  } else if (kind == "module") {
    g.kind = fe::GlobalValue::Module;
    g.name = nb::cast<std::string>(t[1]);
  } else if (kind == "dtype") {
    g.kind = fe::GlobalValue::DTypeValue;
    std::string name = nb::cast<std::string>(t[1]);
    try {
      g.dtype = dtype_from_name(name);
    } catch (const BadArgument&) {  // the front end says where it is used
      g.kind = fe::GlobalValue::Unsupported;
      g.name = "NumPy dtype '" + name + "', which jiasu arrays cannot hold";
    }
  } else if (kind == "function") {
    g.kind = fe::GlobalValue::Function;
    // Once each: every specialisation's compile asks for its callees again.
    int held_already = PySequence_Contains(held, t[1].ptr());
    if (held_already < 0 || (!held_already && PyList_Append(held, t[1].ptr()) != 0)) throw nb::python_error();
    g.function = function_source(t[1], held);
  } else if (kind == "array") {  // ("array", dtype name, shape, C-order bytes): a NumPy array global
    g.kind = fe::GlobalValue::ConstantArray;
    std::string name = nb::cast<std::string>(t[1]);
    try {
      g.dtype = dtype_from_name(name);
    } catch (const BadArgument&) {
      g.kind = fe::GlobalValue::Unsupported;
      g.name = "NumPy array of dtype '" + name + "', which kernels cannot hold";
      return g;
    }
    for (nb::handle extent : t[2]) g.shape.push_back(nb::cast<int64_t>(extent));
    char* bytes = nullptr;
    Py_ssize_t length = 0;
    if (PyBytes_AsStringAndSize(t[3].ptr(), &bytes, &length) != 0) throw nb::python_error();
    g.data.assign(bytes, static_cast<size_t>(length));
  } else if (kind == "builtin") {  // a kernel-language name (jiasu.grid) or an operator-module function
    g.kind = fe::GlobalValue::Builtin;
    g.name = nb::cast<std::string>(t[1]);
  } else if (kind == "string") {  // only ever an exception's message
    g.kind = fe::GlobalValue::String;
    g.name = nb::cast<std::string>(t[1]);
  } else if (kind == "exception") {  // ("exception", cls): a class a kernel can raise
    g.kind = fe::GlobalValue::ExceptionClass;
    g.name = nb::cast<std::string>(t[1].attr("__name__"));
    g.int_value = exception_class_handle(t[1]);
  } else if (kind == "external") {  // ("external", f): a cuda.declare_device function (jiasu._kernel.ExternalFunction)
    g.kind = fe::GlobalValue::External;
    auto f = std::make_shared<fe::ExternalFunction>();
    nb::handle declared = t[1];
    f->name = nb::cast<std::string>(declared.attr("name"));
    for (nb::handle param : declared.attr("params")) f->params.push_back(dtype_from_name(nb::cast<std::string>(param)));
    f->result = dtype_from_name(nb::cast<std::string>(declared.attr("result")));
    f->c_abi = nb::cast<std::string>(declared.attr("abi")) == "c";
    f->link = linked_files(declared.attr("link"));
    g.external = std::move(f);
  } else if (kind == "enum") {
    g.kind = fe::GlobalValue::Enum;
    g.enumeration = enum_class_from(description);
  } else if (kind == "enum_member") {  // ("enum_member", its class's description, its value in kernels)
    g.kind = fe::GlobalValue::EnumMember;
    g.enumeration = enum_class_from(t[1]);
    g.int_value = nb::cast<int64_t>(t[2]);
  } else if (kind == "unsupported") {
    g.kind = fe::GlobalValue::Unsupported;
    g.name = nb::cast<std::string>(t[1]);
  } else if (kind != "missing") {
    throw BadValue("internal: the resolver described a global as '" + kind + "'");
  }
  return g;
}

}  // namespace

// `description` has: source, file, first_line, identity, resolve(name) -> global description.
// Descriptions are borrowed: the kernel's own is KernelFunction::description, and those of the device
// functions it calls go into its `held` list. Both are where the garbage collector sees them, since each
// leads back to the kernel through its function's globals (a reference kept in C++ would hide that cycle
// and leak the kernel).
std::shared_ptr<const fe::FunctionSource> function_source(nb::handle description, PyObject* held) {
  auto source = std::make_shared<fe::FunctionSource>();
  source->source.text = nb::cast<std::string>(description.attr("source"));
  source->source.file = nb::cast<std::string>(description.attr("file"));
  source->source.first_line = nb::cast<int>(description.attr("first_line"));
  source->identity = nb::cast<std::string>(description.attr("identity"));
  source->link = linked_files(nb::getattr(description, "link", nb::tuple()));
  PyObject* borrowed = description.ptr();
  source->resolve = [borrowed, held](const std::string& name) {
    return global_from(nb::handle(borrowed).attr("resolve")(name), held);
  };
  return source;
}

}  // namespace jiasu::py
