// The conversion of a kernel launch's Python arguments into the core's LaunchArguments (program/launch.hpp):
// numbers, NumPy scalars, tuples of them and structured data. Arrays are the launch's own business (kernel.cpp).
#pragma once

#include <deque>
#include <string>

#include "common.hpp"
#include "program/launch.hpp"

namespace jiasu::py {

// What a scalar argument was in Python (LaunchArgument::scalar_kind): the repeat launch converts the next
// argument in its place the same way. A NumPy scalar's scalar_type is its (static) type object.
enum ScalarKind : uint8_t { kOtherScalar = 0, kPythonInt, kPythonFloat, kPythonBool, kNumpyScalar, kPythonComplex };

// A Python float, int, bool or complex (exactly those types).
bool is_python_number(PyObject* o);
// Scalars (Python and NumPy) and tuples of them: their bytes and dtype. False for anything else.
bool classify_scalar(PyObject* o, size_t index, const std::string& kernel, LaunchArgument& a);
// A NumPy array of a subclass whose memory the GPU reads and writes in place (jiasu.cuda.mapped_array and
// managed_array), which says so with __cuda_array_interface__: a GPU launch passes it by its device address, as
// any such object, instead of staging it. Plain NumPy arrays are not asked: their launches cost nothing more.
bool in_device_memory(PyObject* o);
// A NumPy structured array or record scalar: `a` describes it, its memory in place (kept in `temporaries`).
// False for any other object. Callers ask only once the ordinary conversion failed (records have no jiasu
// dtype), so that other arguments pay nothing for records.
bool record_argument(nb::handle value, size_t index, const std::string& kernel, LaunchArgument& a,
                     std::deque<Array>& temporaries);
// Before a kernel that prints runs on the CPU: what Python printed before the launch goes out first (sys.stdout
// may hold it in its buffer; the kernel's lines go through C's stdout, which the launch flushes at its end).
void flush_python_stdout();
// The signature entry of an argument from its type alone: nothing is copied or wrapped, so this works
// without a GPU (k.specialize).
void append_type_key(std::string& key, nb::handle value, size_t index, const std::string& kernel,
                     const KernelLauncher& launcher);

}  // namespace jiasu::py
