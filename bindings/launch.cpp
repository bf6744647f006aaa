// RawKernel, SourceModule and the launch path: Python arguments are classified and packed in C++ so
// that a launch costs little more than cuLaunchKernel itself.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <structmember.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <deque>
#include <optional>
#include <utility>

#include "common.hpp"
#include "program/source_module.hpp"
#include "runtime/backend.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// An attribute of NumPy if NumPy is loaded. Without NumPy loaded no argument can be a NumPy object, and
// importing it here would cost every `import jiasu` its load time.
PyObject* loaded_numpy_attribute(const char* name) {
  PyObject* numpy = PyImport_GetModule(nb::str("numpy").ptr());  // new reference, or NULL when not loaded
  PyObject* value = numpy ? PyObject_GetAttrString(numpy, name) : nullptr;
  Py_XDECREF(numpy);
  PyErr_Clear();
  return value;
}

}  // namespace

PyObject* numpy_generic() {
  static PyObject* generic = nullptr;
  if (!generic) generic = loaded_numpy_attribute("generic");
  return generic;
}

PyTypeObject* numpy_ndarray_type() {
  static PyTypeObject* ndarray = nullptr;
  if (!ndarray) ndarray = reinterpret_cast<PyTypeObject*>(loaded_numpy_attribute("ndarray"));
  return ndarray;
}

const NumpyScalarType* numpy_scalar_type(PyObject* o) {
  static auto* known = new std::deque<NumpyScalarType>();  // leaked: outlives teardown; static types are immortal
  PyTypeObject* type = Py_TYPE(o);
  for (const NumpyScalarType& t : *known)
    if (t.type == type) return &t;
  auto* generic = reinterpret_cast<PyTypeObject*>(numpy_generic());
  if (!generic || !PyObject_TypeCheck(o, generic)) return nullptr;
  NumpyScalarType t{type, "", !(type->tp_flags & Py_TPFLAGS_HEAPTYPE), std::nullopt};
  t.what = t.static_type ? std::string("a ") + type->tp_name : "a " + python_type_name(o);  // "a numpy.int32"
  try {
    t.dtype = dtype_from_object(nb::handle(o).attr("dtype"));
  } catch (const std::exception&) {  // complex, datetime, ...: passed as raw bytes, refused by Python kernels
  }
  if (t.static_type) return &known->emplace_back(std::move(t));
  static thread_local NumpyScalarType made_in_python;  // not cached: such a type may be freed
  made_in_python = std::move(t);
  return &made_in_python;
}

Dim3 dim3_from(nb::handle value, const char* what) {
  unsigned v[3] = {1, 1, 1};
  auto one = [&](PyObject* item, int i) {
    if (PyLong_CheckExact(item)) {  // the launch path: a small positive int
      long x = PyLong_AsLong(item);
      if (x >= 1 && static_cast<unsigned long>(x) <= UINT_MAX) {
        v[i] = static_cast<unsigned>(x);
        return;
      }
      if (x == -1) PyErr_Clear();  // beyond long: explained below
    }
    if (!PyIndex_Check(item) || PyBool_Check(item))
      throw BadArgument(std::string(what) + " must be an int or a tuple of up to 3 ints, not " + python_type_name(item));
    nb::object value = nb::steal(PyNumber_Index(item));  // an int, however large
    if (!value.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow || x < 1 || x > UINT_MAX)
      throw LaunchError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                        std::string(what) + " dimensions must be between 1 and " + std::to_string(UINT_MAX) +
                            ", not " + python_str(value));
    v[i] = static_cast<unsigned>(x);
  };
  PyObject* o = value.ptr();
  if (PyTuple_CheckExact(o) && PyTuple_GET_SIZE(o) >= 1 && PyTuple_GET_SIZE(o) <= 3) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i) one(PyTuple_GET_ITEM(o, i), static_cast<int>(i));
  } else if (PyTuple_Check(o) || PyList_Check(o)) {
    nb::sequence seq = nb::borrow<nb::sequence>(value);
    size_t n = nb::len(seq);
    if (n < 1 || n > 3) throw BadArgument(std::string(what) + " must have 1 to 3 dimensions");
    for (size_t i = 0; i < n; ++i) one(nb::object(seq[i]).ptr(), static_cast<int>(i));
  } else {
    one(o, 0);
  }
  return {v[0], v[1], v[2]};
}

