// jiasu.Array: metadata, views, host transfers, and the two interchange protocols (CUDA Array Interface
// v3 and DLPack), both ways.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ops/elementwise.hpp"
#include "ops/join.hpp"
#include "common.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu::py {
namespace {

using namespace nb::literals;

constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

// A buffer-protocol request this array cannot serve: Python's BufferError.
struct BufferRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int device_of_pointer(cu::CUdeviceptr ptr) {
  int device = ptr ? pointer_device(ptr) : -1;
  return device >= 0 ? device : current_device();
}

// A view of someone else's memory: `ptr` is element [0, ...] of `layout`; the allocation adopted is the span
// the view touches, kept alive by `owner`.
Array adopt_view(DType dtype, Layout layout, cu::CUdeviceptr ptr, int device, std::shared_ptr<void> owner) {
  int64_t begin = layout.span_begin();
  auto memory = adopt_device_memory(ptr + begin, layout.span_end() - begin, device, std::move(owner));
  layout.offset -= begin;
  return Array(dtype, std::move(layout), std::move(memory));
}

// The device type obj.__dlpack_device__() reports (kDLCPU, kDLCUDA, ...).
int dlpack_device_type(nb::handle obj) {
  nb::object device = obj.attr("__dlpack_device__")();
  int type;
  if (!PyTuple_Check(device.ptr()) || PyTuple_GET_SIZE(device.ptr()) < 1 ||
      !nb::try_cast(nb::handle(PyTuple_GET_ITEM(device.ptr(), 0)), type))
    throw BadArgument(python_type_name(obj) + ".__dlpack_device__() must return (device_type, device_id), not " +
                      nb::cast<std::string>(nb::repr(device)));
  return type;
}

// obj.__cuda_array_interface__, or an invalid object when it has none (any error reading it counts as none,
// as for hasattr). Read once: some producers (torch) build the dictionary anew at every access.
nb::object cuda_array_interface(nb::handle obj) {
  PyObject* value = PyObject_GetAttrString(obj.ptr(), "__cuda_array_interface__");
  if (!value) PyErr_Clear();
  return nb::steal(value);
}

// The view that a CUDA Array Interface dictionary describes (nb::cast_error for entries of the wrong type).
Array from_cuda_array_interface_dict(nb::handle obj, nb::handle interface) {
  nb::dict cai = nb::cast<nb::dict>(interface);
  DType dtype = dtype_from_typestr(nb::cast<std::string>(cai["typestr"]));
  Shape shape = shape_from(cai["shape"]);
  Layout layout = contiguous_layout(shape, itemsize(dtype));
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    layout.strides = shape_from(cai["strides"]);
    if (layout.strides.size() != shape.size())
      throw BadArgument("__cuda_array_interface__ has " + std::to_string(layout.strides.size()) + " strides for " +
                        std::to_string(shape.size()) + " dimensions");
  }
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw BadArgument("masked __cuda_array_interface__ arrays are not supported");
  auto ptr = static_cast<cu::CUdeviceptr>(nb::cast<uintptr_t>(nb::tuple(cai["data"])[0]));
  // The producer's pending work must finish before we touch the memory (CAI v3 'stream').
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    auto s = nb::cast<uintptr_t>(cai["stream"]);
    if (s != 1 && s != 2)
      cu::check(cu::driver().cuStreamSynchronize(reinterpret_cast<cu::CUstream>(s)), "cuStreamSynchronize");
  }
  return adopt_view(dtype, std::move(layout), ptr, device_of_pointer(ptr), keep_alive(obj));
}

// A view of obj's memory as its __cuda_array_interface__ (`interface`) describes it.
Array from_cuda_array_interface(nb::handle obj, nb::handle interface) {
  try {
    return from_cuda_array_interface_dict(obj, interface);
  } catch (const nb::cast_error&) {  // an entry of the wrong type
    throw BadArgument("the __cuda_array_interface__ of a " + python_type_name(obj) + " is not a valid one (v3): " +
                      nb::cast<std::string>(nb::repr(interface)));
  }
}

