// Kernels written in Python: @jiasu.kernel objects, their launch configurations k[grid, block], and the
// launch path that classifies arguments, finds the specialisation and launches, all in C++.
#include <nanobind/stl/string.h>
#include <structmember.h>

#include <algorithm>
#include <climits>
#include <deque>

#include "common.hpp"
#include "program/python_kernel.hpp"
#include "program/signature.hpp"
#include "runtime/backend.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

// One classified argument: an array (jiasu's own, a wrapped device object or a staged NumPy array) or
// the bytes of a scalar.
struct Argument {
  const Array* array = nullptr;
  unsigned char bytes[8] = {};
  size_t size = 0;
  bool read_only = false;                    // a NumPy array used in place that may not be written
  PyTypeObject* numpy_scalar_type = nullptr;  // a NumPy scalar's static type (the repeat path reads those)
};

// A NumPy array copied to the device for one launch, and copied back if the kernel writes it.
struct Staged {
  size_t param;
  nb::object original;    // the caller's array
  nb::object contiguous;  // itself, or a C-contiguous copy
  void* address;          // of contiguous's data
  const Array* device;
};

// The working storage of one launch (see ScratchLease).
struct Scratch {
  std::string key;
  std::vector<Argument> arguments;
  std::deque<Array> temporaries;  // arrays made for this launch, at stable addresses
  std::vector<Staged> staged;     // refers into temporaries: cleared first
  struct alignas(16) HostSlot { unsigned char bytes[8 + 16 * 8]; };
  std::vector<HostSlot> host_slots;  // a CPU launch's parameters, one each
  std::vector<void*> host_params;
  // A CPU launch runs without the GIL: its jiasu arrays' memory is held meanwhile (another thread may free()).
  std::vector<std::shared_ptr<const void>> in_use;
  void clear() {
    key.clear();
    arguments.clear();
    in_use.clear();
    if (temporaries.empty()) return;  // the usual launch made none
    staged.clear();
    temporaries.clear();
  }
};

class KernelFunction;

// A Python float, bool or int: its bytes in `a` and its signature entry at `entry`; returns the entry's
// length, or 0 for anything else. Python numbers are weak scalars (NEP 50), bool excepted.
size_t python_number(PyObject* o, size_t index, const std::string& kernel, Argument& a, char* entry) {
  if (PyFloat_CheckExact(o)) {
    double v = PyFloat_AS_DOUBLE(o);
    std::memcpy(a.bytes, &v, 8);
    a.size = 8;
    return scalar_key(entry, DType::Float64, true);
  }
  if (PyBool_Check(o)) {
    a.bytes[0] = o == Py_True;
    a.size = 1;
    return scalar_key(entry, DType::Bool, false);
  }
  if (PyLong_CheckExact(o)) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BadValue("argument " + std::to_string(index) + " of kernel '" + kernel + "' is an int too large for int64");
    }
    std::memcpy(a.bytes, &v, 8);
    a.size = 8;
    return scalar_key(entry, DType::Int64, true);
  }
  return 0;
}

// Scalars (Python and NumPy): their bytes and signature entry. False for anything else.
bool classify_scalar(PyObject* o, size_t index, const std::string& kernel, std::string& key, Argument& a) {
  char entry[kScalarKeyLength];
  if (size_t length = python_number(o, index, kernel, a, entry)) {
    key.append(entry, length);
    return true;
  }
  if (Py_TYPE(o) == array_type || (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type()))) return false;
  if (const NumpyScalarType* scalar = numpy_scalar_type(o)) {
    // A type jiasu has no dtype for: asking again raises the reason.
    const DType dtype = scalar->dtype ? *scalar->dtype : dtype_from_object(nb::handle(o).attr("dtype"));
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    a.size = std::min<size_t>(view.len, sizeof a.bytes);
    std::memcpy(a.bytes, view.buf, a.size);
    PyBuffer_Release(&view);
    if (scalar->static_type) a.numpy_scalar_type = scalar->type;
    append_scalar_key(key, dtype, false);
    return true;
  }
  return false;
}

