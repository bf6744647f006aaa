// Kernels written in Python: @jiasu.kernel objects, their launch configurations k[grid, block], and the
// conversion of a launch's Python arguments for the core's launch engine (program/launch.hpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <structmember.h>

#include <algorithm>
#include <deque>

#include "common.hpp"
#include "kernel_arguments.hpp"
#include "frontend/check.hpp"
#include "program/launch.hpp"
#include "program/python_kernel.hpp"
#include "program/signature.hpp"
#include "runtime/backend.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// A NumPy array copied to the device for one launch (copies[i] is staged[i]'s device copy and host memory).
struct Staged {
  nb::object original;    // the caller's array
  nb::object contiguous;  // itself, or a C-contiguous copy, whose memory the results come back to
};

// The working storage of one launch (see ScratchLease).
struct Scratch {
  std::string key;
  std::vector<LaunchArgument> arguments;
  std::deque<Array> temporaries;  // arrays made for this launch, at stable addresses
  std::vector<Staged> staged;
  std::vector<StagedArray> copies;  // refers into temporaries: cleared first
  HostParams host;                // a CPU launch's parameters
  void clear() {
    key.clear();
    arguments.clear();
    host.clear();
    if (temporaries.empty()) return;  // the usual launch made none
    staged.clear();
    copies.clear();
    temporaries.clear();
  }
};

class KernelFunction;

// The core's configuration, and the Python objects it came from.
struct BoundConfig {
  LaunchConfig launch;
  nb::object owner;  // the KernelFunction
  KernelFunction* function = nullptr;  // owner's C++ object (valid while owner is held)
  nb::object stream_object;  // None, a jiasu.Stream or an address, held for stream's sake
};

class KernelFunction {
 public:
  KernelFunction(nb::handle description, bool debug)
      : description(nb::borrow(description)), held(nb::steal(PyList_New(0))),
        kernel_(function_source(description, held.ptr()), debug), launcher_(kernel_) {}
  nb::object description;  // the Python function's description; kept alive here for the resolver
  nb::object held;         // a list: the descriptions of the device functions it calls (idem)
  // Numba's kernel extensions: objects whose prepare_args(ty, value, stream=, retr=) each argument passes through
  // before a launch (jiasu.cuda._prepare_arguments); empty for the usual kernel, whose launch never looks further.
  nb::object extensions = nb::steal(PyList_New(0));

