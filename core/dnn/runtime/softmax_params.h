// The softmax kernels' parameters (dnn/runtime/softmax_cuda.h), as the host packs them (dnn/softmax_cuda.cpp).
#pragma once

namespace jiasu {
namespace softmax {

struct Params {
  unsigned long long x, y, dy, dx;  // forward: x -> y; backward: dy, y -> dx
  long long rows;
  int n;                            // elements per row
  long long x_stride, y_stride, dy_stride, dx_stride;  // elements between rows
};

}  // namespace softmax
}  // namespace jiasu