// The signature entry of an argument from its type alone: nothing is copied or wrapped, so this works
// without a GPU (k.specialize).
void append_type_key(std::string& key, nb::handle value, size_t index, const std::string& kernel) {
  PyObject* o = value.ptr();
  Argument scalar;
  if (classify_scalar(o, index, kernel, key, scalar)) return;  // the front end rejects complex
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
    throw BadArgument("argument " + std::to_string(index) + " of kernel '" + kernel + "': " + e.what());
  }
}

struct LaunchConfig {
  nb::object owner;  // the KernelFunction
  KernelFunction* function = nullptr;  // owner's C++ object (valid while owner is held)
  Dim3 grid, block;
  nb::object stream;              // None, a jiasu.Stream or an address, held for cuda_stream's sake
  cu::CUstream cuda_stream = nullptr;  // resolved once, when the configuration is made
  size_t shared_bytes = 0;
  int64_t forall = -1;  // k.forall(n): grid and block picked at launch from the occupancy API
};

class KernelFunction {
 public:
  KernelFunction(nb::handle description, bool debug)
      : description(nb::borrow(description)), held(nb::steal(PyList_New(0))),
        kernel_(function_source(description, held.ptr()), debug) {}
  nb::object description;  // the Python function's description; kept alive here for the resolver
  nb::object held;         // a list: the descriptions of the device functions it calls (idem)

