// conv2d's passes through cuDNN (dnn/cudnn_graphs.hpp) where cuDNN runs them: libcudnn loaded on first use,
// a handle per device, a workspace from the device's memory pool, on the legacy default stream as jiasu's
// other operations (benchmark mode times its candidates there, with driver events). Where it cannot (jiasu
// built without cudnn-frontend, no libcudnn 9, no engine for the problem, float64) the caller takes the
// im2col path, and the report says why.
#pragma once

#include <cstdint>
#include <string>

#include "array/array.hpp"
#include "dnn/cudnn_graphs.hpp"
#include "dnn/nn.hpp"

namespace jiasu::dnn {

// Runs one pass on GPU arrays; false when cuDNN cannot. Forward: x, w -> y; DataGradient: y (dy), w -> x (dx);
// WeightGradient: y (dy), x -> w (dw). Throws CudaError when cuDNN fails while running a plan it built.
bool cudnn_convolution(cudnn::Pass pass, const Array& x, const Array& w, const Array& y, const ConvParams& params);

struct CudnnReport {
  bool built = false;          // with cudnn-frontend
  std::string frontend;        // its version
  bool loaded = false;         // libcudnn 9 found and loaded
  std::string library, version, why_not;  // the file, "9.19.0", why it is not used
  int64_t passes = 0;          // passes cuDNN ran
  int64_t fallbacks = 0;       // passes it declined (im2col ran them)
  std::string last_fallback;   // the last reason
};
CudnnReport cudnn_report();

// float32 convolutions may use TF32 tensor cores (PyTorch's torch.backends.cudnn.allow_tf32; off by default).
void set_allow_tf32(bool allow);
bool allow_tf32();
// The first run of each convolution problem times all of cuDNN's candidate plans and keeps the fastest
// (PyTorch's torch.backends.cudnn.benchmark; off by default: the heuristic's first plan that supports it).
void set_benchmark(bool on);
bool benchmark();

}  // namespace jiasu::dnn
