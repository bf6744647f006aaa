// The pooling kernels' parameters (dnn/runtime/pool_cuda.h), as the host packs them (dnn/pooling_cuda.cpp).
#pragma once

namespace jiasu {
namespace pool {

// The forward kernel's output rows per thread (a band, walked down): enough to reuse rows, few enough to fill a GPU.
constexpr int kBand = 8;

struct Params {
  unsigned long long x, y, dy, dx;  // forward: x -> y; backward: dy (and x, for max) -> dx
  long long n, c, h, w, oh, ow;
  int kh, kw, sh, sw, ph, pw;
  int count_include_pad;            // avg: padding counts in the divisor
  long long x_stride[4], y_stride[4], dy_stride[4], dx_stride[4];  // elements, in (N, C, H, W) order
};

}  // namespace pool
}  // namespace jiasu
