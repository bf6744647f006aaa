#include "kernel_arguments.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "program/signature.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// A Python float, bool, int or complex: its bytes, dtype and kind in `a`; false for anything else. Python
// numbers are weak scalars (NEP 50), bool excepted.
bool python_number(PyObject* o, size_t index, const std::string& kernel, LaunchArgument& a) {
  if (PyFloat_CheckExact(o)) {
    a = LaunchArgument::scalar(PyFloat_AS_DOUBLE(o), DType::Float64, true);
    a.scalar_kind = kPythonFloat;
    return true;
  }
  if (PyComplex_CheckExact(o)) {
    const Py_complex c = PyComplex_AsCComplex(o);
    a = LaunchArgument::scalar(c, DType::Complex128, true);  // two doubles, real part first
    a.scalar_kind = kPythonComplex;
    return true;
  }
  if (PyBool_Check(o)) {
    a = LaunchArgument::scalar(static_cast<uint8_t>(o == Py_True), DType::Bool);
    a.scalar_kind = kPythonBool;
    return true;
  }
  if (PyLong_CheckExact(o)) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BadValue("argument " + std::to_string(index) + " of kernel '" + kernel + "' is an int too large for int64");
    }
    a = LaunchArgument::scalar(v, DType::Int64, true);
    a.scalar_kind = kPythonInt;
    return true;
  }
  return false;
}

// A tuple (or namedtuple) of scalars and of such tuples: packed as the kernel's struct of it.
LaunchArgument tuple_argument(PyObject* o, size_t index, const std::string& kernel) {
  std::vector<LaunchArgument> items(static_cast<size_t>(PyTuple_GET_SIZE(o)));
  for (size_t k = 0; k < items.size(); ++k) {
    PyObject* item = PyTuple_GET_ITEM(o, static_cast<Py_ssize_t>(k));
    if (!classify_scalar(item, index, kernel, items[k]))
      throw BadArgument("argument " + std::to_string(index) + " of kernel '" + kernel + "' is a tuple holding " +
                        python_type_name(nb::handle(item)) + ": tuples passed to kernels hold numbers and tuples of them");
  }
  std::vector<std::string> fields;  // a namedtuple's
  if (!PyTuple_CheckExact(o)) {
    nb::object names = nb::getattr(nb::handle(Py_TYPE(o)), "_fields", nb::none());
    if (!names.is_none())
      for (nb::handle name : names) fields.push_back(nb::cast<std::string>(nb::str(name)));
    if (fields.size() != items.size()) fields.clear();
  }
  try {
    return LaunchArgument::tuple(items, fields);
  } catch (const BadArgument& e) {
    throw BadArgument("argument " + std::to_string(index) + " of kernel '" + kernel + "': " + e.what());
  }
}

// An enum class as its members' launches see it, made on the first launch given one: its EnumClass and, for an
// enum not of ints, each member's value by the front end's rule (jiasu._kernel._enum_value).
struct EnumArguments {
  std::shared_ptr<const fe::EnumClass> enumeration;
  std::unordered_map<PyObject*, long long> values;  // member -> value; the class keeps its members alive
  nb::object watch;  // a weak reference to the class, whose callback drops this entry as the class dies
};

// The entry of enum class `cls` (made by EnumMeta), by its address: dropped as the class dies, before the address
// can be reused. Null when the class is no enum.Enum.
const EnumArguments* enum_arguments(PyTypeObject* cls) {
  static auto* classes = new std::unordered_map<PyTypeObject*, EnumArguments>();  // leaked: outlives teardown
  if (auto found = classes->find(cls); found != classes->end()) return &found->second;
  // Kept: the enum module is never unloaded.
  static auto* enum_base =
      reinterpret_cast<PyTypeObject*>(nb::object(nb::module_::import_("enum").attr("Enum")).release().ptr());
  if (!PyType_IsSubtype(cls, enum_base)) return nullptr;
  nb::handle type(reinterpret_cast<PyObject*>(cls));
  auto enumeration = std::make_shared<fe::EnumClass>();
  enumeration->name = nb::cast<std::string>(type.attr("__qualname__"));
  enumeration->identity = reinterpret_cast<uintptr_t>(cls);
  enumeration->int_valued = PyType_IsSubtype(cls, &PyLong_Type);
  EnumArguments entry;
  if (!enumeration->int_valued) {
    nb::object value_of = nb::module_::import_("jiasu._kernel").attr("_enum_value");
    for (nb::handle member : type) entry.values.emplace(member.ptr(), nb::cast<long long>(value_of(member)));
  }
  entry.enumeration = std::move(enumeration);
  nb::object forget = nb::cpp_function([cls](nb::handle) { classes->erase(cls); });
  entry.watch = nb::steal(PyWeakref_NewRef(type.ptr(), forget.ptr()));
  if (!entry.watch) throw nb::python_error();
  return &classes->emplace(cls, std::move(entry)).first->second;
}

