// The batch-norm kernels' parameters (dnn/runtime/batch_norm_cuda.h), as the host packs them
// (dnn/batch_norm_cuda.cpp).
#pragma once

namespace jiasu {
namespace batch_norm {

constexpr int kBlock = 256;  // threads per block: the kernels' shared arrays are sized for it
constexpr int kUnroll = 4;   // loads in flight per thread

enum VectorType : int { kFloat16, kBFloat16, kFloat32, kFloat64 };

// A per-channel vector (C,) of any float dtype and stride; data 0 when absent.
struct Vector {
  unsigned long long data;
  long long stride;  // bytes between channels
  int type;          // a VectorType
};

struct Params {
  unsigned long long x, y, dy, dx;  // forward: x -> y; backward: dy, x -> dx
  Vector weight, bias;
  Vector running_mean, running_var;  // read by inference, updated in place by training when present
  Vector saved_mean, saved_invstd;   // written by training, read by the backward pass
  Vector grad_weight, grad_bias;     // written by the backward pass
  // Zeroed workspace of the cooperative kernels: two doubles per channel, then an arrival counter per group.
  unsigned long long sums, arrivals;
  // Planes: x is (n, c, s) with s > 1, C-contiguous. Rows: (n rows, c) with channels contiguous, s = 1.
  long long n, c, s;
  long long group_channels;  // channels per group of the cooperative kernels (planes)
  double momentum, eps;
};

}  // namespace batch_norm
}  // namespace jiasu