size_t shared_bytes_from(nb::handle value, const char* what) {
  PyObject* o = value.ptr();
  if (!PyLong_Check(o) || PyBool_Check(o))
    throw BadArgument(std::string(what) + " must be an int (bytes), not " + python_type_name(o));
  int overflow = 0;
  const long long bytes = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (!overflow && bytes >= 0) return static_cast<size_t>(bytes);
  if (overflow > 0)
    throw BadValue(std::string(what) + "=" + python_str(value) + " bytes is more shared memory than any GPU has");
  throw BadValue(std::string(what) + " must be >= 0, not " + python_str(value));
}

nb::dict attributes(const Kernel& kernel) {
  const KernelAttributes& a = kernel.attributes();
  nb::dict d;
  d["registers"] = a.registers;
  d["local_bytes"] = a.local_bytes;
  d["static_shared_bytes"] = a.static_shared_bytes;
  d["const_bytes"] = a.const_bytes;
  d["max_threads_per_block"] = a.max_threads_per_block;
  return d;
}

void require_visible_gpu(const std::string& what) {
  if (device_count() > 0) return;
  std::string reason = "none is visible";
  try {
    cu::driver();
  } catch (const Error& e) {
    reason = e.what();
  }
  throw CudaError(cu::CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", what + " (no GPU: " + reason + ")");
}

namespace {

// CUDA C++ (RawKernel, SourceModule) runs on GPUs only: not on a machine without one, nor on the CPU backend.
void require_cuda_backend() {
  const char* python_kernels = "; kernels written in Python (@jiasu.kernel) also run on the CPU backend";
  require_visible_gpu(std::string("CUDA C++ kernels (RawKernel, SourceModule) need a GPU") + python_kernels);
  if (active_backend() == Backend::Cpu)
    throw CudaError(cu::CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
                    std::string("CUDA C++ kernels (RawKernel, SourceModule) need a GPU, but the active backend is "
                                "'cpu' (jiasu.set_backend('cuda') selects the GPU)") + python_kernels);
}

void add_pointer(LaunchArgs& args, const Array& array, const Kernel& kernel) {
  if (array.on_host())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                            "argument " + std::to_string(args.count()) + " is a CPU array but kernel '" + kernel.name() +
                                "' runs on GPU " + std::to_string(kernel.device()) +
                                "; copy it with jiasu.asarray(x, device='cuda')");
  if (array.device() != kernel.device())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                            "argument " + std::to_string(args.count()) + " lives on device " +
                                std::to_string(array.device()) + " but kernel '" + kernel.name() +
                                "' runs on device " + std::to_string(kernel.device()));
  cu::CUdeviceptr ptr = array.data();  // rejects a freed array, even an empty one
  if (!array.size()) ptr = 0;
  std::memcpy(args.slot(sizeof ptr, sizeof ptr, "a device array"), &ptr, sizeof ptr);
}

