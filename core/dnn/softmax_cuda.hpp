// softmax and log_softmax, and their gradients, on a GPU through fused kernels (dnn/runtime/softmax_cuda.h):
// one read and one write per element where a row fits a warp's registers (up to 1024 elements), two reads
// beyond. They take C-contiguous arrays whose softmax dimension is the last; the callers compose engine calls
// for any other layout (dnn/softmax.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "array/array.hpp"

namespace jiasu::dnn {

// Whether the fused kernels take `a` along `axis`.
bool fused_softmax_applies(const Array& a, int64_t axis);
// y = softmax(x) or log_softmax(x) along the last axis (fused_softmax_applies must hold); a new array.
Array fused_softmax(const Array& x, bool log);
// dx from dy and y (both C-contiguous, of one shape and dtype) along the last axis.
Array fused_softmax_backward(const Array& dy, const Array& y, bool log);

// The kernels' CUDA C++ for one (dtype, log, backward, K): K registers per lane (a power of two up to 32) for
// rows of at most 32 * K elements, 0 for the block-per-row kernel.
std::string softmax_cuda_source(DType dtype, bool log, bool backward, int registers);

}  // namespace jiasu::dnn
