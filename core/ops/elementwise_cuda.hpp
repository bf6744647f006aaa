// Generated GPU kernels of the elementwise engine: the CUDA C++ of one (operation, dtypes, layout class),
// and the process-wide cache of compiled kernels. The cache's key is a few bytes packed into an integer,
// so a call looks its kernel up without building a string; a new key generates the source once, and
// NVRTC compiles it through SourceModule (with the disk cache) per device. Other generated array kernels
// (reductions) can key their own kernels the same way: KernelCache takes any 64-bit key and a source maker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "array/dtype.hpp"
#include "ops/elementwise.hpp"
#include "runtime/module.hpp"

namespace jiasu::ops {

// The runtime header generated array kernels start with (ops/runtime/ops_cuda.h, embedded).
const std::string& ops_cuda_header();

enum class LayoutClass : uint8_t { Contiguous, Strided, Tiled };

// Everything a generated elementwise kernel is specialised on.
struct ElementwiseSpec {
  Ufunc op = Ufunc::Add;
  const CustomLoop* custom = nullptr;  // a user's function instead of op
  int inputs = 0;
  DType out = DType::Float32;
  DType in[3] = {};      // an array input's dtype (its elements are converted to loop[i] on the way in)
  DType loop[3] = {};
  bool scalar[3] = {};   // a kernel parameter in loop[i]'s type instead of an array
  LayoutClass layout = LayoutClass::Contiguous;
  int vector = 1;        // elements per load/store (up to 16 bytes): contiguous, of every operand; strided,
                         // along the innermost dimension, of the output and each input not broadcast along it
  bool broadcast_inner[3] = {};  // strided with vector > 1: the array input's innermost stride is 0
  bool tiled[3] = {};    // tiled: the array input is read through shared memory (contiguous along the
                         // second-innermost dimension, strided along the innermost: a.T in a.T + b)
  int ndim = 1;          // strided and tiled: dimensions after collapsing (tiled: at least 2)
  bool wide_index = false;  // strided only: 64-bit index math (the tiled kernel's offsets are always 64-bit)

  uint64_t key() const;
};

constexpr const char* kElementwiseKernelName = "jiasu_elementwise";
constexpr int kElementwiseBlock = 256;
constexpr int kElementwiseUnroll = 4;  // vectors per thread (strided: positions, each of `vector` elements)
constexpr int kElementwiseTile = 32;   // tiled: a block's tile is kElementwiseTile x kElementwiseTile elements

// The kernel's complete CUDA C++ translation unit (runtime header included).
std::string elementwise_cuda_source(const ElementwiseSpec& spec);

// Compiled kernels by key, per device. Thread-safe; kernels live as long as the process.
class KernelCache {
 public:
  // The kernel `name` (a string literal: it is kept as it is) for `key` on `device`, compiled from make_source()
  // the first time. Each name has keys of its own.
  // file_name names the source in NVRTC's messages (default: name + ".cu").
  Kernel& get(uint64_t key, int device, const char* name, const std::function<std::string()>& make_source,
              const std::function<std::string()>& file_name = nullptr);
};
KernelCache& kernel_cache();

}  // namespace jiasu::ops