// With allow_host, host memory (kDLCPU) becomes an array of the CPU device.
Array from_dlpack_object(nb::handle obj, bool allow_host = false) {
  nb::ndarray<> nd;
  if (!nb::try_cast(obj, nd)) {
    std::string why = PyErr_Occurred() ? nb::python_error().what() : "its __dlpack__ export failed";
    throw BadArgument("cannot import a " + python_type_name(obj) + " through DLPack: " + why);
  }
  int type = nd.device_type();
  const bool host = allow_host && type == kDLCPU;
  if (!host && type != kDLCUDA && type != kDLCUDAManaged && type != kDLCUDAHost)
    throw BadArgument(std::string("expected a CUDA array but got a ") + python_type_name(obj) + " on the " +
                      (type == kDLCPU ? "CPU" : "device type " + std::to_string(type)) +
                      "; use jiasu.asarray(x) to copy host data to the GPU");
  DType dtype = dtype_from_dlpack(nd.dtype().code, nd.dtype().bits);
  Shape shape(nd.ndim());
  Layout layout;
  for (size_t i = 0; i < nd.ndim(); ++i) shape[i] = nd.shape(i);
  layout = contiguous_layout(shape, itemsize(dtype));
  if (nd.stride_ptr())
    for (size_t i = 0; i < nd.ndim(); ++i) layout.strides[i] = nd.stride(i) * layout.itemsize;
  auto ptr = reinterpret_cast<cu::CUdeviceptr>(nd.data());
  int device = host ? kCpuDevice : type == kDLCUDAHost ? current_device() : nd.device_id();
  auto holder = std::make_shared<nb::ndarray<>>(nd);
  auto release = std::shared_ptr<void>(holder.get(), [holder](void*) mutable {
    nb::gil_scoped_acquire gil;
    holder.reset();
  });
  return adopt_view(dtype, std::move(layout), ptr, device, std::move(release));
}

// The interface protocols (__array_interface__ for host memory, __cuda_array_interface__ for GPU memory).
// Their consumers keep the array object alive rather than saying when they are done, so the memory stays
// until that object is gone, even past free() (Allocation::hold_while_alive).
nb::dict array_interface(const Array& a, bool cuda) {
  const DTypeInfo& t = info(a.dtype());
  const char* protocol = cuda ? "__cuda_array_interface__" : "__array_interface__";
  if (cuda == a.on_host())  // AttributeError, so that hasattr() tells consumers which memory this is
    throw nb::attribute_error((std::string("a jiasu array ") + (a.on_host() ? "in host memory has no " : "on a GPU has no ") +
                               protocol).c_str());
  if (!t.typestr[0])
    throw nb::attribute_error((std::string(t.name) + " has no " + protocol + " type; use DLPack").c_str());
  const cu::CUdeviceptr data = a.data();  // a freed array fails here, even an empty one
  nb::dict d;
  d["shape"] = to_tuple(a.shape());
  d["typestr"] = t.typestr;
  d["data"] = nb::make_tuple(static_cast<uintptr_t>(a.size() ? data : 0), false);
  d["strides"] = a.c_contiguous() ? nb::object(nb::none()) : nb::object(to_tuple(a.strides()));
  d["version"] = 3;
  if (cuda) d["stream"] = 1;  // jiasu's work runs on the legacy default stream
  a.memory()->hold_while_alive();
  return d;
}

// The buffer protocol, for arrays in host memory: what np.asarray(a) and memoryview(a) use. Each export
// holds the memory until the consumer releases it (NumPy: when its view is gone), even past free().
struct BufferExport {
  std::shared_ptr<const void> memory;
  std::vector<Py_ssize_t> shape, strides;
};

bool f_contiguous(const Layout& layout) {
  int64_t expected = layout.itemsize;
  for (size_t d = 0; d < layout.shape.size(); ++d) {
    if (layout.shape[d] == 0) return true;
    if (layout.shape[d] != 1 && layout.strides[d] != expected) return false;
    expected *= layout.shape[d];
  }
  return true;
}