// Python int and float take the size of the parameter they fill (int32 for a 4-byte one, ...), so
// `n` can be passed as a plain int; without a known layout they are int64 and double, as in CuPy.
void add_python_number(LaunchArgs& args, nb::handle value) {
  size_t want = args.next_size();
  if (PyFloat_CheckExact(value.ptr())) {
    double v = PyFloat_AS_DOUBLE(value.ptr());
    if (want == 4) {
      float f = static_cast<float>(v);
      args.add(&f, 4, 4, "a Python float");
    } else {
      args.add(&v, 8, 8, "a Python float");
    }
    return;
  }
  long long v = PyLong_AsLongLong(value.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      throw BadValue("argument " + std::to_string(args.count()) + " is an int too large for 64 bits");
    }
    args.add(&u, 8, 8, "a Python int");
    return;
  }
  const char* what = PyBool_Check(value.ptr()) ? "a Python bool" : "a Python int";
  auto fits = [&](long long lo, long long hi) {
    if (v < lo || v > hi)
      throw BadValue("argument " + std::to_string(args.count()) + " = " + std::to_string(v) + " does not fit the " +
                     std::to_string(want) + "-byte parameter it fills");
  };
  switch (want) {
    case 1: { fits(INT8_MIN, UINT8_MAX); auto x = static_cast<int8_t>(v); args.add(&x, 1, 1, what); break; }
    case 2: { fits(INT16_MIN, UINT16_MAX); auto x = static_cast<int16_t>(v); args.add(&x, 2, 2, what); break; }
    case 4: { fits(INT32_MIN, UINT32_MAX); auto x = static_cast<int32_t>(v); args.add(&x, 4, 4, what); break; }
    default: args.add(&v, 8, 8, what); break;
  }
}

void add_argument(LaunchArgs& args, nb::handle value, const Kernel& kernel) {
  PyObject* o = value.ptr();
  if (Py_TYPE(o) == array_type) return add_pointer(args, *nb::inst_ptr<Array>(value), kernel);
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o)) return add_python_number(args, value);
  if (const NumpyScalarType* scalar = numpy_scalar_type(o)) {
    // A NumPy scalar is passed as exactly its C type; its buffer holds the value.
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    try {
      args.add(view.buf, view.len, std::min<size_t>(view.len, 8), scalar->what.c_str());
    } catch (...) {
      PyBuffer_Release(&view);
      throw;
    }
    PyBuffer_Release(&view);
    return;
  }
  try {
    return add_pointer(args, device_array_from(value), kernel);
  } catch (const BadArgument& e) {
    throw BadArgument("argument " + std::to_string(args.count()) + " of kernel '" + kernel.name() + "': " +
                      e.what() + ". Kernel arguments are device arrays, NumPy scalars, int, float or bool");
  }
}

// A RawKernel launch's working storage (see ScratchLease).
struct RawScratch {
  LaunchArgs packed;
  void clear() {}
};

// Arguments whose packing runs no Python code: jiasu arrays, Python numbers and NumPy's own scalars.
bool plain_arguments(PyObject* items) {
  for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(items); i < n; ++i) {
    PyObject* o = PyTuple_GET_ITEM(items, i);
    if (Py_TYPE(o) == array_type || PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o)) continue;
    const NumpyScalarType* scalar = numpy_scalar_type(o);
    if (!scalar || !scalar->static_type) return false;
  }
  return true;
}