  PythonKernel& kernel() { return kernel_; }
  KernelLauncher& launcher() { return launcher_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // args[0..n): the kernel's arguments. device: where to run (kCpuDevice or a GPU), or kAnyDevice to decide
  // from the arguments.
  [[gnu::hot]] void launch(const BoundConfig& config, PyObject* const* args, Py_ssize_t n, int device = kAnyDevice) {
    if (PyList_GET_SIZE(extensions.ptr()) != 0) [[unlikely]]
      return launch_extended(config, args, n, device);
    if (device == kAnyDevice) {
      // With a GPU array among them, the arguments of a repeat launch choose the current device.
      if (launcher_.repeat().has_array() && launch_as_last(config, args, n, current_device())) [[likely]]
        return;
      device = launch_device(args, n);
    } else if (device != kCpuDevice && launch_as_last(config, args, n, device)) {
      return;
    }
    launch_afresh(config, args, n, device);
  }

  // A launch of a kernel with extensions: the arguments they prepare, then the callbacks they left in `retr`.
  [[gnu::cold, gnu::noinline]] void launch_extended(const BoundConfig& config, PyObject* const* args, Py_ssize_t n,
                                                    int device) {
    nb::tuple given = nb::steal<nb::tuple>(PyTuple_New(n));
    for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(given.ptr(), i, Py_NewRef(args[i]));
    nb::object stream = config.stream_object.is_valid() ? config.stream_object : nb::none();
    nb::object prepare = nb::module_::import_("jiasu.cuda").attr("_prepare_arguments");
    nb::tuple prepared = nb::cast<nb::tuple>(prepare(extensions, given, stream));
    nb::tuple values = nb::cast<nb::tuple>(prepared[0]);
    std::vector<PyObject*> items(values.size());
    for (size_t i = 0; i < items.size(); ++i) items[i] = values[i].ptr();
    const auto count = static_cast<Py_ssize_t>(items.size());
    launch_afresh(config, items.data(), count, device == kAnyDevice ? launch_device(items.data(), count) : device);
    for (nb::handle callback : nb::cast<nb::list>(prepared[1])) callback();
  }

  // Every launch but a repeat one (kept out of line, so that the repeat path's code stays compact).
  [[gnu::cold, gnu::noinline]] void launch_afresh(const BoundConfig& config, PyObject* const* args, Py_ssize_t n,
                                                  int device) {
    if (device == kCpuDevice) return launch_host(config, args, n);
    require_gpu("CUDA kernels need a GPU, and none is visible");
    ScratchLease<Scratch> scratch;
    scratch->arguments.resize(n);  // filled in place: copying them costs more than classifying
    for (Py_ssize_t i = 0; i < n; ++i) classify(args[i], i, *scratch.operator->(), device, scratch->arguments[i]);
    // From the lookup's end to the launch no Python code runs, so the kernel's own parameter buffer serves.
    Specialization& spec = launcher_.launch_gpu(config.launch, scratch->arguments.data(), n, scratch->key, device);

    if (scratch->staged.empty()) return;
    {
      nb::gil_scoped_release unlocked;  // the arrays stay alive: scratch and the caller hold them
      copy_back_written(spec, config.launch, scratch->copies.data(), scratch->copies.size());
    }
    for (size_t i = 0; i < scratch->staged.size(); ++i) {
      const Staged& s = scratch->staged[i];
      if (spec.written()[scratch->copies[i].param] && !s.contiguous.is(s.original))
        numpy().attr("copyto")(s.original, s.contiguous);
    }
  }

  // k.analyze: the arguments as a CPU launch takes them (a jiasu GPU array as a host copy), run by the build that
  // records memory accesses.
  AccessReport analyze(const LaunchConfig& config, PyObject* const* args, Py_ssize_t n) {
    ScratchLease<Scratch> scratch;
    scratch->arguments.resize(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      LaunchArgument& a = scratch->arguments[i];
      if (Py_TYPE(args[i]) != array_type || nb::inst_ptr<Array>(args[i])->on_host()) {
        classify_host(args[i], i, *scratch.operator->(), a);
        continue;
      }
      const Array& device = *nb::inst_ptr<Array>(args[i]);
      scratch->temporaries.push_back(Array::empty(device.shape(), device.dtype(), kCpuDevice));
      a.array = &scratch->temporaries.back();
      device.copy_to_host(reinterpret_cast<void*>(a.array->data()));
      append_argument_key(scratch->key, a);
    }
    Specialization& spec = launcher_.prepare_host(scratch->arguments.data(), n, scratch->key, scratch->host);
    if (spec.prints()) flush_python_stdout();
    nb::gil_scoped_release unlocked;  // the arrays stay alive: the caller and scratch hold them
    return KernelLauncher::analyze_host(spec, config, scratch->host, scratch->arguments.data(), n, name_);
  }

  void warn_numpy_once() {
    if (warned_numpy_) return;
    warned_numpy_ = true;
    nb::object category = nb::module_::import_("jiasu._errors").attr("PerformanceWarning");
    std::string message = "kernel '" + name_ + "' was given NumPy arrays: every launch copies them to the GPU and "
                          "back when the kernel writes them. Keep data on the GPU with jiasu.asarray(x) "
                          "(and .get() at the end) to avoid the copies.";
    if (PyErr_WarnEx(category.ptr(), message.c_str(), 2) != 0) throw nb::python_error();
  }

 private:
  // The launch of a loop (see RepeatLaunch): each argument converted as its predecessor was and written over
  // it by the core, which refuses one of another dtype, rank, contiguity, device or kind. False at the first
  // difference; the full path then starts afresh (and explains errors). No Python code runs and the GIL is
  // held throughout, so the kernel's own parameter buffer serves every call.
  [[gnu::always_inline]] bool launch_as_last(const BoundConfig& config, PyObject* const* args, Py_ssize_t n,
                                             int device) {
    Kernel* compiled = launcher_.repeat_kernel(device, static_cast<size_t>(n));
    if (!compiled) return false;
    RepeatLaunch& repeat = launcher_.repeat();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = args[i];
      const RepeatLaunch::Record& r = repeat.record(i);
      if (r.kind == RepeatLaunch::Record::Array) {
        if (Py_TYPE(o) != array_type || !repeat.put_array(r, *nb::inst_ptr<Array>(o), device)) return false;
        continue;
      }
      switch (r.scalar_kind) {
        case kPythonInt: {
          if (!PyLong_CheckExact(o)) return false;
          long long v = PyLong_AsLongLong(o);
          if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
          }
          if (!repeat.put_scalar(r, kPythonInt, nullptr, &v, 8)) return false;
          break;
        }
        case kPythonFloat: {
          if (!PyFloat_CheckExact(o)) return false;
          double v = PyFloat_AS_DOUBLE(o);
          if (!repeat.put_scalar(r, kPythonFloat, nullptr, &v, 8)) return false;
          break;
        }
        case kPythonComplex: {
          if (!PyComplex_CheckExact(o)) return false;
          const Py_complex v = PyComplex_AsCComplex(o);
          if (!repeat.put_scalar(r, kPythonComplex, nullptr, &v, sizeof v)) return false;
          break;
        }
        case kPythonBool: {
          if (!PyBool_Check(o)) return false;
          const uint8_t v = o == Py_True;
          if (!repeat.put_scalar(r, kPythonBool, nullptr, &v, 1)) return false;
          break;
        }
        case kNumpyScalar: {  // one of NumPy's own types: its buffer is NumPy's C code
          if (Py_TYPE(o) != r.scalar_type) return false;
          Py_buffer view;
          if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
            PyErr_Clear();
            return false;
          }
          const bool written = repeat.put_scalar(r, kNumpyScalar, Py_TYPE(o), view.buf, static_cast<size_t>(view.len));
          PyBuffer_Release(&view);
          if (!written) return false;
          break;
        }
        default:
          return false;
      }
    }
    launcher_.relaunch(config.launch, *compiled);
    return true;
  }

  // Where a launch runs when the caller does not say: by the first jiasu array (launch_device_of), on the
  // GPU when another argument is a GPU object; with only NumPy arrays and scalars, on the active backend.
  static int launch_device(PyObject* const* args, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = args[i];
      if (Py_TYPE(o) == array_type) return launch_device_of(*nb::inst_ptr<Array>(o));
      if (is_python_number(o)) continue;
      if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type())) continue;
      if (numpy_scalar_type(o)) continue;
      if (is_device_object(o)) return current_device();
    }
    return default_device();
  }

  // The CPU backend: arrays are used where they are (jiasu host arrays, NumPy arrays in place), the
  // kernel is the specialisation's host build, and the launch returns when every block has run.
  void launch_host(const BoundConfig& config, PyObject* const* args, Py_ssize_t n) {
    ScratchLease<Scratch> scratch;
    scratch->arguments.resize(n);
    for (Py_ssize_t i = 0; i < n; ++i) classify_host(args[i], i, *scratch.operator->(), scratch->arguments[i]);
    Specialization& spec = launcher_.prepare_host(scratch->arguments.data(), n, scratch->key, scratch->host);
    if (spec.prints()) flush_python_stdout();
    nb::gil_scoped_release unlocked;  // the arrays stay alive: the caller holds them
    KernelLauncher::run_host(spec, config.launch, scratch->host);
  }

  void classify_host(PyObject* o, size_t index, Scratch& scratch, LaunchArgument& a) {
    try {
      if (classify_scalar(o, index, name_, a)) {
        launcher_.apply_declared_type(index, a);
        return append_argument_key(scratch.key, a);
      }
    } catch (const BadArgument&) {
      if (record_argument(nb::handle(o), index, name_, a, scratch.temporaries)) return append_argument_key(scratch.key, a);
      throw;
    }
    auto where = [&] { return "argument " + std::to_string(index) + " of kernel '" + name_ + "'"; };
    if (Py_TYPE(o) == array_type) {
      a.array = nb::inst_ptr<Array>(o);
      if (!a.array->on_host())
        throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                                where() + " lives on GPU " + std::to_string(a.array->device()) +
                                    " but the launch runs on the CPU; copy it with jiasu.asarray(x, device='cpu')");
      scratch.host.hold(*a.array);  // fails on a freed array
    } else {
      bool read_only = false;
      try {
        scratch.temporaries.push_back(host_array_from(nb::handle(o), read_only));
      } catch (const BadArgument& e) {
        // Structured data is used in place too, as NumPy arrays are.
        if (record_argument(nb::handle(o), index, name_, a, scratch.temporaries))
          return append_argument_key(scratch.key, a);
        throw BadArgument(where() + ": " + e.what() + ". Kernel arguments on the CPU are jiasu CPU arrays, NumPy "
                          "arrays (used in place), int, float, bool or NumPy scalars");
      }
      a.array = &scratch.temporaries.back();
      a.read_only = read_only;
    }
    append_argument_key(scratch.key, a);
  }

  void classify(nb::handle value, size_t index, Scratch& scratch, int device, LaunchArgument& a) {
    PyObject* o = value.ptr();
    if (Py_TYPE(o) == array_type) {
      a.array = nb::inst_ptr<Array>(value);
      a.repeatable = true;
      if (a.array->on_host())
        throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                                "argument " + std::to_string(index) + " of kernel '" + name_ +
                                    "' is a CPU array but the launch runs on GPU " + std::to_string(device) +
                                    "; copy it with jiasu.asarray(x, device=" + std::to_string(device) + ")");
    } else {
      try {
        if (classify_scalar(o, index, name_, a)) {
          launcher_.apply_declared_type(index, a);
          return append_argument_key(scratch.key, a);
        }
        a.array = &other_array(value, index, scratch, device, a.read_only);
      } catch (const BadArgument&) {  // structured data has no jiasu dtype: staged as records
        if (!record_argument(value, index, name_, a, scratch.temporaries)) throw;
        a.array = &stage_records(value, index, scratch, device, *a.array);
      }
    }
    const Array& array = *a.array;
    if (array.device() != device)
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                              "argument " + std::to_string(index) + " of kernel '" + name_ + "' lives on device " +
                                  std::to_string(array.device()) + " but the kernel runs on device " +
                                  std::to_string(device));
    append_argument_key(scratch.key, a);
  }

  // A GPU launch's argument that is neither a jiasu array nor a scalar: a NumPy array, staged, or device memory
  // (a NumPy array in mapped or managed memory among it).
  const Array& other_array(nb::handle value, size_t index, Scratch& scratch, int device, bool& read_only) {
    PyObject* o = value.ptr();
    if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type()) && !in_device_memory(o)) {
      warn_numpy_once();
      return stage(value, index, scratch, device, read_only);
    }
    try {
      scratch.temporaries.push_back(device_array_from(value));
    } catch (const BadArgument& e) {
      throw BadArgument("argument " + std::to_string(index) + " of kernel '" + name_ + "': " + e.what() +
                        ". Kernel arguments are arrays (jiasu, NumPy, or any DLPack / CUDA Array Interface "
                        "object), int, float, bool or NumPy scalars");
    }
    return scratch.temporaries.back();
  }

  // A NumPy argument of a GPU launch: a device copy of it (of a C-contiguous copy of it when it is not).
  const Array& stage(nb::handle host, size_t index, Scratch& scratch, int device_ordinal, bool& read_only) {
    nb::object contiguous = numpy().attr("ascontiguousarray")(host);
    const Array view = host_array_from(contiguous, read_only);
    if (!contiguous.is(host)) read_only = !nb::cast<bool>(host.attr("flags")["WRITEABLE"]);  // copied back into it
    scratch.temporaries.push_back(Array::empty(view.shape(), view.dtype(), device_ordinal));
    const Array& device = scratch.temporaries.back();
    auto address = reinterpret_cast<void*>(view.data());
    if (contiguous.is(host)) pin_if_reused(host, address, device.nbytes());
    {
      nb::gil_scoped_release unlocked;
      device.copy_from_host(address);
    }
    scratch.staged.push_back({nb::borrow(host), contiguous});
    scratch.copies.push_back({index, &device, address});
    return device;
  }

  // Structured data of a GPU launch (`host`: its memory in place): a device copy, copied back when written.
  const Array& stage_records(nb::handle original, size_t index, Scratch& scratch, int device_ordinal, const Array& host) {
    nb::object contiguous = nb::borrow(original);
    const Array* memory = &host;
    if (!host.c_contiguous()) {  // a strided structured array: through a C-contiguous copy, copied back into it
      contiguous = numpy().attr("ascontiguousarray")(original);
      scratch.temporaries.push_back(host_records_from(contiguous)->memory);
      memory = &scratch.temporaries.back();
    }
    const Layout layout = contiguous_layout(memory->shape(), memory->layout().itemsize);
    scratch.temporaries.push_back(Array::empty({memory->nbytes()}, DType::UInt8, device_ordinal).view(layout));
    const Array& device = scratch.temporaries.back();
    auto address = reinterpret_cast<void*>(memory->data());
    {
      nb::gil_scoped_release unlocked;
      device.copy_from_host(address);
    }
    scratch.staged.push_back({nb::borrow(original), contiguous});
    scratch.copies.push_back({index, &device, address});
    return device;
  }

  // A NumPy array passed to kernels again and again (the usual loop) is page-locked in place the second
  // time it is seen, so its copies run at DMA speed with no staging; the lock is undone when the array is
  // garbage-collected. One-off arrays never pay for locking.
  static void pin_if_reused(nb::handle array, void* ptr, size_t bytes) {
    constexpr size_t kMinBytes = size_t(1) << 20;
    if (bytes < kMinBytes) return;
    // Recent first sightings: the same array object (a weak reference to it) at the same address. A new
    // array that happens to get a freed one's address is not the same object, and is not pinned.
    static auto* seen = new std::vector<std::pair<nb::object, void*>>();  // leaked: outlives teardown
    static nb::object* weakref = new nb::object(nb::module_::import_("weakref").attr("ref"));
    auto it = std::find_if(seen->begin(), seen->end(), [&](const auto& entry) {
      return entry.second == ptr && entry.first().is(array);
    });
    if (it == seen->end()) {
      nb::object ref;
      try {
        ref = (*weakref)(array);
      } catch (const nb::python_error&) {
        return;  // no weak references to it: it could not be unpinned when it dies
      }
      if (seen->size() >= 64) seen->erase(seen->begin());
      seen->emplace_back(ref, ptr);
      return;
    }
    seen->erase(it);
    if (!register_host_memory(ptr, bytes)) return;
    static nb::object* finalize = new nb::object(nb::module_::import_("weakref").attr("finalize"));
    nb::object unregister = nb::module_::import_("jiasu._core").attr("_unregister_host_memory");
    (*finalize)(array, unregister, reinterpret_cast<uintptr_t>(ptr));
  }

  PythonKernel kernel_;
  KernelLauncher launcher_;  // keeps the last GPU launch for the repeat launch
  std::string name_;
  bool warned_numpy_ = false;

 public:
  nb::object last_config_key, last_config;  // k[grid, block]'s cache
};