// An enum member (Python's enum.Enum, IntEnum, ...): an int64 of its class, valued as the front end values the
// class's members. False for anything else.
bool enum_member(PyObject* o, size_t index, const std::string& kernel, LaunchArgument& a) {
  // EnumMeta is enum.EnumType's other name (since Python 3.11); kept, as the enum module is never unloaded.
  static auto* enum_meta =
      reinterpret_cast<PyTypeObject*>(nb::object(nb::module_::import_("enum").attr("EnumMeta")).release().ptr());
  // An enum member's class is made by EnumMeta: any other object (a device array, on every launch) is told
  // apart by its metaclass alone.
  if (!PyType_IsSubtype(Py_TYPE(Py_TYPE(o)), enum_meta)) return false;
  const EnumArguments* cls = enum_arguments(Py_TYPE(o));
  if (!cls) return false;
  long long value;
  if (cls->enumeration->int_valued) {
    value = PyLong_AsLongLong(o);
    if (value == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BadValue("argument " + std::to_string(index) + " of kernel '" + kernel + "' is an IntEnum member too "
                     "large for int64");
    }
  } else if (auto found = cls->values.find(o); found != cls->values.end()) {
    value = found->second;
  } else {  // not one of the class's listed members (a Flag's combination): the rule says what it is
    value = nb::cast<long long>(nb::module_::import_("jiasu._kernel").attr("_enum_value")(nb::handle(o)));
  }
  a = LaunchArgument::scalar(value, DType::Int64, cls->enumeration->int_valued);
  a.enumeration = cls->enumeration;
  return true;
}

}  // namespace

bool is_python_number(PyObject* o) {
  return PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) || PyComplex_CheckExact(o);
}

bool classify_scalar(PyObject* o, size_t index, const std::string& kernel, LaunchArgument& a) {
  if (python_number(o, index, kernel, a)) return true;
  if (PyTuple_Check(o)) {
    a = tuple_argument(o, index, kernel);
    return true;
  }
  if (Py_TYPE(o) == array_type || (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type()))) return false;
  if (const NumpyScalarType* scalar = numpy_scalar_type(o)) {
    // A type jiasu has no dtype for: asking again raises the reason.
    a.dtype = scalar->dtype ? *scalar->dtype : dtype_from_object(nb::handle(o).attr("dtype"));
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    a.size = static_cast<uint8_t>(std::min<size_t>(view.len, sizeof a.bytes));
    std::memcpy(a.bytes, view.buf, a.size);
    PyBuffer_Release(&view);
    if (scalar->static_type) {  // no Python code serves its buffer: the repeat launch may read it
      a.scalar_kind = kNumpyScalar;
      a.scalar_type = scalar->type;
    }
    return true;
  }
  return enum_member(o, index, kernel, a);
}

bool in_device_memory(PyObject* o) {
  return Py_TYPE(o) != numpy_ndarray_type() && nb::hasattr(nb::handle(o), "__cuda_array_interface__");
}

bool record_argument(nb::handle value, size_t index, const std::string& kernel, LaunchArgument& a,
                     std::deque<Array>& temporaries) {
  std::optional<HostRecords> records;
  try {
    records = host_records_from(value);
  } catch (const BadArgument& e) {
    throw BadArgument("argument " + std::to_string(index) + " of kernel '" + kernel + "': " + e.what());
  }
  if (!records) return false;
  temporaries.push_back(std::move(records->memory));
  a.array = &temporaries.back();
  a.record = std::move(records->layout);
  a.single_record = records->single_record;
  a.read_only = records->read_only;
  return true;
}

void flush_python_stdout() {
  PyObject* out = PySys_GetObject("stdout");  // borrowed; None or absent without a console
  if (!out || out == Py_None) return;
  PyObject* done = PyObject_CallMethod(out, "flush", nullptr);
  if (!done) throw nb::python_error();
  Py_DECREF(done);
}

void append_type_key(std::string& key, nb::handle value, size_t index, const std::string& kernel,
                     const KernelLauncher& launcher) {
  PyObject* o = value.ptr();
  LaunchArgument scalar;
  std::deque<Array> records;
  try {
    if (classify_scalar(o, index, kernel, scalar)) {
      launcher.apply_declared_type(index, scalar);
      return append_argument_key(key, scalar);
    }
  } catch (const BadArgument&) {
    if (record_argument(value, index, kernel, scalar, records)) return append_argument_key(key, scalar);
    throw;
  }
  auto described = [&]() -> Array {
    if (Py_TYPE(o) == array_type) return *nb::inst_ptr<Array>(value);
    bool read_only;  // a NumPy array by its own layout (a GPU launch stages a C-contiguous copy)
    if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type())) return host_array_from(value, read_only);
    return device_array_from(value);
  };
  try {
    const Array a = described();
    append_array_key(key, a.dtype(), static_cast<int>(a.ndim()), a.c_contiguous());
  } catch (const BadArgument& e) {
    if (record_argument(value, index, kernel, scalar, records)) return append_argument_key(key, scalar);
    throw BadArgument("argument " + std::to_string(index) + " of kernel '" + kernel + "': " + e.what());
  }
}

}  // namespace jiasu::py