void fill_buffer(const Array& a, Py_buffer* view, int flags) {
  if (!a.on_host())
    throw BufferRefused("a jiasu array on a GPU has no host buffer; copy it to the host with .get()");
  const DTypeInfo& t = info(a.dtype());
  if ((flags & PyBUF_FORMAT) && !t.buffer_format[0])
    throw BufferRefused(std::string("the buffer protocol has no format for ") + t.name + "; copy it with .get()");
  const bool c = a.c_contiguous(), f = f_contiguous(a.layout());
  const bool strided_ok = (flags & PyBUF_STRIDES) == PyBUF_STRIDES;
  if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS || !strided_ok) && !c)
    throw BufferRefused("this jiasu array is not C-contiguous");
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f)
    throw BufferRefused("this jiasu array is not Fortran-contiguous");
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f)
    throw BufferRefused("this jiasu array is not contiguous");
  auto exported = std::make_unique<BufferExport>();
  exported->memory = a.memory()->hold();  // a freed array fails here, even an empty one
  exported->shape.assign(a.shape().begin(), a.shape().end());
  exported->strides.assign(a.strides().begin(), a.strides().end());
  static unsigned char empty;  // an address for arrays with no elements
  view->buf = a.size() ? reinterpret_cast<void*>(a.data()) : &empty;
  view->len = a.nbytes();
  view->itemsize = a.layout().itemsize;
  view->readonly = 0;
  view->ndim = static_cast<int>(a.ndim());
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(t.buffer_format) : nullptr;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? exported->shape.data() : nullptr;
  view->strides = strided_ok ? exported->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = exported.release();
}

int array_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;  // the protocol's rule on failure
  try {
    fill_buffer(*nb::inst_ptr<Array>(self), view, flags);
  } catch (const BufferRefused& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  } catch (...) {
    set_python_error(std::current_exception());
    return -1;
  }
  view->obj = Py_NewRef(self);
  return 0;
}

void array_releasebuffer(PyObject*, Py_buffer* view) { delete static_cast<BufferExport*>(view->internal); }

PyType_Slot array_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(array_getbuffer)},
                             {Py_bf_releasebuffer, reinterpret_cast<void*>(array_releasebuffer)},
                             {0, nullptr}};

