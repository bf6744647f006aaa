// cuDNN's graph API through NVIDIA's cudnn-frontend, behind an interface free of CUDA and jiasu types: the
// frontend's headers (and cuda.h's macros) stay inside cudnn_graphs.cpp, the one translation unit that
// includes them (it also compiles slowly). Built without the frontend's headers, built() is false and the
// rest is never called. Plans are built once per problem and cached for the process: the heuristic's first
// plan that supports the problem or, in benchmark mode, the fastest of all candidates on the problem's
// first run.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace jiasu::dnn::cudnn {

// Whether this build has the frontend (its headers were found at build time).
bool built();
// The frontend's version, "1.32.0" (empty when not built).
std::string frontend_version();
// Hands the frontend the loaded libcudnn (a dlopen handle), once, before anything else.
void set_library(void* dlhandle);

// A cudnnHandle_t; creating one needs the device's context current on the thread.
void* create_handle();
// Makes the handle's work go to `stream` (a CUstream; null: the legacy default stream).
void set_stream(void* handle, void* stream);

enum class Pass { Forward, DataGradient, WeightGradient };
enum class Type { Half, BFloat16, Float, Double };

// A 4-D tensor: dims (N, C, H, W) and strides, in elements.
struct Tensor {
  std::array<int64_t, 4> dims{}, strides{};
};

struct ConvProblem {
  Pass pass = Pass::Forward;
  Type type = Type::Float;
  Tensor x, w, y;  // y: the output of the forward pass (for the gradients: its gradient)
  std::array<int64_t, 2> stride{}, dilation{}, pad_before{}, pad_after{};
  bool allow_tf32 = false;
  bool benchmark = false;      // time every candidate plan on the first run and keep the fastest
  int sm_version = 90;         // the device's compute capability, as 90
  int alignment[3] = {};       // of x, w, y's addresses: the largest power of two up to 16 dividing each
  int device = 0;
};

// cuDNN has no plan for the problem (its engines refuse it), or the build has no frontend.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Anything else the frontend or cuDNN reports.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The GPU milliseconds that one call of `run` takes on the handle's stream, measured by the caller (this side
// has no CUDA runtime), which may call it several times, a warm-up first. What it throws reaches execute()'s
// caller.
using GpuTimer = std::function<double(const std::function<void()>& run)>;

// The problem's plan, built on first use (throws Unsupported or Failure); the workspace the next execute()
// needs, in bytes. In benchmark mode, until a plan is chosen: the largest any candidate needs.
size_t prepare(const ConvProblem& problem, void* handle);
// Runs it: the forward pass reads x and w and writes y; DataGradient reads y (dy) and w, writes x (dx);
// WeightGradient reads y (dy) and x, writes w (dw). In benchmark mode the first run times each candidate on
// these buffers with `timer`, keeps the fastest for the problem and
// leaves its result; a candidate that fails is dropped, and Unsupported comes when none is left.
void execute(const ConvProblem& problem, void* handle, void* x, void* w, void* y, void* workspace,
             const GpuTimer& timer);

}  // namespace jiasu::dnn::cudnn