// Blocks and threads given as plain_dims (then a stream): safe to match against the cached configuration by
// value, since True == 1 and 1.0 == 1 would otherwise slip past the checks.
bool plain_config(nb::handle key) {
  if (!PyTuple_CheckExact(key.ptr())) return false;
  for (Py_ssize_t i = 0, n = std::min<Py_ssize_t>(PyTuple_GET_SIZE(key.ptr()), 2); i < n; ++i)
    if (!plain_dims(PyTuple_GET_ITEM(key.ptr(), i))) return false;
  return true;
}

// Python's == on tuples costs a recursion check per level; plain configurations are compared directly.
bool same_object_or_int(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b)) return false;
  int overflow_a, overflow_b;
  long long x = PyLong_AsLongLongAndOverflow(a, &overflow_a), y = PyLong_AsLongLongAndOverflow(b, &overflow_b);
  return !overflow_a && !overflow_b && x == y;  // huge ints are refused as dimensions anyway
}

bool same_dims(PyObject* a, PyObject* b) {
  if (!PyTuple_CheckExact(a) || !PyTuple_CheckExact(b)) return same_object_or_int(a, b);
  if (PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); ++i)
    if (!same_object_or_int(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i))) return false;
  return true;
}

// Both plain configurations: the same grid and block, and the same stream and shared size objects.
bool same_config(nb::handle last, nb::handle key) {
  const Py_ssize_t n = PyTuple_GET_SIZE(key.ptr());
  if (PyTuple_GET_SIZE(last.ptr()) != n) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = PyTuple_GET_ITEM(last.ptr(), i), *b = PyTuple_GET_ITEM(key.ptr(), i);
    if (i < 2 ? !same_dims(a, b) : !same_object_or_int(a, b)) return false;
  }
  return true;
}