// `own`: the caller's LaunchArgs, used when packing runs no Python code (which could launch again and
// reuse it), as the GIL is then held from packing to launch; else arguments are packed in scratch storage.
void launch(Kernel& kernel, Dim3 grid, Dim3 block, nb::handle args, size_t shared_mem, nb::handle stream,
            LaunchArgs* own = nullptr) {
  if (!PyTuple_Check(args.ptr()) && !PyList_Check(args.ptr()))
    throw BadArgument("kernel arguments must be a tuple, not " + python_type_name(args));
  // A list could change under us while arguments run Python code: work on a tuple of it.
  nb::object items = PyTuple_Check(args.ptr()) ? nb::borrow(args) : nb::steal(PyList_AsTuple(args.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  std::optional<ScratchLease<RawScratch>> scratch;
  if (!own || !plain_arguments(items.ptr())) own = &scratch.emplace()->packed;
  LaunchArgs& packed = *own;
  packed.begin(kernel.param_layout());
  for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(items.ptr()); i < n; ++i)
    add_argument(packed, PyTuple_GET_ITEM(items.ptr(), i), kernel);
  packed.finish();
  kernel.launch(grid, block, packed, shared_mem, stream_handle(stream));
}

// The grid and block of the last call, kept while they are plain_dims (immutable, so the same objects mean
// the same dimensions): a loop passes the same ones every time.
class DimsCache {
 public:
  std::pair<Dim3, Dim3> get(nb::handle grid, nb::handle block) {
    if (grid.ptr() == grid_object_.ptr() && block.ptr() == block_object_.ptr()) return {grid_, block_};
    Dim3 g = dim3_from(grid, "grid"), b = dim3_from(block, "block");
    if (plain_dims(grid.ptr()) && plain_dims(block.ptr())) {
      grid_object_ = nb::borrow(grid), block_object_ = nb::borrow(block);
      grid_ = g, block_ = b;
    }
    return {g, b};
  }

 private:
  nb::object grid_object_, block_object_;
  Dim3 grid_, block_;
};

// A kernel compiled from source on first call, for the device current at that call.
class RawKernel {
 public:
  RawKernel(std::string code, std::string name, std::vector<std::string> options)
      : module_(std::make_shared<SourceModule>(std::move(code), std::move(options), "jiasu_raw_kernel.cu")),
        name_(std::move(name)) {}

  Kernel& kernel() {
    int device = current_device();
    Kernel* last = last_.load(std::memory_order_acquire);
    if (last && last->device() == device) return *last;
    Kernel* found = module_->kernel(name_, device).get();  // the module keeps it alive
    last_.store(found, std::memory_order_release);
    return *found;
  }
  const std::string& name() const { return name_; }
  const std::string& code() const { return module_->source(); }

  DimsCache dims;
  LaunchArgs packed;  // see launch()

 private:
  std::shared_ptr<SourceModule> module_;
  std::string name_;
  std::atomic<Kernel*> last_{nullptr};  // the kernel of the last call's device
};

// kernel(grid, block, args, shared_mem=0, stream=None), parsed here rather than by nanobind's general
// matching: the launch path.
struct LaunchCall {
  PyObject *grid = nullptr, *block = nullptr, *items = nullptr, *shared = nullptr, *stream = Py_None;
};

// The usual call: positional arguments only. False when the general parser is needed.
bool positional_call(PyObject* const* args, Py_ssize_t n, LaunchCall& c) {
  if (n < 3 || n > 5) return false;
  c.grid = args[0], c.block = args[1], c.items = args[2];
  if (n > 3) c.shared = args[3];
  if (n > 4) c.stream = args[4];
  return true;
}

// Any call, keywords included; false with the Python error set.
bool parse_call(PyObject* args, PyObject* kwargs, LaunchCall& c) {
  static const char* names[] = {"grid", "block", "args", "shared_mem", "stream", nullptr};
  return PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OO:__call__", const_cast<char**>(names), &c.grid, &c.block,
                                     &c.items, &c.shared, &c.stream);
}

size_t shared_bytes(PyObject* shared) { return shared ? shared_bytes_from(shared, "shared_mem") : 0; }

// Kernel (SourceModule.get_function) is a nanobind class: a raw tp_call.
PyObject* kernel_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  LaunchCall c;
  if (kwargs ? !parse_call(args, kwargs, c)
             : !positional_call(&PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), c) && !parse_call(args, kwargs, c))
    return nullptr;
  return guarded([&] {
    const size_t shared = shared_bytes(c.shared);
    const Dim3 grid = dim3_from(c.grid, "grid"), block = dim3_from(c.block, "block");
    launch(*nb::inst_ptr<Kernel>(self), grid, block, c.items, shared, c.stream);
    return nb::none();
  });
}

PyType_Slot kernel_slots[] = {{Py_tp_call, reinterpret_cast<void*>(kernel_call)}, {0, nullptr}};

// RawKernel is a plain CPython type whose call is a vectorcall: a launch gets the caller's arguments in
// place, without the tuple (and its garbage-collector bookkeeping) that a tp_call needs.
struct RawKernelObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  RawKernel* kernel;  // owned
};
PyTypeObject* raw_kernel_type = nullptr;

