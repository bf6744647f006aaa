// Shared by the binding files: the Python face of the C++ core. No logic lives here beyond converting
// Python objects to core types.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.hpp"
#include "frontend/ast.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/module.hpp"
#include "runtime/occupancy.hpp"
#include "support/error.hpp"

namespace jiasu::ops {
struct Operand;
struct Scalar;
}

namespace nb = nanobind;

namespace jiasu::fe {
struct FunctionSource;
}

namespace jiasu::py {

// A GPU (ordinal >= 0) or the CPU backend's device (kCpuDevice).
struct Device {
  int ordinal;
  const DeviceProperties& props() const {
    if (ordinal == kCpuDevice) throw BadValue("the CPU device has no CUDA device properties");
    return device_properties(ordinal);
  }
};

// A device from None (the active backend's default), an int (a GPU), "cpu", "cuda", "cuda:N" or a Device.
int device_from(nb::handle device);
constexpr int kAnyDevice = -2;  // a launch's device, decided from its arguments

void bind_errors(nb::module_& m);
// Sets the Python exception for a C++ one, as nanobind does for bound functions: for raw type slots.
void set_python_error(const std::exception_ptr& error);
// The handle under which the front end knows the exception class `type` (a kernel's raise); a launch that raises
// it raises `type` (errors.cpp).
int64_t exception_class_handle(nb::handle type);
// A raw type slot's body (a vectorcall, mp_subscript, getter): the object it returns, or nullptr with the
// Python exception set when it throws.
template <typename Body>
[[gnu::always_inline]] inline PyObject* guarded(Body&& body) noexcept {
  try {
    return body().release().ptr();
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
}
void bind_runtime(nb::module_& m);
void bind_tuning(nb::module_& m);  // jiasu.graph, jiasu.profile
void bind_array(nb::module_& m);
void bind_matmul(nb::module_& m);  // called by bind_array: adds matmul, dot and Array's @ operators
void bind_ops(nb::module_& m);  // bindings/ops.cpp: the elementwise operations, Array's operators
void bind_reductions(nb::module_& m);  // after bind_array: it adds methods to Array
void bind_vectorize(nb::module_& m);  // @jiasu.vectorize / @jiasu.reduce
void bind_gufunc(nb::module_& m);  // generalized ufuncs (Numba's @guvectorize)
void bind_nn(nb::module_& m);  // jiasu._core.nn
void bind_launch(nb::module_& m);
void bind_access_report(nb::module_& m);  // k.analyze's report, before bind_kernel
void bind_kernel(nb::module_& m);
void bind_resources(nb::module_& m);  // KernelResources, Occupancy
void bind_benchmark(nb::module_& m);  // jiasu.benchmark
void bind_distributed(nb::module_& m);  // jiasu._core.distributed: communicators, collectives
void bind_shapes(nb::module_& m);
void bind_store(nb::module_& m);  // jiasu.distributed.TCPStore
void bind_shape_methods(nb::class_<Array>& cls);

// Shared by the launch paths (launch.cpp, kernel.cpp).
extern PyTypeObject* array_type;  // jiasu.Array, for exact-type checks on the hot path
// numpy.generic and numpy.ndarray once NumPy is loaded, else nullptr: nothing on the launch path imports
// NumPy (a program that has not loaded it passes no NumPy objects).
PyObject* numpy_generic();
PyTypeObject* numpy_ndarray_type();
// What the launch paths need of a NumPy scalar's type, found once per type (a loop passes the same few).
struct NumpyScalarType {
  PyTypeObject* type;
  std::string what;            // "a numpy.int32", for messages
  bool static_type;            // not made in Python, so no Python code serves its buffer
  std::optional<DType> dtype;  // none for types jiasu has no dtype for (complex, datetime, ...)
};
// Null when `o` is not a NumPy scalar (by its type alone: numpy.generic or a subclass).
const NumpyScalarType* numpy_scalar_type(PyObject* o);
Dim3 dim3_from(nb::handle value, const char* what);
// An exact int or a tuple of up to 3 exact ints: immutable, and what dim3_from reads without surprises.
// Inline: k[grid, block] asks it at every launch.
inline bool plain_dims(PyObject* dims) {
  if (PyLong_CheckExact(dims)) return true;
  if (!PyTuple_CheckExact(dims) || PyTuple_GET_SIZE(dims) > 3) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); ++i)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(dims, i))) return false;
  return true;
}
// Dynamic shared memory in bytes from a Python int: TypeError for other types, ValueError for negative
// values and for values beyond 64 bits, naming `what` and the value given.
size_t shared_bytes_from(nb::handle value, const char* what);
nb::dict attributes(const Kernel& kernel);
// Raises CudaError (CUDA_ERROR_NO_DEVICE) when no GPU is visible: `what` (which says what needs one),
// then why none is (the driver's error, say) in parentheses.
void require_visible_gpu(const std::string& what);