BoundConfig make_config(nb::handle self, nb::handle key) {
  BoundConfig c;
  c.owner = nb::borrow(self);
  c.function = nb::inst_ptr<KernelFunction>(self);
  c.stream_object = nb::none();
  if (!nb::isinstance<nb::tuple>(key) || nb::len(key) < 2 || nb::len(key) > 4)
    throw BadArgument("launch a kernel as k[blocks, threads], k[blocks, threads, stream] or "
                      "k[blocks, threads, stream, shared_bytes]");
  nb::tuple t = nb::borrow<nb::tuple>(key);
  c.launch.grid = dim3_from(t[0], "blocks");
  c.launch.block = dim3_from(t[1], "threads");
  if (t.size() > 2) {
    c.launch.stream = stream_handle(t[2]);
    c.stream_object = nb::borrow(t[2]);
  }
  if (t.size() > 3) c.launch.shared_bytes = shared_bytes_from(t[3], "shared_bytes");
  return c;
}

// A kernel caches its last configuration, which refers back to the kernel: let the garbage collector see
// that cycle so kernels defined in functions (and their compiled modules) are freed.
int kernel_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  KernelFunction* k = nb::inst_ptr<KernelFunction>(self);
  Py_VISIT(k->last_config_key.ptr());
  Py_VISIT(k->last_config.ptr());
  Py_VISIT(k->description.ptr());
  Py_VISIT(k->held.ptr());
  Py_VISIT(k->extensions.ptr());
  return 0;
}

