// batch_norm's three passes on a GPU through fused kernels (dnn/runtime/batch_norm_cuda.h): inference in one
// elementwise pass; training and the gradients in one cooperative kernel that reads x (and dy) from DRAM once and
// re-reads it from L2 after a grid-wide barrier. They take NCHW-contiguous arrays of any rank >= 2 and
// channels-last 4-D ones, with per-channel vectors of any float dtype and stride; the callers check the
// arguments, and compose engine calls for other layouts and where a cooperative launch is unavailable
// (dnn/batch_norm.cpp).
#pragma once

#include <optional>
#include <string>

#include "array/array.hpp"
#include "dnn/nn.hpp"

namespace jiasu::dnn {

// Whether the fused kernels take x: a non-empty GPU array of a float dtype, NCHW-contiguous or channels-last.
bool fused_batch_norm_applies(const Array& x);
// And the gradients': grad_y in x's layout too.
bool fused_batch_norm_backward_applies(const Array& grad_y, const Array& x);

Array fused_batch_norm_inference(const Array& x, const Array& running_mean, const Array& running_var,
                                 const Array* weight, const Array* bias, double eps);
// Nothing when the device cannot hold the cooperative kernel's grid; nothing has changed then.
std::optional<BatchNormTraining> fused_batch_norm_training(const Array& x, const Array* weight, const Array* bias,
                                                           const Array* running_mean, const Array* running_var,
                                                           double momentum, double eps);
std::optional<BatchNormGradients> fused_batch_norm_backward(const Array& grad_y, const Array& x, const Array* weight,
                                                            const Array& saved_mean, const Array& saved_invstd);

enum class BatchNormPass { Inference, Training, Backward };
// The kernels' CUDA C++ for one (dtype, pass, rows layout or planes, 16-byte packs (planes only) or single
// elements, 64-bit indices or int).
std::string batch_norm_cuda_source(DType dtype, BatchNormPass pass, bool rows, bool packed, bool wide);

}  // namespace jiasu::dnn