  PythonKernel& kernel() { return kernel_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // args[0..n): the kernel's arguments. device: where to run (kCpuDevice or a GPU), or kAnyDevice to decide
  // from the arguments.
  [[gnu::hot]] void launch(const LaunchConfig& config, PyObject* const* args, Py_ssize_t n, int device = kAnyDevice) {
    if (device == kAnyDevice) {
      // With a GPU array among them, the arguments of a repeat launch choose the current device.
      if (repeat_has_array_ && launch_as_last(config, args, n, current_device())) [[likely]]
        return;
      device = launch_device(args, n);
    } else if (device != kCpuDevice && launch_as_last(config, args, n, device)) {
      return;
    }
    launch_afresh(config, args, n, device);
  }

  // Every launch but a repeat one (kept out of line, so that the repeat path's code stays compact).
  [[gnu::cold, gnu::noinline]] void launch_afresh(const LaunchConfig& config, PyObject* const* args, Py_ssize_t n,
                                                  int device) {
    if (device == kCpuDevice) return launch_host(config, args, n);
    require_gpu("CUDA kernels need a GPU, and none is visible");
    ScratchLease<Scratch> scratch;
    scratch->arguments.resize(n);  // filled in place: copying them costs more than classifying
    for (Py_ssize_t i = 0; i < n; ++i) classify(args[i], i, *scratch.operator->(), device, scratch->arguments[i]);

    Specialization& spec = kernel_.specialization(scratch->key);
    refuse_read_only_outputs(spec, scratch->arguments);
    Kernel& compiled = spec.kernel(device);
    // From here to the launch no Python code runs, so the kernel's own LaunchArgs can be filled (see
    // launch_as_last); each argument's place in it is kept for the next launch.
    repeat_kernel_ = nullptr;
    repeat_.clear();
    repeat_has_array_ = false;
    bool repeatable = true;
    LaunchArgs& packed = repeat_args_;
    packed.begin(compiled.param_layout());
    for (Py_ssize_t i = 0; i < n; ++i) {
      const Argument& a = scratch->arguments[i];
      unsigned char* at;
      if (a.array) {
        at = packed.slot(array_param_size(*a.array), 8, "an array");
        array_bytes(*a.array, at);
      } else {
        at = packed.slot(a.size, a.size, "a scalar");
        std::memcpy(at, a.bytes, a.size);
      }
      RepeatArgument r = repeat_argument(args[i], a);
      r.offset = static_cast<uint32_t>(at - static_cast<const unsigned char*>(packed.data()));
      repeatable = repeatable && r.kind != RepeatArgument::None;
      repeat_has_array_ = repeat_has_array_ || r.kind == RepeatArgument::JiasuArray;
      repeat_.push_back(r);
    }
    packed.finish();
    if (repeatable) repeat_kernel_ = &compiled;
    run(config, compiled, packed);

    if (scratch->staged.empty()) return;
    // Staged arrays are copied back and freed on the legacy stream: let the kernel's stream finish first.
    if (config.cuda_stream)
      cu::check(cu::driver().cuStreamSynchronize(config.cuda_stream), "cuStreamSynchronize");
    for (const Staged& s : scratch->staged)
      if (spec.written()[s.param]) copy_back(s);
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
  // The launch of a loop: when each argument is what the last GPU launch got in its place (a jiasu array
  // of the same dtype, rank and contiguity on `device`, a Python number or NumPy scalar of the same type),
  // the kernel and parameter layout are the last ones too, and each argument's bytes are written over its
  // predecessor's. False at the first difference; the full path then starts afresh (and explains errors).
  // No Python code runs and the GIL is held throughout, so the kernel's own LaunchArgs serves every call.
  [[gnu::always_inline]] bool launch_as_last(const LaunchConfig& config, PyObject* const* args, Py_ssize_t n,
                                             int device) {
    Kernel* compiled = repeat_kernel_;
    if (!compiled || compiled->device() != device || static_cast<size_t>(n) != repeat_.size()) return false;
    unsigned char* buffer = repeat_args_.buffer();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = args[i];
      const RepeatArgument& r = repeat_[i];
      unsigned char* at = buffer + r.offset;
      switch (r.kind) {
        case RepeatArgument::JiasuArray: {
          if (Py_TYPE(o) != array_type) return false;
          const Array& array = *nb::inst_ptr<Array>(o);
          if (array.dtype() != r.dtype || array.ndim() != r.ndim || array.c_contiguous() != r.contiguous ||
              array.device() != device)
            return false;
          array_bytes(array, at);
          break;
        }
        case RepeatArgument::Int: {
          if (!PyLong_CheckExact(o)) return false;
          long long v = PyLong_AsLongLong(o);
          if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
          }
          std::memcpy(at, &v, 8);
          break;
        }
        case RepeatArgument::Float: {
          if (!PyFloat_CheckExact(o)) return false;
          double v = PyFloat_AS_DOUBLE(o);
          std::memcpy(at, &v, 8);
          break;
        }
        case RepeatArgument::Bool:
          if (!PyBool_Check(o)) return false;
          *at = o == Py_True;
          break;
        case RepeatArgument::NumpyScalar: {  // one of NumPy's own types: its buffer is NumPy's C code
          if (Py_TYPE(o) != r.numpy_type) return false;
          Py_buffer view;
          if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
            PyErr_Clear();
            return false;
          }
          const bool same_size = view.len == r.size;
          if (same_size) std::memcpy(at, view.buf, r.size);
          PyBuffer_Release(&view);
          if (!same_size) return false;
          break;
        }
        case RepeatArgument::None:
          return false;
      }
    }
    run(config, *compiled, repeat_args_);
    return true;
  }

  // How the repeat path checks an argument like `value` (classified as `a`) and where it writes it.
  struct RepeatArgument {
    enum Kind : uint8_t { None, JiasuArray, Int, Float, Bool, NumpyScalar } kind = None;
    DType dtype{};  // JiasuArray's
    uint8_t ndim = 0;
    bool contiguous = false;
    uint8_t size = 0;                     // NumpyScalar's bytes
    PyTypeObject* numpy_type = nullptr;  // NumpyScalar's type (NumPy's own: static, never freed)
    uint32_t offset = 0;                 // in the parameter buffer
  };
  static RepeatArgument repeat_argument(PyObject* value, const Argument& a) {
    RepeatArgument r;
    if (Py_TYPE(value) == array_type) {
      r.kind = RepeatArgument::JiasuArray;
      r.dtype = a.array->dtype();
      r.ndim = static_cast<uint8_t>(a.array->ndim());
      r.contiguous = a.array->c_contiguous();
    } else if (PyFloat_CheckExact(value)) {
      r.kind = RepeatArgument::Float;
    } else if (PyBool_Check(value)) {
      r.kind = RepeatArgument::Bool;
    } else if (PyLong_CheckExact(value)) {
      r.kind = RepeatArgument::Int;
    } else if (a.numpy_scalar_type) {
      r.kind = RepeatArgument::NumpyScalar;
      r.numpy_type = a.numpy_scalar_type;
      r.size = static_cast<uint8_t>(a.size);
    }
    return r;
  }

  static void run(const LaunchConfig& config, Kernel& compiled, LaunchArgs& packed) {
    Dim3 grid = config.grid, block = config.block;
    if (config.forall >= 0) pick_forall(compiled, config.forall, config.shared_bytes, grid, block);
    compiled.launch(grid, block, packed, config.shared_bytes, config.cuda_stream);
  }

  // A NumPy argument that may not be written, where the kernel writes.
  static void refuse_read_only_outputs(Specialization& spec, const std::vector<Argument>& arguments) {
    for (size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i].read_only && spec.written()[i])
        throw BadValue("argument " + std::to_string(i) + " is a read-only NumPy array, and results would be "
                       "written into it");
  }

  // Where a launch runs when the caller does not say: on the CPU when a jiasu argument array is in host
  // memory, on the GPU when one is in GPU memory (or another argument is a GPU object); with only NumPy
  // arrays and scalars, on the active backend.
  static int launch_device(PyObject* const* args, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = args[i];
      if (Py_TYPE(o) == array_type) return nb::inst_ptr<Array>(o)->on_host() ? kCpuDevice : current_device();
      if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o)) continue;
      if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type())) continue;
      if (numpy_scalar_type(o)) continue;
      if (is_device_object(o)) return current_device();
    }
    return default_device();
  }

  // The CPU backend: arrays are used where they are (jiasu host arrays, NumPy arrays in place), the
  // kernel is the specialisation's host build, and the launch returns when every block has run.
  void launch_host(const LaunchConfig& config, PyObject* const* args, Py_ssize_t n) {
    ScratchLease<Scratch> scratch;
    scratch->arguments.resize(n);
    for (Py_ssize_t i = 0; i < n; ++i) classify_host(args[i], i, *scratch.operator->(), scratch->arguments[i]);
    Specialization& spec = kernel_.specialization(scratch->key);
    refuse_read_only_outputs(spec, scratch->arguments);
    auto& slots = scratch->host_slots;
    auto& params = scratch->host_params;
    slots.resize(scratch->arguments.size());
    params.clear();
    for (size_t i = 0; i < scratch->arguments.size(); ++i) {
      const Argument& a = scratch->arguments[i];
      if (a.array)
        array_bytes(*a.array, slots[i].bytes);
      else
        std::memcpy(slots[i].bytes, a.bytes, a.size);
      params.push_back(slots[i].bytes);
    }
    Dim3 grid = config.grid, block = config.block;
    if (config.forall >= 0) {
      block = {256, 1, 1};
      grid = forall_grid(config.forall, 256);
    }
    nb::gil_scoped_release unlocked;  // the arrays stay alive: the caller holds them
    spec.host_kernel().launch(grid, block, params.data(), config.shared_bytes);
  }

  void classify_host(PyObject* o, size_t index, Scratch& scratch, Argument& a) {
    if (classify_scalar(o, index, name_, scratch.key, a)) return;
    auto where = [&] { return "argument " + std::to_string(index) + " of kernel '" + name_ + "'"; };
    if (Py_TYPE(o) == array_type) {
      a.array = nb::inst_ptr<Array>(o);
      if (!a.array->on_host())
        throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                                where() + " lives on GPU " + std::to_string(a.array->device()) +
                                    " but the launch runs on the CPU; copy it with jiasu.asarray(x, device='cpu')");
      scratch.in_use.push_back(a.array->memory()->hold());  // fails on a freed array
    } else {
      bool read_only = false;
      try {
        scratch.temporaries.push_back(host_array_from(nb::handle(o), read_only));
      } catch (const BadArgument& e) {
        throw BadArgument(where() + ": " + e.what() + ". Kernel arguments on the CPU are jiasu CPU arrays, NumPy "
                          "arrays (used in place), int, float, bool or NumPy scalars");
      }
      a.array = &scratch.temporaries.back();
      a.read_only = read_only;
    }
    const Array& array = *a.array;
    if (array.ndim() > 8) throw BadArgument("kernel arrays have at most 8 dimensions");
    append_array_key(scratch.key, array.dtype(), static_cast<int>(array.ndim()), array.c_contiguous());
  }

  void classify(nb::handle value, size_t index, Scratch& scratch, int device, Argument& a) {
    std::string& key = scratch.key;
    PyObject* o = value.ptr();
    if (Py_TYPE(o) == array_type) {
      a.array = nb::inst_ptr<Array>(value);
      if (a.array->on_host())
        throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                                "argument " + std::to_string(index) + " of kernel '" + name_ +
                                    "' is a CPU array but the launch runs on GPU " + std::to_string(device) +
                                    "; copy it with jiasu.asarray(x, device=" + std::to_string(device) + ")");
    } else if (classify_scalar(o, index, name_, key, a)) {
      return;
    } else if (numpy_ndarray_type() && PyObject_TypeCheck(o, numpy_ndarray_type())) {
      warn_numpy_once();
      a.array = &stage(value, index, scratch, device, a.read_only);
    } else {
      try {
        scratch.temporaries.push_back(device_array_from(value));
      } catch (const BadArgument& e) {
        throw BadArgument("argument " + std::to_string(index) + " of kernel '" + name_ + "': " + e.what() +
                          ". Kernel arguments are arrays (jiasu, NumPy, or any DLPack / CUDA Array Interface "
                          "object), int, float, bool or NumPy scalars");
      }
      a.array = &scratch.temporaries.back();
    }
    const Array& array = *a.array;
    if (array.device() != device)
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                              "argument " + std::to_string(index) + " of kernel '" + name_ + "' lives on device " +
                                  std::to_string(array.device()) + " but the kernel runs on device " +
                                  std::to_string(device));
    if (array.ndim() > 8) throw BadArgument("kernel arrays have at most 8 dimensions");
    append_array_key(key, array.dtype(), static_cast<int>(array.ndim()), array.c_contiguous());
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
    scratch.staged.push_back({index, nb::borrow(host), contiguous, address, &device});
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

  static void copy_back(const Staged& s) {
    {
      nb::gil_scoped_release unlocked;
      s.device->copy_to_host(s.address);
    }
    if (!s.contiguous.is(s.original)) numpy().attr("copyto")(s.original, s.contiguous);
  }

  // The parameter an array is passed as: jiasu::ArrayC<T, N> {data, shape[N]} when C-contiguous, else
  // jiasu::ArrayA<T, N> {data, shape[N], strides[N]}.
  static void array_bytes(const Array& array, unsigned char* bytes) {
    size_t n = static_cast<size_t>(array.ndim());
    cu::CUdeviceptr ptr = array.data();
    std::memcpy(bytes, &ptr, 8);
    for (size_t d = 0; d < n; ++d) std::memcpy(bytes + 8 + 8 * d, &array.shape()[d], 8);  // n <= 8: no call
    if (!array.c_contiguous())
      for (size_t d = 0; d < n; ++d) std::memcpy(bytes + 8 + 8 * (n + d), &array.strides()[d], 8);
  }

  static size_t array_param_size(const Array& array) {
    return 8 + (array.c_contiguous() ? 8 : 16) * static_cast<size_t>(array.ndim());
  }

  // The block size with the most resident threads per multiprocessor, and enough blocks to cover n.
  static void pick_forall(Kernel& kernel, int64_t n, size_t shared_bytes, Dim3& grid, Dim3& block) {
    const int size = kernel.occupancy_block_size(shared_bytes);
    block = {static_cast<unsigned>(size), 1, 1};
    grid = forall_grid(n, size);
  }

  // One thread per task: a grid of at most 2**31-1 blocks, as CUDA allows. More tasks than that grid holds
  // would be dropped silently: a grid-stride loop covers them instead.
  static Dim3 forall_grid(int64_t n, int block) {
    const int64_t blocks = std::max<int64_t>(1, n / block + (n % block != 0));
    if (blocks > INT_MAX)
      throw BadValue("forall(" + std::to_string(n) + ") needs " + std::to_string(blocks) + " blocks of " +
                     std::to_string(block) + " threads, more than a CUDA grid has (" + std::to_string(INT_MAX) +
                     "): write the kernel as a grid-stride loop (for i in range(jiasu.grid(1), n, "
                     "jiasu.gridsize(1))) and launch it with a grid of your choice");
    return {static_cast<unsigned>(blocks), 1, 1};
  }

  PythonKernel kernel_;
  std::string name_;
  bool warned_numpy_ = false;
  // The last GPU launch, for launch_as_last: its kernel (null when some argument cannot be repeated), its
  // packed parameters, and how each argument is checked and where it goes.
  Kernel* repeat_kernel_ = nullptr;
  LaunchArgs repeat_args_;
  std::vector<RepeatArgument> repeat_;
  bool repeat_has_array_ = false;

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

