// The argument checks and type handling jiasu.nn's operations share: PyTorch's rules and messages, the
// function named as Python sees it ("jiasu.nn.softmax").
#pragma once

#include <cstdint>
#include <string>

#include "array/array.hpp"

namespace jiasu::dnn {

// BadArgument unless `a` has a float dtype; `what` names the argument.
void require_float(const Array& a, const char* function, const char* what);
// BadArgument unless a and b have one dtype, InvalidArrayError unless one device.
void require_like(const Array& a, const char* a_name, const Array& b, const char* b_name, const char* function);
// InvalidArrayError unless a and b live on one device.
void require_same_device(const Array& a, const char* a_name, const Array& b, const char* b_name, const char* function);
// require_like, and BadValue unless a and b have one shape.
void require_same(const Array& a, const char* a_name, const Array& b, const char* b_name, const char* function);
// `dim` in [0, ndim) from PyTorch's [-ndim, ndim) (a 0-d array counts as 1-d); OutOfRange otherwise.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* function);
// `a` as float32 when it is float16 or bfloat16 (PyTorch computes those in float32), else `a` itself.
Array computed_in_float32(const Array& a);
// `a` converted to `dtype` when it is not of it already.
Array rounded_back(const Array& a, DType dtype);

}  // namespace jiasu::dnn