RawKernel& raw_kernel(PyObject* self) {
  RawKernel* kernel = reinterpret_cast<RawKernelObject*>(self)->kernel;
  if (!kernel) throw BadValue("this RawKernel was not initialised (a subclass's __init__ must call super().__init__)");
  return *kernel;
}

PyObject* raw_kernel_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  LaunchCall c;
  nb::object tuple, dict;  // the general form's, kept while `c` borrows from them
  if (kwnames || !positional_call(args, n, c)) {
    tuple = nb::steal(PyTuple_New(n));
    dict = nb::steal(PyDict_New());
    if (!tuple.is_valid() || !dict.is_valid()) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(tuple.ptr(), i, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0, k = kwnames ? PyTuple_GET_SIZE(kwnames) : 0; i < k; ++i)
      if (PyDict_SetItem(dict.ptr(), PyTuple_GET_ITEM(kwnames, i), args[n + i]) != 0) return nullptr;
    if (!parse_call(tuple.ptr(), dict.ptr(), c)) return nullptr;
  }
  return guarded([&] {
    RawKernel& k = raw_kernel(self);
    const size_t shared = shared_bytes(c.shared);
    if (device_count() == 0 || active_backend() == Backend::Cpu) require_cuda_backend();
    const auto [grid, block] = k.dims.get(c.grid, c.block);
    launch(k.kernel(), grid, block, c.items, shared, c.stream, &k.packed);
    return nb::none();
  });
}

PyObject* raw_kernel_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* self = type->tp_alloc(type, 0);  // zeroed: no kernel until __init__
  if (self) reinterpret_cast<RawKernelObject*>(self)->vectorcall = raw_kernel_vectorcall;
  return self;
}

// RawKernel(code, name, options=()), in __init__ so that subclasses can call it with super().__init__.
int raw_kernel_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"code", "name", "options", nullptr};
  PyObject *code, *name, *options = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UU|O:RawKernel", const_cast<char**>(names), &code, &name, &options))
    return -1;
  try {
    std::vector<std::string> option_list;
    if (options && !nb::try_cast(nb::handle(options), option_list))
      throw BadArgument("RawKernel options must be a sequence of str, not " + python_type_name(options));
    auto* kernel = new RawKernel(nb::cast<std::string>(nb::handle(code)), nb::cast<std::string>(nb::handle(name)),
                                 std::move(option_list));
    delete std::exchange(reinterpret_cast<RawKernelObject*>(self)->kernel, kernel);
    return 0;
  } catch (...) {
    set_python_error(std::current_exception());
    return -1;
  }
}

void raw_kernel_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<RawKernelObject*>(self)->kernel;
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* raw_kernel_compile(PyObject* self, PyObject*) {
  return guarded([&] {
    require_cuda_backend();
    raw_kernel(self).kernel();
    return nb::none();
  });
}
PyObject* raw_kernel_name(PyObject* self, void*) { return guarded([&] { return nb::str(raw_kernel(self).name().c_str()); }); }
PyObject* raw_kernel_code(PyObject* self, void*) { return guarded([&] { return nb::str(raw_kernel(self).code().c_str()); }); }
PyObject* raw_kernel_handle(PyObject* self, void*) {
  return guarded([&] {
    require_cuda_backend();
    return nb::int_(reinterpret_cast<uintptr_t>(raw_kernel(self).kernel().handle()));
  });
}
PyObject* raw_kernel_attributes(PyObject* self, void*) {
  return guarded([&] {
    require_cuda_backend();
    return nb::object(attributes(raw_kernel(self).kernel()));
  });
}

PyObject* raw_kernel_resources(PyObject* self, void*) {
  return guarded([&] {
    require_cuda_backend();
    return nb::cast(kernel_resources(raw_kernel(self).kernel()));
  });
}

PyMethodDef raw_kernel_methods[] = {
    {"compile", raw_kernel_compile, METH_NOARGS, "Compile and load now instead of at the first call."}, {}};
