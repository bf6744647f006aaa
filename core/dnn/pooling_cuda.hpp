// max_pool2d and avg_pool2d and their gradients on a GPU through fused kernels (dnn/runtime/pool_cuda.h): a
// thread per output column walking down a band of output rows, and for the gradients a thread per input element
// gathering from the windows that hold it. They take NCHW-contiguous and channels-last arrays; the callers
// compose engine calls for other layouts (dnn/pooling.cpp).
#pragma once

#include <string>

#include "array/array.hpp"
#include "dnn/nn.hpp"

namespace jiasu::dnn {

// Whether the fused kernels take `a` (a GPU array of a float dtype, NCHW-contiguous or channels-last).
bool fused_pool_applies(const Array& a);
// The pooled x (N, C, OH, OW), in x's layout.
Array fused_pool(const Array& x, const PoolParams& params, bool max, int64_t oh, int64_t ow);
// dx (x's shape and layout) from dy (N, C, OH, OW; any strides) and, for max, x.
Array fused_pool_backward(const Array& dy, const Array& x, const PoolParams& params, bool max);

// The kernels' CUDA C++ for one (dtype, max or average, backward or not, channels-last or not, 64-bit indices or
// int, window rows and columns: kh x kw compiled in, 0 for a window known only at run time; the forward pass's
// row stride sh likewise).
std::string pool_cuda_source(DType dtype, bool max, bool backward, bool channels_last, bool wide, int kh, int kw,
                             int sh);

}  // namespace jiasu::dnn