int kernel_clear(PyObject* self) {
  KernelFunction* k = nb::inst_ptr<KernelFunction>(self);
  k->last_config_key.reset();
  k->last_config.reset();
  PyList_SetSlice(k->extensions.ptr(), 0, PY_SSIZE_T_MAX, nullptr);  // may hold the kernel
  return 0;  // the descriptions stay: the resolvers borrow them, and the kernel dies with them anyway
}

nb::object new_config(BoundConfig config);

// k[grid, block]: a raw mp_subscript, since loops launch through it every time. The last configuration is
// reused when the same one comes again.
[[gnu::cold, gnu::noinline]] void remember_config(KernelFunction& k, nb::handle self, nb::handle key) {
  k.last_config = new_config(make_config(self, key));
  k.last_config_key = nb::borrow(key);
}

[[gnu::hot]] PyObject* kernel_subscript(PyObject* self, PyObject* key) {
  return guarded([&] {
    KernelFunction& k = *nb::inst_ptr<KernelFunction>(self);
    if (!k.last_config_key.is_valid() || !plain_config(key) || !same_config(k.last_config_key, key))
      remember_config(k, self, key);
    return k.last_config;
  });
}

PyType_Slot kernel_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(kernel_traverse)},
                              {Py_tp_clear, reinterpret_cast<void*>(kernel_clear)},
                              {Py_mp_subscript, reinterpret_cast<void*>(kernel_subscript)},
                              {0, nullptr}};