nb::object dlpack(nb::handle self, nb::kwargs kwargs) {
  const Array& a = nb::cast<const Array&>(self);
  // The consumer's stream must wait for work queued on the legacy stream (DLPack's `stream` contract).
  if (kwargs.contains("stream")) {
    nb::object s = kwargs["stream"];
    intptr_t handle = -1;  // -1: no synchronisation (and what a CPU array's consumer may pass)
    if (!s.is_none() && !nb::try_cast(s, handle)) {
      const std::string message = "__dlpack__(stream=...) takes None or an int (a CUstream address, or 1 or 2 for "
                                  "the legacy and per-thread default streams), not " + python_str(nb::repr(s));
      if (PyLong_Check(s.ptr())) throw BadValue(message);
      throw BadArgument(message);
    }
    if (!a.on_host() && handle != -1 && handle != 1 && handle != 2) {
      Event done(a.device(), false);
      done.record(nullptr);
      cu::check(cu::driver().cuStreamWaitEvent(reinterpret_cast<cu::CUstream>(handle), done.handle(), 0),
                "cuStreamWaitEvent");
    }
    nb::del(kwargs["stream"]);
  }
  std::vector<size_t> shape(a.shape().begin(), a.shape().end());
  std::vector<int64_t> strides(a.ndim());
  for (int64_t i = 0; i < a.ndim(); ++i) {
    if (a.strides()[i] % a.layout().itemsize)
      throw BadValue("this array's strides are not a multiple of its item size; DLPack cannot describe it");
    strides[i] = a.strides()[i] / a.layout().itemsize;
  }
  const DTypeInfo& t = info(a.dtype());
  nb::dlpack::dtype dtype{t.dlpack_code, static_cast<uint8_t>(t.itemsize * 8), 1};
  // The consumer's deleter drops the owner, which holds the memory until then, even past free().
  auto held = std::make_unique<std::shared_ptr<const void>>(a.memory()->hold());  // fails on a freed array
  nb::capsule owner(held.get(), [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
  held.release();
  void* data = a.size() ? reinterpret_cast<void*>(a.data()) : nullptr;
  nb::ndarray<nb::array_api> nd(data, shape.size(), shape.data(), owner, strides.data(), dtype,
                                a.on_host() ? kDLCPU : kDLCUDA, a.on_host() ? 0 : a.device());
  return nd.cast().attr("__dlpack__")(**kwargs);
}

}  // namespace

std::vector<IndexItem> index_items(nb::handle key) {
  std::vector<IndexItem> items;
  auto add = [&](nb::handle k) {
    IndexItem item;
    if (k.is_none()) {
      item.kind = IndexItem::NewAxis;
    } else if (k.ptr() == Py_Ellipsis) {
      item.kind = IndexItem::Ellipsis;
    } else if (PySlice_Check(k.ptr())) {
      item.kind = IndexItem::Slice;
      // Bounds beyond int64 clamp, as in Python's own slicing.
      auto part = [](nb::handle v) -> std::optional<int64_t> {
        if (v.is_none()) return std::nullopt;
        Py_ssize_t x = PyNumber_AsSsize_t(v.ptr(), nullptr);
        if (x == -1 && PyErr_Occurred()) throw nb::python_error();
        return x;
      };
      item.start = part(k.attr("start"));
      item.stop = part(k.attr("stop"));
      item.step = part(k.attr("step"));
    } else if (PyIndex_Check(k.ptr()) && !PyBool_Check(k.ptr())) {
      nb::object index = nb::steal(PyNumber_Index(k.ptr()));
      if (!index.is_valid()) throw nb::python_error();
      int overflow = 0;
      item.index = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (overflow) item.beyond_int64 = python_str(index);  // out of bounds whatever the shape: the core says so
    } else {
      throw OutOfRange("only integers, slices (':'), ellipsis ('...') and None are valid indices of a "
                       "jiasu.Array, not " + python_type_name(k));
    }
    items.push_back(item);
  };
  if (nb::isinstance<nb::tuple>(key))
    for (nb::handle k : nb::borrow<nb::tuple>(key)) add(k);
  else
    add(key);
  return items;
}

namespace {

// Numba spells the default stream 0.
nb::handle numba_stream(nb::handle stream) {
  return nb::isinstance<nb::int_>(stream) && nb::cast<long long>(stream) == 0 ? nb::none() : stream;
}

nb::object get(const Array& a, nb::handle stream, nb::handle out) {
  nb::object host = out.is_none() ? numpy().attr("empty")(to_tuple(a.shape()), numpy_dtype(a.dtype())) : nb::borrow(out);
  if (!out.is_none()) {
    bool ok = nb::cast<bool>(host.attr("flags")["C_CONTIGUOUS"]) && nb::cast<int64_t>(host.attr("nbytes")) == a.nbytes() &&
              host.attr("dtype").equal(numpy_dtype(a.dtype()));
    if (!ok) throw BadValue("out must be a C-contiguous NumPy array with this array's dtype and size");
    require_writeable(host, "out");
  }
  void* ptr = reinterpret_cast<void*>(host_address(host));
  cu::CUstream s = stream_handle(stream);
  {
    nb::gil_scoped_release unlocked;
    a.copy_to_host(ptr, s, s == nullptr);
  }
  return host;
}

void set(const Array& a, nb::handle value, nb::handle stream) {
  nb::object asarray = numpy().attr("asarray");
  nb::object host = asarray(value, numpy_dtype(a.dtype()), "order"_a = "C");
  if (shape_from(host.attr("shape")) != a.shape()) {
    // NumPy broadcasting for the usual cases (a scalar, a row): let NumPy expand it on the host.
    host = asarray(numpy().attr("broadcast_to")(host, to_tuple(a.shape())), "order"_a = "C");
  }
  const void* ptr = reinterpret_cast<const void*>(host_address(host));
  cu::CUstream s = stream_handle(stream);
  nb::gil_scoped_release unlocked;
  a.copy_from_host(ptr, s, s == nullptr);
}

}  // namespace

// Device memory (CUDA or managed) by DLPack's account or by the CUDA Array Interface; host objects such as
// NumPy arrays or torch CPU tensors are not.
bool is_device_object(nb::handle obj) {
  if (nb::isinstance<Array>(obj)) return !nb::inst_ptr<Array>(obj)->on_host();
  // DLPack's device first: a method returning two ints, where torch builds a whole dict for the
  // __cuda_array_interface__ probe (and that is asked again when the object is wrapped).
  if (nb::hasattr(obj, "__dlpack_device__")) {
    try {
      int type = dlpack_device_type(obj);
      if (type == kDLCUDA || type == kDLCUDAManaged) return true;
    } catch (const nb::python_error& e) {  // a producer whose DLPack fails may still offer the interface
      if (!e.matches(PyExc_Exception)) throw;  // KeyboardInterrupt and the like are not answers
    } catch (const nb::cast_error&) {
    } catch (const BadArgument&) {
    }
  }
  return nb::hasattr(obj, "__cuda_array_interface__");
}

nb::object& numpy() {
  static nb::object* module = new nb::object(nb::module_::import_("numpy"));  // leaked: outlives teardown
  return *module;
}

std::shared_ptr<void> keep_alive(nb::handle obj) {
  obj.inc_ref();
  return std::shared_ptr<void>(obj.ptr(), [](void* p) {
    nb::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

uintptr_t host_address(nb::handle host_array) {
  nb::object data = host_array.attr("__array_interface__")["data"];
  return nb::cast<uintptr_t>(data[0]);
}

void require_writeable(nb::handle host_array, const char* what) {
  if (!nb::cast<bool>(host_array.attr("flags")["WRITEABLE"]))
    throw BadValue(std::string(what) + " is a read-only NumPy array, and results would be written into it");
}

nb::tuple to_tuple(const Shape& values) {
  nb::list list;
  for (int64_t v : values) list.append(v);
  return nb::tuple(list);
}

namespace {

// A shape's or strides' entry; the core checks the values themselves.
int64_t shape_entry(nb::handle d) {
  nb::object value = nb::steal(PyNumber_Index(d.ptr()));
  if (!value.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow) throw BadValue(python_str(value) + " is out of range for an array dimension (an int64)");
  return n;
}

}  // namespace

Shape shape_from(nb::handle shape) {
  if (PyIndex_Check(shape.ptr())) return {shape_entry(shape)};
  Shape out;
  for (nb::handle d : shape) {
    if (!PyIndex_Check(d.ptr())) throw BadArgument("shape entries must be integers, not " + python_type_name(d));
    out.push_back(shape_entry(d));
  }
  return out;
}

nb::object numpy_dtype(DType dtype) {
  static nb::object* cache[kDTypeCount] = {};
  nb::object*& slot = cache[static_cast<int>(dtype)];
  if (!slot) {
    nb::object type = dtype == DType::BFloat16 ? nb::module_::import_("ml_dtypes").attr("bfloat16")
                                               : nb::object(nb::str(info(dtype).name));
    slot = new nb::object(numpy().attr("dtype")(type));
  }
  return *slot;
}

DType dtype_from_object(nb::handle dtype) {
  if (nb::isinstance<nb::str>(dtype)) return dtype_from_name(nb::cast<std::string>(dtype));
  return dtype_from_name(nb::cast<std::string>(numpy().attr("dtype")(dtype).attr("name")));
}

Array device_array_from(nb::handle obj) {
  if (nb::isinstance<Array>(obj)) return nb::cast<const Array&>(obj);
  if (nb::hasattr(obj, "__dlpack_device__") && nb::hasattr(obj, "__dlpack__")) {
    int type = dlpack_device_type(obj);
    if (type == kDLCUDA || type == kDLCUDAManaged) {
      try {
        return from_dlpack_object(obj);
      } catch (const BadArgument&) {
        nb::object interface = cuda_array_interface(obj);  // the producer may allow CAI where DLPack failed
        if (!interface.is_valid()) throw;
        return from_cuda_array_interface(obj, interface);
      }
    }
    nb::object interface = cuda_array_interface(obj);
    if (!interface.is_valid())
      throw BadArgument("expected device memory but got a " + python_type_name(obj) + " on the " +
                        (type == kDLCPU ? std::string("CPU") : "device type " + std::to_string(type)) +
                        "; copy it to the GPU first with jiasu.asarray(x)");
    return from_cuda_array_interface(obj, interface);
  }
  if (nb::object interface = cuda_array_interface(obj); interface.is_valid())
    return from_cuda_array_interface(obj, interface);
  throw BadArgument("expected device memory (a jiasu.Array or an object with __dlpack__ or "
                    "__cuda_array_interface__) but got " + python_type_name(obj) +
                    "; copy host data to the GPU with jiasu.asarray(x)");
}

// A NumPy dtype object's jiasu dtype, cached by identity (NumPy's built-in dtypes are singletons).
DType numpy_array_dtype(nb::handle dtype) {
  // Strong references keep the identities valid. Leaked: destroyed at exit, they would be released after
  // Python has finalized.
  static auto* known = new std::vector<std::pair<nb::object, DType>>();
  for (auto& [object, value] : *known)
    if (object.is(dtype)) return value;
  if (!nb::cast<bool>(dtype.attr("isnative")))
    throw BadArgument("byte-swapped NumPy arrays (dtype " + nb::cast<std::string>(nb::str(dtype)) +
                      ") are not supported; use .astype(x.dtype.newbyteorder('='))");
  DType value = dtype_from_object(dtype);
  if (known->size() < 64) known->emplace_back(nb::borrow(dtype), value);
  return value;
}

Array host_array_from(nb::handle obj, bool& read_only) {
  read_only = false;
  // No owner: a launch's argument tuple holds the arrays for as long as their views are used.
  if (numpy_ndarray_type() && PyObject_TypeCheck(obj.ptr(), numpy_ndarray_type())) {
    // NumPy's own fields through the buffer protocol: no Python objects are made on this path.
    Py_buffer view;
    DType dtype = numpy_array_dtype(obj.attr("dtype"));
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();  // dtypes the buffer protocol cannot describe (bfloat16): its interface dict instead
      nb::dict ai = nb::cast<nb::dict>(obj.attr("__array_interface__"));
      Layout layout = contiguous_layout(shape_from(ai["shape"]), itemsize(dtype));
      if (!ai["strides"].is_none()) layout.strides = shape_from(ai["strides"]);
      read_only = nb::cast<bool>(nb::tuple(ai["data"])[1]);
      auto ptr = static_cast<cu::CUdeviceptr>(nb::cast<uintptr_t>(nb::tuple(ai["data"])[0]));
      return adopt_view(dtype, std::move(layout), ptr, kCpuDevice, nullptr);
    }
    Layout layout;
    layout.itemsize = view.itemsize;
    layout.shape.assign(view.shape, view.shape + view.ndim);
    layout.strides.assign(view.strides, view.strides + view.ndim);
    read_only = view.readonly;
    auto ptr = reinterpret_cast<cu::CUdeviceptr>(view.buf);
    PyBuffer_Release(&view);
    return adopt_view(dtype, std::move(layout), ptr, kCpuDevice, nullptr);
  }
  if (nb::hasattr(obj, "__dlpack_device__") && nb::hasattr(obj, "__dlpack__") &&
      dlpack_device_type(obj) == kDLCPU)
    return from_dlpack_object(obj, true);
  throw BadArgument("expected an array in host memory but got " + python_type_name(obj));
}

// The fields of a NumPy structured dtype; null for any other dtype.
static std::shared_ptr<const fe::RecordLayout> record_layout(nb::handle dtype) {
  nb::object names = nb::getattr(dtype, "names", nb::none());
  if (names.is_none()) return nullptr;
  auto layout = std::make_shared<fe::RecordLayout>();
  layout->itemsize = nb::cast<int64_t>(dtype.attr("itemsize"));
  nb::object fields = dtype.attr("fields");
  for (nb::handle name : names) {
    fe::RecordField& f = layout->fields.emplace_back();
    f.name = nb::cast<std::string>(nb::str(name));
    nb::object entry = fields[name];
    nb::object type = entry[0];
    f.offset = nb::cast<int64_t>(entry[1]);
    nb::object subarray = type.attr("subdtype");
    if (!subarray.is_none()) {
      type = subarray[0];
      f.shape = shape_from(subarray[1]);
    }
    if (!nb::getattr(type, "names", nb::none()).is_none())
      throw BadArgument("record field '" + f.name + "' is itself a record: kernels take records of numbers and "
                        "arrays of numbers");
    try {
      f.dtype = dtype_from_object(type);
    } catch (const BadArgument& e) {
      throw BadArgument("record field '" + f.name + "': " + e.what());
    }
  }
  fe::check_record_layout(*layout);
  return layout;
}

std::optional<HostRecords> host_records_from(nb::handle obj) {
  const bool is_array = numpy_ndarray_type() && PyObject_TypeCheck(obj.ptr(), numpy_ndarray_type());
  if (!is_array && !numpy_scalar_type(obj.ptr())) return std::nullopt;
  nb::object dtype = obj.attr("dtype");
  std::shared_ptr<const fe::RecordLayout> layout = record_layout(dtype);
  if (!layout) return std::nullopt;
  nb::dict ai = nb::cast<nb::dict>(obj.attr("__array_interface__"));
  Layout memory = contiguous_layout(shape_from(ai["shape"]), layout->itemsize);
  if (!ai["strides"].is_none()) memory.strides = shape_from(ai["strides"]);
  nb::tuple data(ai["data"]);
  auto ptr = static_cast<cu::CUdeviceptr>(nb::cast<uintptr_t>(data[0]));
  bool read_only = nb::cast<bool>(data[1]);
  if (!is_array) {  // NumPy may call any scalar read-only; a record viewing an array is as writable as the array
    nb::object base = nb::getattr(obj, "base", nb::none());
    read_only = PyObject_TypeCheck(base.ptr(), numpy_ndarray_type()) &&
                !nb::cast<bool>(base.attr("flags").attr("writeable"));
  }
  // uint8 stands in for the record's dtype: the layout's itemsize is the record's.
  return HostRecords{adopt_view(DType::UInt8, std::move(memory), ptr, kCpuDevice, nullptr), std::move(layout),
                     !is_array, read_only};
}

PyTypeObject* array_type = nullptr;

// float(a), int(a) or complex(a) (`conversion`) of its one element, read to the host; a TypeError for more.
nb::object as_python(const Array& a, const char* conversion) {
  if (a.size() != 1) throw BadArgument(std::string("only one-element arrays can be converted to Python scalars (") +
                                       conversion + "() of an array of " + std::to_string(a.size()) + " elements)");
  nb::object element = get(a, nb::none(), nb::none()).attr("item")();
  return nb::module_::import_("builtins").attr(conversion)(element);
}

void bind_array(nb::module_& m) {
  m.def("empty", [](nb::handle shape, nb::handle dtype, nb::handle device, const std::string& order) {
    if (order != "C" && order != "F") throw BadValue("order must be 'C' or 'F', not '" + order + "'");
    return Array::empty(shape_from(shape), dtype_from_object(dtype), device_from(device), order == "F");
  }, nb::arg("shape"), nb::arg("dtype") = "float64", nb::arg("device").none() = nb::none(), nb::arg("order") = "C");
  m.def("as_device_array", &device_array_from, nb::arg("obj"),
        "A zero-copy jiasu.Array over any object with __dlpack__ or __cuda_array_interface__.");
  m.def("from_dlpack", [](nb::handle obj) {
    if (nb::isinstance<Array>(obj)) return nb::cast<const Array&>(obj);
    return from_dlpack_object(obj, true);
  }, nb::arg("x"), "A zero-copy jiasu.Array over a DLPack producer (GPU memory, or host memory as a CPU array).");

  nb::class_<Array> cls(m, "Array", "An n-dimensional array in GPU memory (or host memory, on the CPU device).",
                       nb::type_slots(array_slots));
  cls
      .def_prop_ro("shape", [](const Array& a) { return to_tuple(a.shape()); })
      .def_prop_ro("strides", [](const Array& a) { return to_tuple(a.strides()); })
      .def_prop_ro("dtype", [](const Array& a) { return numpy_dtype(a.dtype()); })
      .def_prop_ro("size", &Array::size)
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro("itemsize", [](const Array& a) { return a.layout().itemsize; })
      .def_prop_ro("device", [](const Array& a) { return Device{a.device()}; })
      .def_prop_ro("ptr", [](const Array& a) { return static_cast<uintptr_t>(a.data()); },
                   "Device address of the first element.")
      .def_prop_ro("is_c_contiguous", &Array::c_contiguous)
      .def("__len__", [](const Array& a) {
        if (a.ndim() == 0) throw BadArgument("len() of a 0-d array");
        return a.shape()[0];
      })
      .def("__getitem__", [](const Array& a, nb::handle key) -> nb::object {
        const std::vector<IndexItem> items = index_items(key);
        Array view = a.index(items);
        // An integer for every axis selects one element: NumPy gives its scalar, so does jiasu (a copy).
        const bool element = static_cast<int64_t>(items.size()) == a.ndim() &&
                             std::all_of(items.begin(), items.end(), [](const IndexItem& i) { return i.kind == IndexItem::Integer; });
        if (!element) return nb::cast(std::move(view));
        return get(view, nb::none(), nb::none())[nb::tuple()];
      }, nb::arg("key").none())
      // a[key] = value: a jiasu or other device array, or a scalar, is broadcast and converted on the array's
      // device by the elementwise engine; host data (NumPy arrays, lists) is converted by NumPy and copied in.
      .def("__setitem__", [](const Array& a, nb::handle key, nb::handle value) {
        const Array view = a.index(index_items(key));
        ops::Operand operand;
        std::optional<Array> held;
        const bool host_value = numpy_ndarray_type() && PyObject_TypeCheck(value.ptr(), numpy_ndarray_type());
        if (host_value || !operand_from(value, operand, held)) return set(view, value, nb::none());
        nb::gil_scoped_release unlocked;
        if (operand.array) ops::assign(view, *operand.array);
        else ops::assign(view, operand.scalar);
      }, nb::arg("key").none(), nb::arg("value").none())
      .def("reshape", [](const Array& a, nb::args shape) {
        return ops::reshape(a, shape.size() == 1 ? shape_from(shape[0]) : shape_from(shape));
      })
      .def("copy", [](const Array& a) {
        nb::gil_scoped_release unlocked;
        return ops::astype(a, a.dtype());
      }, "A C-contiguous copy on the same device.")
      .def("astype", [](const Array& a, nb::handle dtype) {
        const DType to = dtype_from_object(dtype);
        nb::gil_scoped_release unlocked;
        return ops::astype(a, to);
      }, nb::arg("dtype"), "A C-contiguous copy converted to dtype (NumPy's casts), on the same device.")
      .def("get", &get, nb::arg("stream") = nb::none(), nb::arg("out") = nb::none(),
           "Copy to a NumPy array. With a stream the copy is asynchronous: synchronize before reading.")
      .def("set", &set, nb::arg("value"), nb::arg("stream") = nb::none(),
           "Copy host data (anything NumPy can convert, broadcast to this shape) into this array.")
      // Numba's DeviceNDArray names (jiasu.cuda), where stream 0 is the default stream.
      .def("copy_to_host", [](const Array& a, nb::handle ary, nb::handle stream) {
        return get(a, numba_stream(stream), ary);
      }, nb::arg("ary") = nb::none(), nb::arg("stream") = 0, "Numba's name for get(stream, out=ary).")
      .def("copy_to_device", [](const Array& a, nb::handle ary, nb::handle stream) {
        set(a, ary, numba_stream(stream));
      }, nb::arg("ary"), nb::arg("stream") = 0, "Numba's name for set(ary, stream).")
      .def("_fill_bytes", [](const Array& a, nb::bytes value) {
        if (static_cast<int64_t>(value.size()) != a.layout().itemsize) throw BadValue("fill value has the wrong size");
        a.fill(value.data());
      })
      .def("free", [](const Array& a) { a.memory()->release(); },
           "Release the memory: this array and every jiasu view of it become unusable at once; the memory "
           "returns when the last export (a NumPy or DLPack view, a CUDA Array Interface consumer) is gone.")
      // float(a), int(a), complex(a) of a one-element array (a reduction's 0-d result), as NumPy converts them.
      .def("__float__", [](const Array& a) { return as_python(a, "float"); })
      .def("__int__", [](const Array& a) { return as_python(a, "int"); })
      .def("__complex__", [](const Array& a) { return as_python(a, "complex"); })
      .def("__array__", [](const Array& a, nb::handle dtype, nb::handle copy) {
        nb::object host = get(a, nb::none(), nb::none());
        return dtype.is_none() ? host : host.attr("astype")(dtype);
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def_prop_ro("__cuda_array_interface__", [](const Array& a) { return array_interface(a, true); })
      .def_prop_ro("__array_interface__", [](const Array& a) { return array_interface(a, false); })
      .def("__dlpack__", &dlpack)
      .def("__dlpack_device__", [](const Array& a) {
        return a.on_host() ? nb::make_tuple(kDLCPU, 0) : nb::make_tuple(kDLCUDA, a.device());
      })
      .def("__repr__", [](const Array& a) {
        std::string body = a.memory()->released() ? std::string("<freed>")
                                                  : nb::cast<std::string>(nb::repr(get(a, nb::none(), nb::none())));
        return "jiasu.Array(" + body + ", dtype=" + info(a.dtype()).name + ", device=" + std::to_string(a.device()) + ")";
      });
  bind_shape_methods(cls);
  array_type = reinterpret_cast<PyTypeObject*>(nb::type<Array>().ptr());
  bind_matmul(m);
  bind_ops(m);
}

}  // namespace jiasu::py