LaunchConfig make_config(nb::handle self, nb::handle key) {
  LaunchConfig c;
  c.owner = nb::borrow(self);
  c.function = nb::inst_ptr<KernelFunction>(self);
  c.stream = nb::none();
  if (!nb::isinstance<nb::tuple>(key) || nb::len(key) < 2 || nb::len(key) > 4)
    throw BadArgument("launch a kernel as k[blocks, threads], k[blocks, threads, stream] or "
                      "k[blocks, threads, stream, shared_bytes]");
  nb::tuple t = nb::borrow<nb::tuple>(key);
  c.grid = dim3_from(t[0], "blocks");
  c.block = dim3_from(t[1], "threads");
  if (t.size() > 2) {
    c.cuda_stream = stream_handle(t[2]);
    c.stream = nb::borrow(t[2]);
  }
  if (t.size() > 3) c.shared_bytes = shared_bytes_from(t[3], "shared_bytes");
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
  return 0;
}

int kernel_clear(PyObject* self) {
  KernelFunction* k = nb::inst_ptr<KernelFunction>(self);
  k->last_config_key.reset();
  k->last_config.reset();
  return 0;  // the descriptions stay: the resolvers borrow them, and the kernel dies with them anyway
}

nb::object new_config(LaunchConfig config);

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
  LaunchConfig config;
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
    LaunchConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
    if (!c.owner.is_valid()) throw BadValue("this launch configuration's kernel is gone");
    c.function->launch(c, args, n, device);
    return nb::none();
  });
}

