// conv2d's 1x1 passes (stride 1, no padding, one group) as one matrix product each (ops/matmul: cuBLASLt on a
// GPU, NumPy on the CPU backend), on views of the arrays without a copy: a channels-last array is a (N*H*W, C)
// matrix, an NCHW-contiguous one a batch of N (C, H*W) matrices (its weight gradient, a sum over the images,
// is N products and their sum, for float32 and float64, where those take no more memory than the input). cuDNN's float32 1x1 kernels run at a fraction of
// cuBLASLt's float32 product rate (1x1 64->256 on 56x56 on an H200: 27 TFLOP/s), and the im2col path would
// copy. In benchmark mode the first use of a problem on a GPU times this route against cuDNN and keeps the
// faster.
#pragma once

#include "array/array.hpp"
#include "dnn/cudnn_graphs.hpp"
#include "dnn/nn.hpp"

namespace jiasu::dnn {

// Runs `pass` (operands as cudnn_convolution's: Forward x, w -> y; DataGradient y (dy), w -> x (dx);
// WeightGradient y (dy), x -> w (dw)) as a matrix product; false when the problem is not one this route takes
// (another window, stride, padding or group count; half types on the CPU; layouts with no such views; a
// weight gradient of half types or of more images than its temporary may take without channels-last rows) or
// benchmark mode found cuDNN faster for it.
bool pointwise_convolution(cudnn::Pass pass, const Array& x, const Array& w, const Array& y, const ConvParams& params);

// matmul(a, b, out) for a convolution: jiasu.nn.allow_tf32 rules float32 products, not the matmul precision.
Array convolution_product(const Array& a, const Array& b, const Array* out = nullptr);

}  // namespace jiasu::dnn
