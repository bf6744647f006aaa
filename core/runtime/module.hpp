// Loaded code (CUBIN or PTX) and its kernels; packing launch arguments and launching.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/driver.hpp"

namespace jiasu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class Kernel;

class Module : public std::enable_shared_from_this<Module> {
 public:
  // Loads `image` (CUBIN bytes or NUL-free PTX text) into `device`'s primary context.
  static std::shared_ptr<Module> load(int device, const std::string& image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  int device() const { return device_; }
  cu::CUmodule handle() const { return handle_; }
  // Throws CudaError(CUDA_ERROR_NOT_FOUND) naming the kernels the module does have.
  std::shared_ptr<Kernel> kernel(const std::string& name);
  std::vector<std::string> kernel_names() const;  // empty on drivers older than 12.4
  // The device address of the module's __device__ variable `name` (extern "C"), of `bytes` bytes.
  cu::CUdeviceptr global(const char* name, size_t bytes) const;

 private:
  Module(int device, cu::CUmodule handle) : device_(device), handle_(handle) {}
  int device_;
  cu::CUmodule handle_;
};

struct KernelParam {
  size_t offset = 0;
  size_t size = 0;
};

// A kernel's parameters as the compiled code declares them (known on drivers with CUDA 12.4+).
uint64_t new_param_layout_id();  // 1, 2, 3, ...: never reused within a process

struct ParamLayout {
  std::string kernel_name;
  bool known = false;
  std::vector<KernelParam> params;
  // Unique in the process: LaunchArgs keeps its parameter pointers while it launches with the same layout.
  uint64_t id = new_param_layout_id();
};

struct KernelAttributes {
  int registers = 0;
  int local_bytes = 0;          // per thread; non-zero means spills or local arrays
  int static_shared_bytes = 0;
  int const_bytes = 0;          // the kernel's own __constant__ data
  int max_threads_per_block = 0;
};

class Kernel {
 public:
  Kernel(std::shared_ptr<Module> module, cu::CUfunction function, std::string name);

  const std::string& name() const { return layout_.kernel_name; }
  int device() const { return device_; }
  cu::CUfunction handle() const { return function_; }
  const KernelAttributes& attributes() const { return attributes_; }
  const ParamLayout& param_layout() const { return layout_; }
  const Module& module() const { return *module_; }

  // Checks the configuration against the device and this kernel, then launches with the packed `args`:
  // cooperatively once set_cooperative() was called, and then a grid the device cannot hold at once is a
  // LaunchError (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) that says how many blocks fit.
  void launch(Dim3 grid, Dim3 block, class LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  // Every launch() of this kernel is cooperative: its code waits at grid barriers.
  void set_cooperative() { cooperative_ = true; }
  // The kernel's code starts by waiting for the grid before it (griddepcontrol.wait), so that its launches into a
  // graph this thread captures may overlap that grid (programmatic dependent launch): where the device (compute
  // capability 9.0 and up) and the driver (cuLaunchKernelEx) allow it, they do.
  void set_waits_for_prior_grid();
  // A launch whose blocks are all resident at once, so that they may wait for each other; false when the driver
  // cannot promise it (no cooperative launch, or the grid exceeds what fits), and nothing was launched.
  bool launch_cooperative(Dim3 grid, Dim3 block, class LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  int max_active_blocks_per_multiprocessor(int block_size, size_t shared_bytes) const;
  // The most blocks of `threads` threads that are resident at once on the device: the largest grid of a
  // cooperative launch; 0 for blocks of more threads than the kernel can run.
  int64_t max_cooperative_blocks(int64_t threads, size_t shared_bytes) const;
  // The block size (a power of two from 64 to 1024) with the most resident threads per multiprocessor.
  // Remembered for the last shared_bytes asked about: forall launches ask at every launch.
  int occupancy_block_size(size_t shared_bytes);

 private:
  void check_config(Dim3 grid, Dim3 block, size_t shared_bytes);
  void launch_now(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  void launch_profiled(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  cu::CUresult try_cooperative(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  void launch_grid_synced(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream);
  cu::CUresult launch_overlapping(Dim3 grid, Dim3 block, size_t shared_bytes, cu::CUstream stream, void** params,
                                  void** extra);

  std::shared_ptr<Module> module_;
  int device_;  // the module's, kept here for the launch path
  cu::CUfunction function_;
  decltype(cu::DriverApi::cuLaunchKernel) launch_kernel_;  // the driver's, looked up once
  ParamLayout layout_;
  KernelAttributes attributes_;
  size_t dynamic_shared_allowed_ = 48 * 1024;  // raised on demand, up to the device's opt-in limit
  bool cooperative_ = false;
  bool overlaps_in_capture_ = false;  // set_waits_for_prior_grid() on a device and driver that allow it
  std::atomic<uint64_t> occupancy_answer_{0};    // shared_bytes * 2048 + block size; 0 before the first
};

// Packs the arguments of one launch into the kernel's parameter layout. Each argument is checked
// against the declared parameter size when the layout is known.
class LaunchArgs {
 public:
  void begin(const ParamLayout& layout) {
    layout_ = &layout;
    count_ = 0;
    size_ = 0;
    if (layout.id != pointers_for_) point_into_buffer();
  }
  // Size of the parameter the next argument fills; 0 when the layout is unknown or all are filled.
  size_t next_size() const;
  size_t count() const { return count_; }
  // `what` describes the argument for error messages (e.g. "numpy.float64").
  void add(const void* value, size_t size, size_t align, const char* what) {
    std::memcpy(slot(size, align, what), value, size);
  }
  // Where the next argument's `size` bytes go, for callers that write them in place.
  unsigned char* slot(size_t size, size_t align, const char* what) {
    const auto& params = layout_->params;
    if (!layout_->known || count_ >= params.size() || params[count_].size != size)
      return checked_slot(size, align, what);
    const KernelParam& p = params[count_++];  // the launch path: inline, so a pointer is one move
    size_ = p.offset + size > size_ ? p.offset + size : size_;
    return buffer_.data() + p.offset;
  }
  // Checks that every parameter got an argument.
  void finish() const {
    if (layout_->known && count_ != layout_->params.size()) throw_missing_arguments();
  }
  const void* data() const { return buffer_.data(); }
  // The packed bytes, for rewriting arguments in place between launches with the same layout.
  unsigned char* buffer() { return buffer_.data(); }
  size_t size() const { return size_; }
  // With a known layout: one pointer per parameter into data(), the form cuLaunchKernel takes as
  // kernelParams; nullptr otherwise (the packed buffer then goes as CU_LAUNCH_PARAM_BUFFER_POINTER).
  void** param_pointers() { return layout_->known ? pointers_.data() : nullptr; }

 private:
  void point_into_buffer();
  [[noreturn]] void throw_missing_arguments() const;
  unsigned char* checked_slot(size_t size, size_t align, const char* what);

  const ParamLayout* layout_ = nullptr;
  size_t count_ = 0;
  size_t size_ = 0;
  std::vector<unsigned char> buffer_;
  std::vector<void*> pointers_;
  uint64_t pointers_for_ = 0;  // the layout id pointers_ was made for
};

}  // namespace jiasu