PyGetSetDef raw_kernel_properties[] = {
    {"name", raw_kernel_name, nullptr, nullptr, nullptr},
    {"code", raw_kernel_code, nullptr, nullptr, nullptr},
    {"handle", raw_kernel_handle, nullptr,
     "The CUfunction of the current device, as an int (compiles and loads it first if needed).", nullptr},
    {"attributes", raw_kernel_attributes, nullptr, "Registers, local (spill) bytes and shared memory.", nullptr},
    {"resources", raw_kernel_resources, nullptr,
     "The kernel's KernelResources on the current device, with occupancy(block_size, shared_bytes=0).", nullptr},
    {}};
PyMemberDef raw_kernel_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(RawKernelObject, vectorcall), READONLY, nullptr}, {}};
PyType_Slot raw_kernel_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(raw_kernel_new)},
    {Py_tp_init, reinterpret_cast<void*>(raw_kernel_init)},
    {Py_tp_dealloc, reinterpret_cast<void*>(raw_kernel_dealloc)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_methods, raw_kernel_methods},
    {Py_tp_getset, raw_kernel_properties},
    {Py_tp_members, raw_kernel_members},
    {Py_tp_doc, const_cast<char*>("RawKernel(code, name, options=()): a CUDA C++ kernel compiled on first call; "
                                  "call as kernel(grid, block, args, shared_mem=0, stream=None).")},
    {0, nullptr}};
PyType_Spec raw_kernel_spec = {"jiasu._core.RawKernel", sizeof(RawKernelObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
                               raw_kernel_slots};

}  // namespace

void bind_launch(nb::module_& m) {

  nb::class_<Kernel>(m, "Kernel", "A compiled CUDA kernel; call as kernel(grid, block, args, shared_mem=0, stream=None).",
                     nb::type_slots(kernel_slots))
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("handle", [](const Kernel& k) { return reinterpret_cast<uintptr_t>(k.handle()); },
                   "The CUfunction, as an int, for other CUDA libraries.")
      .def_prop_ro("attributes", &attributes, "Registers, local (spill) bytes and shared memory per thread/block.")
      .def_prop_ro("resources", &kernel_resources, "The KernelResources, with occupancy(block_size, shared_bytes=0).")
      .def("max_active_blocks_per_multiprocessor", [](const Kernel& k, nb::handle block_size, nb::handle shared_mem) {
        const Dim3 block = dim3_from(block_size, "block_size");
        if (block.y != 1 || block.z != 1) throw BadArgument("block_size is a number of threads (an int)");
        return k.max_active_blocks_per_multiprocessor(static_cast<int>(std::min<unsigned>(block.x, INT_MAX)),
                                                      shared_bytes_from(shared_mem, "shared_mem"));
      }, nb::arg("block_size"), nb::arg("shared_mem") = 0);

  nb::class_<SourceModule>(m, "SourceModule", "CUDA C++ source compiled with NVRTC for the current GPU.")
      .def("__init__", [](SourceModule* self, std::string source, std::vector<std::string> options, std::string name) {
        require_cuda_backend();
        new (self) SourceModule(std::move(source), std::move(options), std::move(name));
        try {
          self->module(current_device());  // compile now, as PyCUDA does, so errors show at once
        } catch (...) {
          self->~SourceModule();  // nanobind runs no destructor for a failed __init__
          throw;
        }
      }, nb::arg("source"), nb::arg("options") = std::vector<std::string>(), nb::arg("name") = "jiasu_module.cu")
      .def("get_function", [](SourceModule& s, const std::string& name) { return s.kernel(name, current_device()); },
           nb::arg("name"))
      .def_prop_ro("kernel_names", [](SourceModule& s) { return s.module(current_device())->kernel_names(); });

  raw_kernel_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&raw_kernel_spec));
  if (!raw_kernel_type) throw nb::python_error();
  m.attr("RawKernel") = nb::steal(reinterpret_cast<PyObject*>(raw_kernel_type));
}

}  // namespace jiasu::py