// k[grid, block] is a LaunchConfig: a plain CPython type whose call is a vectorcall, so that a launch
// reaches the kernel with the caller's arguments in place (no tuple is made for them).
struct ConfigObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  BoundConfig config;
};
PyTypeObject* config_type = nullptr;

[[gnu::hot]] PyObject* config_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return guarded([&] {
    const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    int device = kAnyDevice;
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, 0);
      if (PyTuple_GET_SIZE(kwnames) != 1 || PyUnicode_CompareWithASCIIString(name, "device") != 0)
        throw BadArgument("kernel arguments are positional; the only keyword is device= ('cpu', 'cuda', ...)");
      device = device_from(args[n]);
    }
    BoundConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
    if (!c.owner.is_valid()) throw BadValue("this launch configuration's kernel is gone");
    c.function->launch(c, args, n, device);
    return nb::none();
  });
}

// The configuration refers back to its kernel, which caches it: the garbage collector sees both sides.
int config_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  const BoundConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
  Py_VISIT(c.owner.ptr());
  Py_VISIT(c.stream_object.ptr());
  return 0;
}

int config_clear(PyObject* self) {
  BoundConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
  c.owner.reset();
  c.stream_object.reset();
  return 0;
}

void config_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  reinterpret_cast<ConfigObject*>(self)->config.~BoundConfig();
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef config_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ConfigObject, vectorcall), READONLY, nullptr}, {}};
PyType_Slot config_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(config_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(config_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(config_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, config_members},
    {Py_tp_doc, const_cast<char*>("A kernel with its launch configuration; call it with the kernel's arguments.")},
    {0, nullptr}};
PyType_Spec config_spec = {"jiasu._core.LaunchConfig", sizeof(ConfigObject), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, config_slots};

nb::object new_config(BoundConfig config) {
  PyObject* o = config_type->tp_alloc(config_type, 0);
  if (!o) throw nb::python_error();
  auto* object = reinterpret_cast<ConfigObject*>(o);
  object->vectorcall = config_vectorcall;
  new (&object->config) BoundConfig(std::move(config));
  return nb::steal(o);
}

nb::dict per_signature(KernelFunction& k, const std::function<nb::object(Specialization&)>& value) {
  nb::dict out;
  for (Specialization* spec : k.kernel().specializations()) out[describe_signature(spec->key()).c_str()] = value(*spec);
  return out;
}

}  // namespace

