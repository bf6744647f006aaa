// Shared by the binding files: the Python face of the C++ core. No logic lives here beyond converting
// Python objects to core types.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "array/array.hpp"
#include "runtime/device.hpp"
#include "runtime/driver.hpp"
#include "runtime/module.hpp"

namespace nb = nanobind;

namespace jiasu::py {

// The Python face of one CUDA device (jiasu.Device).
struct Device {
  int ordinal;
  const DeviceProperties& props() const { return device_properties(ordinal); }
};

void bind_errors(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_array(nb::module_& m);
void bind_launch(nb::module_& m);
void bind_kernel(nb::module_& m);

// Shared by the launch paths (launch.cpp, kernel.cpp).
extern PyTypeObject* array_type;  // jiasu.Array, for exact-type checks on the hot path
PyObject* numpy_generic();  // numpy.generic once NumPy is loaded, else nullptr
Dim3 dim3_from(nb::handle value, const char* what);
nb::dict attributes(const Kernel& kernel);
void require_gpu();  // throws the precise reason when no GPU is usable

// None, a jiasu Stream, or a raw CUstream address as an int.
cu::CUstream stream_handle(nb::handle stream);

// A jiasu Array viewing the device memory of `obj` (jiasu Array, __dlpack__ or
// __cuda_array_interface__ producer), keeping `obj` alive; nullptr-free: throws BadArgument otherwise.
Array device_array_from(nb::handle obj);

// NumPy's dtype object for `dtype` (bfloat16 comes from ml_dtypes).
nb::object numpy_dtype(DType dtype);
DType dtype_from_object(nb::handle dtype);

// "numpy.ndarray", "torch.Tensor", ...: for error messages.
inline std::string python_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

nb::tuple to_tuple(const Shape& values);
Shape shape_from(nb::handle shape);  // int or sequence of ints

}  // namespace jiasu::py