// The configuration refers back to its kernel, which caches it: the garbage collector sees both sides.
int config_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  const LaunchConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
  Py_VISIT(c.owner.ptr());
  Py_VISIT(c.stream.ptr());
  return 0;
}

int config_clear(PyObject* self) {
  LaunchConfig& c = reinterpret_cast<ConfigObject*>(self)->config;
  c.owner.reset();
  c.stream.reset();
  return 0;
}

void config_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  reinterpret_cast<ConfigObject*>(self)->config.~LaunchConfig();
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

nb::object new_config(LaunchConfig config) {
  PyObject* o = config_type->tp_alloc(config_type, 0);
  if (!o) throw nb::python_error();
  auto* object = reinterpret_cast<ConfigObject*>(o);
  object->vectorcall = config_vectorcall;
  new (&object->config) LaunchConfig(std::move(config));
  return nb::steal(o);
}

nb::dict per_signature(KernelFunction& k, const std::function<nb::object(Specialization&)>& value) {
  nb::dict out;
  for (Specialization* spec : k.kernel().specializations()) out[describe_signature(spec->key()).c_str()] = value(*spec);
  return out;
}

}  // namespace

void bind_kernel(nb::module_& m) {
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
      .def("specialize", [](KernelFunction& k, nb::args args) {
        std::string key;
        for (size_t i = 0; i < args.size(); ++i) append_type_key(key, args[i], i, k.name());
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
        LaunchConfig c;
        c.cuda_stream = stream_handle(stream);
        c.owner = nb::borrow(self);
        c.function = nb::inst_ptr<KernelFunction>(self);
        c.stream = nb::borrow(stream);
        c.shared_bytes = shared_bytes_from(shared_bytes, "shared_bytes");
        c.forall = threads;
        return new_config(std::move(c));
      }, nb::arg("n"), nb::arg("stream") = nb::none(), nb::arg("shared_bytes") = 0,
         "A launch over n threads with the block size the occupancy API favours.")
      .def("__call__", [](KernelFunction& k, nb::args) {
        throw BadArgument("a kernel is launched with a configuration: " + k.name() + "[blocks, threads](...)");
      })
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
      .def("resources", [](KernelFunction& k) {
        // The driver reports them for the kernel loaded on a GPU; NVRTC's output does not say.
        require_visible_gpu("k.resources() needs a GPU: registers, local and shared memory are the driver's "
                            "account of the kernel loaded on one (k.inspect_cuda(), k.inspect_ptx() and "
                            "k.inspect_host() work without one)");
        return per_signature(k, [](Specialization& s) { return nb::object(attributes(s.kernel(current_device()))); });
      }, "Registers, local memory (spills) and shared memory of each compiled signature (needs a GPU).");
}

}  // namespace jiasu::py