void bind_kernel(nb::module_& m) {
  m.def("kernel_names", [] {
    nb::list names;
    for (int i = 0; i < fe::builtin_count(); ++i) {
      const std::string path = fe::builtin(i).path;
      if (path.rfind("jiasu.", 0) == 0) names.append(path);
    }
    for (const std::string& name : fe::vector_type_names()) names.append("jiasu." + name);
    return names;
  }, "The kernel language's jiasu.* names (jiasu.grid, jiasu.threadIdx.x, jiasu.atomic.add, jiasu.float32x4, ...).");
  m.def("_unregister_host_memory", [](uintptr_t address) { unregister_host_memory(reinterpret_cast<void*>(address)); },
        "Undo the page-locking of a reused NumPy argument (called when the array is collected).");
  config_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&config_spec));
  if (!config_type) throw nb::python_error();
  m.attr("LaunchConfig") = nb::steal(reinterpret_cast<PyObject*>(config_type));

  nb::class_<KernelFunction>(m, "KernelFunction", "A kernel written in Python (@jiasu.kernel).",
                             nb::type_slots(kernel_slots))
      .def("__init__", [](KernelFunction* self, nb::handle description, bool debug) {
        std::string name = nb::cast<std::string>(description.attr("name"));  // may throw: before constructing
        new (self) KernelFunction(description, debug);
        self->set_name(std::move(name));
      }, nb::arg("description"), nb::arg("debug") = false)
      .def_prop_ro("name", &KernelFunction::name)
      .def_prop_ro("extensions", [](KernelFunction& k) { return k.extensions; },
                   "Numba's kernel extensions: a list of objects with prepare_args(ty, value, stream=, retr=), "
                   "which every argument passes through before a launch")
      .def_prop_ro("py_func", [](const KernelFunction& k) { return k.description.attr("fn"); },
                   "The Python function the kernel was compiled from (Numba's name for it).")
      .def_prop_ro("_description", [](const KernelFunction& k) { return k.description; },
                   "What the front end reads of the function (a kernel called from a kernel is a device function).")
      .def("_declare_scalar_types", [](KernelFunction& k, const std::vector<std::optional<std::string>>& names) {
        std::vector<std::optional<DType>> types;
        for (const auto& name : names) types.push_back(name ? std::optional(dtype_from_name(*name)) : std::nullopt);
        k.launcher().declare_scalar_types(std::move(types));
      }, "Numba's signature types of the scalar parameters (dtype names, None for the others): each scalar "
         "argument is converted to its parameter's type (cuda.jit(\"void(int32[:], int32)\")).")
      .def("specialize", [](KernelFunction& k, nb::args args) {
        std::string key;
        for (size_t i = 0; i < args.size(); ++i) append_type_key(key, args[i], i, k.name(), k.launcher());
        return describe_signature(k.kernel().specialization(key).key());
      }, "Compile the front end for these arguments' types without launching (no GPU needed); returns the "
         "signature. NVRTC runs later, at the first launch or in inspect_ptx().")
      .def("forall", [](nb::handle self, nb::handle n, nb::handle stream, nb::handle shared_bytes) {
        if (!PyLong_Check(n.ptr()) || PyBool_Check(n.ptr()))
          throw BadArgument("forall(n) needs an int (the number of threads), not " + python_type_name(n));
        int overflow = 0;
        const long long threads = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
        if (overflow > 0) throw BadValue("forall(n) needs n < 2**63, not " + python_str(n));
        if (overflow || threads < 0) throw BadValue("forall(n) needs n >= 0, not " + python_str(n));
        BoundConfig c;
        c.launch.stream = stream_handle(stream);
        c.owner = nb::borrow(self);
        c.function = nb::inst_ptr<KernelFunction>(self);
        c.stream_object = nb::borrow(stream);
        c.launch.shared_bytes = shared_bytes_from(shared_bytes, "shared_bytes");
        c.launch.forall = threads;
        return new_config(std::move(c));
      }, nb::arg("n"), nb::arg("stream") = nb::none(), nb::arg("shared_bytes") = 0,
         "A launch over n threads with the block size the occupancy API favours.")
      .def("__call__", [](KernelFunction& k, nb::args) {
        throw BadValue("launch configuration was not specified: a kernel is launched as " + k.name() +
                       "[blocks, threads](...)");  // Numba's words and type
      })
      .def("max_cooperative_grid_blocks", [](KernelFunction& k, nb::handle blockdim, nb::handle dynsmemsize) {
        Specialization* spec = k.kernel().last();
        if (!spec)
          throw BadValue("kernel '" + k.name() + "' is not compiled yet: launch it, or call " + k.name() +
                         ".specialize(*args), before asking for max_cooperative_grid_blocks");
        return spec->max_cooperative_blocks(default_device(), dim3_from(blockdim, "blockdim"),
                                            shared_bytes_from(dynsmemsize, "dynsmemsize"));
      }, nb::arg("blockdim"), nb::arg("dynsmemsize") = 0,
         "Numba's max_cooperative_grid_blocks: the most blocks of `blockdim` threads (an int or a tuple) a "
         "cooperative launch of the last compiled signature may have on the active backend's device (blocks per "
         "multiprocessor times multiprocessors on a GPU). Kernels that call cg.this_grid() launch cooperatively.")
      .def("analyze", [](KernelFunction& k, nb::handle blocks, nb::handle threads, nb::args args, nb::kwargs options) {
        LaunchConfig config;
        config.grid = dim3_from(blocks, "blocks");
        config.block = dim3_from(threads, "threads");
        for (auto [name, value] : options) {
          if (nb::cast<std::string>(name) != "shared_bytes")
            throw BadArgument("analyze() got an unexpected keyword argument '" + nb::cast<std::string>(name) + "'");
          config.shared_bytes = shared_bytes_from(value, "shared_bytes");
        }
        std::vector<PyObject*> items(args.size());
        for (size_t i = 0; i < items.size(); ++i) items[i] = args[i].ptr();
        return k.analyze(config, items.data(), static_cast<Py_ssize_t>(items.size()));
      }, nb::arg("blocks"), nb::arg("threads"), nb::arg("args"), nb::arg("options"),
         "k.analyze(blocks, threads, *args, shared_bytes=0): run the kernel on the CPU backend (with a GPU too), "
         "recording every element access of global and shared arrays, and report per access site the GPU's memory "
         "requests: 32-byte sectors per warp request against the ideal (coalescing) and shared-memory bank "
         "conflicts (an AccessReport; print() it). Arguments are taken as a CPU launch takes them: NumPy arrays and "
         "jiasu CPU arrays are written in place; a jiasu GPU array is analysed as a host copy, which the kernel's "
         "writes do not leave.")
      .def("inspect_cuda", [](KernelFunction& k) {
        return per_signature(k, [](Specialization& s) { return nb::str(s.cuda_source().c_str()); });
      }, "The generated CUDA C++ of each compiled signature.")
      .def("inspect_host", [](KernelFunction& k) {
        return per_signature(k, [](Specialization& s) { return nb::str(s.host_source().c_str()); });
      }, "The generated host C++ (the CPU backend's build) of each compiled signature.")
      .def("inspect_ptx", [](KernelFunction& k) {
        int arch = device_count() ? device_properties(current_device()).arch() : 90;
        return per_signature(k, [arch](Specialization& s) {
          return nb::str(s.module().code(arch, CodeKind::Ptx).image.c_str());
        });
      }, "The PTX of each compiled signature, for the current GPU (sm_90 without one).")
      .def("resources", [](KernelFunction& k, nb::args args) -> nb::object {
        const int device = default_device();
        if (args.size() == 0)
          return per_signature(k, [device](Specialization& s) { return nb::cast(s.resources(device)); });
        std::string key;
        for (size_t i = 0; i < args.size(); ++i) append_type_key(key, args[i], i, k.name(), k.launcher());
        return nb::cast(k.kernel().specialization(key).resources(device));
      }, "k.resources(*args): the KernelResources (registers, shared_bytes, local_bytes, const_bytes, "
         "max_threads_per_block, occupancy(block_size, shared_bytes=0)) of the signature these arguments take, "
         "compiled for the active backend's device if it is not yet; k.resources(): those of every compiled "
         "signature, by signature. On a GPU they are the driver's account of the loaded kernel; on the CPU backend "
         "what the source declares.");
}

}  // namespace jiasu::py