// A Python function's description (see kernel_source.cpp) as the front end reads it; `held` is the kernel's
// list that keeps the descriptions of the device functions it calls.
std::shared_ptr<const fe::FunctionSource> function_source(nb::handle description, PyObject* held);

// Per-thread working storage of one launch, reused from launch to launch. A launch that starts while
// another is still classifying its arguments (Python code run by an argument's protocol or a warning
// hook) gets a level of its own; leaving a level clears it, on errors too.
template <typename Scratch>
class ScratchLease {
 public:
  ScratchLease() : levels_(levels()) {
    if (levels_.scratch.size() <= levels_.depth) levels_.scratch.push_back(std::make_unique<Scratch>());
    scratch_ = levels_.scratch[levels_.depth++].get();
  }
  ~ScratchLease() {
    scratch_->clear();
    --levels_.depth;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch* operator->() const { return scratch_; }

 private:
  struct Levels {
    std::vector<std::unique_ptr<Scratch>> scratch;
    size_t depth = 0;
  };
  // One thread-local lookup per launch; initial-exec makes it a plain load (see runtime/device.hpp).
  static Levels& levels() {
    [[gnu::tls_model("initial-exec")]] thread_local Levels levels;
    return levels;
  }
  Levels& levels_;
  Scratch* scratch_;
};

// None, a jiasu Stream, or a raw CUstream address as an int.
cu::CUstream stream_handle(nb::handle stream);

// A jiasu Array viewing the device memory of `obj` (jiasu Array, __dlpack__ or
// __cuda_array_interface__ producer), keeping `obj` alive; throws BadArgument for anything else.
Array device_array_from(nb::handle obj);
// A CPU-device jiasu Array viewing a host array in place (NumPy, or a DLPack producer in host memory);
// read_only is set for a NumPy array that may not be written. The view does not keep obj alive (a launch's
// arguments do). Throws BadArgument for anything else.
Array host_array_from(nb::handle obj, bool& read_only);
// A NumPy structured array, or one record of one (a NumPy record scalar), in place: its memory as an Array of
// record-sized elements (uint8 stands in for the record's dtype) and its fields. nullopt for any other object;
// BadArgument for a record kernels cannot take (nested records, strings, misaligned fields).
struct HostRecords {
  Array memory;
  std::shared_ptr<const fe::RecordLayout> layout;
  bool single_record;  // a record scalar: passed by reference
  bool read_only;
};
std::optional<HostRecords> host_records_from(nb::handle obj);
// A GPU array or an object in GPU memory (by DLPack or the CUDA Array Interface).
bool is_device_object(nb::handle obj);

// Keeps a Python object alive from C++, dropping the reference with the GIL held.
std::shared_ptr<void> keep_alive(nb::handle obj);

// The numpy module (imported on first use) and the address of a NumPy array's first element.
nb::object& numpy();
uintptr_t host_address(nb::handle host_array);
// Raises ValueError unless `host_array` may be written (results are copied into it).
void require_writeable(nb::handle host_array, const char* what);

// NumPy's dtype object for `dtype` (bfloat16 comes from ml_dtypes).
nb::object numpy_dtype(DType dtype);
DType dtype_from_object(nb::handle dtype);

// Operations on at least this many elements release the GIL while they run (below, releasing costs more than
// it lets other threads gain).
constexpr int64_t kReleaseGilElements = 1 << 16;

// `value` as an elementwise operand (bindings/ops.cpp): a jiasu array, a device array of another library
// (converted into `array`, which holds it while the operand is used), or a Python or NumPy scalar. False when it
// is none of those; a NumPy array is a BadArgument (no hidden copies to the device).
bool operand_from(nb::handle value, ops::Operand& operand, std::optional<Array>& array);
// A Python or NumPy number as a scalar; else a BadArgument saying that `what` must be one.
ops::Scalar number_from(nb::handle value, const std::string& what);

// "numpy.ndarray", "torch.Tensor", ...: for error messages.
inline std::string python_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }
// str(obj), e.g. a Python int's digits however large: for error messages.
inline std::string python_str(nb::handle obj) { return nb::str(obj).c_str(); }

nb::tuple to_tuple(const Shape& values);
Shape shape_from(nb::handle shape);  // int or sequence of ints
std::vector<IndexItem> index_items(nb::handle key);  // a subscript (a[key]), item by item

}  // namespace jiasu::py
