#include "runtime/module.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "runtime/device.hpp"
#include "runtime/graph.hpp"
#include "runtime/profiler.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

LaunchError launch_error(cu::CUresult code, const std::string& message) {
  return LaunchError(code, cu::error_name(code), message);
}

}  // namespace

std::shared_ptr<Module> Module::load(int device, const std::string& image) {
  activate(device);
  cu::CUmodule handle = nullptr;
  cu::check(cu::driver().cuModuleLoadData(&handle, image.c_str()), "cuModuleLoadData");
  return std::shared_ptr<Module>(new Module(device, handle));
}

Module::~Module() {
  try {
    activate(device_);
    cu::driver().cuModuleUnload(handle_);
  } catch (const Error&) {
    // The driver is gone at process exit; so is the module.
  }
}

std::vector<std::string> Module::kernel_names() const {
  const auto& d = cu::driver();
  std::vector<std::string> names;
  unsigned count = 0;
  if (!d.cuModuleGetFunctionCount || !d.cuModuleEnumerateFunctions || !d.cuFuncGetName ||
      d.cuModuleGetFunctionCount(&count, handle_) != cu::CUDA_SUCCESS)
    return names;
  std::vector<cu::CUfunction> functions(count);
  if (d.cuModuleEnumerateFunctions(functions.data(), count, handle_) != cu::CUDA_SUCCESS) return names;
  for (auto f : functions) {
    const char* name = nullptr;
    if (d.cuFuncGetName(&name, f) == cu::CUDA_SUCCESS && name) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

cu::CUdeviceptr Module::global(const char* name, size_t bytes) const {
  cu::CUdeviceptr ptr = 0;
  size_t size = 0;
  cu::check(cu::driver().cuModuleGetGlobal(&ptr, &size, handle_, name), "cuModuleGetGlobal");
  if (size != bytes)
    throw LaunchError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", std::string("the module's ") + name +
                      " has " + std::to_string(size) + " bytes, not " + std::to_string(bytes));
  return ptr;
}

std::shared_ptr<Kernel> Module::kernel(const std::string& name) {
  activate(device_);
  cu::CUfunction function = nullptr;
  cu::CUresult r = cu::driver().cuModuleGetFunction(&function, handle_, name.c_str());
  auto names = r == cu::CUDA_ERROR_NOT_FOUND ? kernel_names() : std::vector<std::string>();
  if (r == cu::CUDA_ERROR_NOT_FOUND) {
    // A kernel declared without extern "C" has a mangled name; accept it when the plain name is unique.
    std::string prefix = "_Z" + std::to_string(name.size()) + name;
    std::vector<std::string> mangled;
    for (const auto& n : names)
      if (n.rfind(prefix, 0) == 0) mangled.push_back(n);
    if (mangled.size() == 1) {
      cu::check(cu::driver().cuModuleGetFunction(&function, handle_, mangled[0].c_str()), "cuModuleGetFunction");
      return std::make_shared<Kernel>(shared_from_this(), function, name);
    }
  }
  if (r == cu::CUDA_ERROR_NOT_FOUND) {
    std::string message = "no kernel named '" + name + "' in this module";
    if (!names.empty()) {
      message += "; it has:";
      for (size_t i = 0; i < names.size(); ++i) message += (i ? ", " : " ") + names[i];
    }
    message += " (C++ names are mangled unless declared extern \"C\")";
    throw CudaError(r, "CUDA_ERROR_NOT_FOUND", message);
  }
  cu::check(r, "cuModuleGetFunction");
  return std::make_shared<Kernel>(shared_from_this(), function, name);
}

Kernel::Kernel(std::shared_ptr<Module> module, cu::CUfunction function, std::string name)
    : module_(std::move(module)), device_(module_->device()), function_(function),
      launch_kernel_(cu::driver().cuLaunchKernel) {
  layout_.kernel_name = std::move(name);
  const auto& d = cu::driver();
  auto attr = [&](int attribute) {
    int value = 0;
    cu::check(d.cuFuncGetAttribute(&value, attribute, function_), "cuFuncGetAttribute");
    return value;
  };
  attributes_.registers = attr(cu::kFuncNumRegs);
  attributes_.local_bytes = attr(cu::kFuncLocalSizeBytes);
  attributes_.static_shared_bytes = attr(cu::kFuncSharedSizeBytes);
  attributes_.const_bytes = attr(cu::kFuncConstSizeBytes);
  attributes_.max_threads_per_block = attr(cu::kFuncMaxThreadsPerBlock);
  dynamic_shared_allowed_ = static_cast<size_t>(attr(cu::kFuncMaxDynamicSharedSizeBytes));
  if (d.cuFuncGetParamInfo) {
    layout_.known = true;
    for (size_t i = 0;; ++i) {
      KernelParam p;
      if (d.cuFuncGetParamInfo(function_, i, &p.offset, &p.size) != cu::CUDA_SUCCESS) break;
      layout_.params.push_back(p);
    }
  }
}

void Kernel::check_config(Dim3 grid, Dim3 block, size_t shared_bytes) {
  const DeviceProperties& p = device_properties(device());
  unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i) {
    if (g[i] == 0 || b[i] == 0)
      throw launch_error(cu::CUDA_ERROR_INVALID_VALUE,
                         "grid " + dims(grid) + " and block " + dims(block) + " must be at least 1 in every dimension");
    if (g[i] > static_cast<unsigned>(p.max_grid_dim[i]))
      throw launch_error(cu::CUDA_ERROR_INVALID_VALUE,
                         "grid " + dims(grid) + " exceeds this device's limit " +
                             dims({unsigned(p.max_grid_dim[0]), unsigned(p.max_grid_dim[1]), unsigned(p.max_grid_dim[2])}));
    if (b[i] > static_cast<unsigned>(p.max_block_dim[i]))
      throw launch_error(cu::CUDA_ERROR_INVALID_VALUE,
                         "block " + dims(block) + " exceeds this device's limit " +
                             dims({unsigned(p.max_block_dim[0]), unsigned(p.max_block_dim[1]), unsigned(p.max_block_dim[2])}));
  }
  unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads > static_cast<unsigned long long>(attributes_.max_threads_per_block))
    throw launch_error(cu::CUDA_ERROR_INVALID_VALUE,
                       "block " + dims(block) + " has " + std::to_string(threads) + " threads; kernel '" + name() +
                           "' can run at most " + std::to_string(attributes_.max_threads_per_block) +
                           " threads per block on " + p.name);
  size_t limit = p.max_shared_memory_per_block_optin - attributes_.static_shared_bytes;
  if (shared_bytes > limit)
    throw launch_error(cu::CUDA_ERROR_INVALID_VALUE,
                       "shared_mem=" + std::to_string(shared_bytes) + " bytes is more dynamic shared memory than kernel '" +
                           name() + "' can have on " + p.name + " (at most " + std::to_string(limit) + " bytes)");
  if (shared_bytes > dynamic_shared_allowed_) {
    cu::check(cu::driver().cuFuncSetAttribute(function_, cu::kFuncMaxDynamicSharedSizeBytes, int(shared_bytes)),
              "cuFuncSetAttribute");
    dynamic_shared_allowed_ = shared_bytes;
  }
}

[[gnu::hot]] void Kernel::launch(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream) {
  stream = work_stream(stream);
  if (profiling()) [[unlikely]]
    return launch_profiled(grid, block, args, shared_bytes, stream);
  launch_now(grid, block, args, shared_bytes, stream);
}

[[gnu::cold, gnu::noinline]] void Kernel::launch_profiled(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes,
                                                          cu::CUstream stream) {
  LaunchRecord record;
  record.name = name();
  record.device = device();
  record.grid = grid;
  record.block = block;
  record.shared_bytes = shared_bytes;
  record.has_attributes = true;
  record.attributes = attributes_;
  const size_t token = profile_begin(std::move(record), stream);
  launch_now(grid, block, args, shared_bytes, stream);
  profile_end(token, stream);
}

[[gnu::always_inline]] inline void Kernel::launch_now(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes,
                                                      cu::CUstream stream) {
  unsigned long long threads = 1ull * block.x * block.y * block.z;
  bool overlap = false;
  // The common case skips the detailed checks: sizes well inside every limit need none.
  if (threads == 0 || threads > static_cast<unsigned long long>(attributes_.max_threads_per_block) ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535 || block.z > 64 ||
      shared_bytes > dynamic_shared_allowed_ || cooperative_ || (overlaps_in_capture_ && capturing())) {
    if (cooperative_) return launch_grid_synced(grid, block, args, shared_bytes, stream);
    check_config(grid, block, shared_bytes);
    overlap = overlaps_in_capture_ && stream == detail::capture_stream;
  }
  activate(device());
  // Parameter pointers when the layout is known (the driver's usual form); else the packed buffer.
  void** params = args.param_pointers();
  size_t args_size = args.size();
  void* extra[] = {cu::kLaunchParamBufferPointer, const_cast<void*>(args.data()), cu::kLaunchParamBufferSize,
                   &args_size, cu::kLaunchParamEnd};
  void** packed = params || !args_size ? nullptr : extra;
  cu::CUresult r = overlap ? launch_overlapping(grid, block, shared_bytes, stream, params, packed)
                           : launch_kernel_(function_, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                            static_cast<unsigned>(shared_bytes), stream, params, packed);
  if (r != cu::CUDA_SUCCESS) {
    check_config(grid, block, shared_bytes);  // explain it in our words when we can
    cu::throw_error(r, ("launching kernel '" + name() + "'").c_str());
  }
}

void Kernel::set_waits_for_prior_grid() {
  overlaps_in_capture_ = cu::driver().cuLaunchKernelEx && device_properties(device()).compute_capability_major >= 9;
}

// A launch into the graph this thread captures that may overlap the kernel before it: the graph gets a programmatic
// edge, which lets the GPU start this grid as the one before finishes (0.76 µs a kernel node against 1 µs on an
// H100). Only for kernels that wait for the prior grid before their first memory access (set_waits_for_prior_grid).
[[gnu::cold, gnu::noinline]] cu::CUresult Kernel::launch_overlapping(Dim3 grid, Dim3 block, size_t shared_bytes,
                                                                     cu::CUstream stream, void** params, void** extra) {
  cu::CUlaunchAttribute overlap;
  overlap.id = cu::kLaunchAttributeProgrammaticStreamSerialization;
  overlap.value.programmatic_stream_serialization_allowed = 1;
  cu::CUlaunchConfig config{grid.x, grid.y, grid.z, block.x, block.y, block.z, static_cast<unsigned>(shared_bytes),
                            stream, &overlap, 1};
  return cu::driver().cuLaunchKernelEx(&config, function_, params, extra);
}

// cuLaunchCooperativeKernel after the configuration checks; CUDA_ERROR_NOT_SUPPORTED, with nothing launched, when
// the driver lacks it or cannot take the arguments (it needs their layout: cuFuncGetParamInfo, CUDA 12.4).
cu::CUresult Kernel::try_cooperative(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream) {
  const auto cooperative = cu::driver().cuLaunchCooperativeKernel;
  void** params = args.param_pointers();
  if (!cooperative || (!params && args.size())) return cu::CUDA_ERROR_NOT_SUPPORTED;
  stream = work_stream(stream);
  check_config(grid, block, shared_bytes);
  activate(device());
  return cooperative(function_, grid.x, grid.y, grid.z, block.x, block.y, block.z, static_cast<unsigned>(shared_bytes),
                     stream, params);
}

bool Kernel::launch_cooperative(Dim3 grid, Dim3 block, LaunchArgs& args, size_t shared_bytes, cu::CUstream stream) {
  const cu::CUresult r = try_cooperative(grid, block, args, shared_bytes, stream);
  if (r == cu::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE || r == cu::CUDA_ERROR_NOT_SUPPORTED) return false;
  if (r != cu::CUDA_SUCCESS) cu::throw_error(r, ("launching kernel '" + name() + "'").c_str());
  return true;
}

// The launch of a kernel that waits at grid barriers: cooperative, or a LaunchError that says why not.
[[gnu::cold, gnu::noinline]] void Kernel::launch_grid_synced(Dim3 grid, Dim3 block, LaunchArgs& args,
                                                             size_t shared_bytes, cu::CUstream stream) {
  const cu::CUresult r = try_cooperative(grid, block, args, shared_bytes, stream);
  if (r == cu::CUDA_SUCCESS) return;
  const std::string what = "kernel '" + name() + "' calls cg.this_grid(), so its launch is cooperative (every block "
                           "resident at once)";
  const DeviceProperties& p = device_properties(device());
  if (r == cu::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
    const int threads = static_cast<int>(block.x * block.y * block.z);
    const int per_multiprocessor = max_active_blocks_per_multiprocessor(threads, shared_bytes);
    throw launch_error(r, what + ", and a grid of " + std::to_string(1ull * grid.x * grid.y * grid.z) +
                              " blocks is more than the " +
                              std::to_string(int64_t(per_multiprocessor) * p.multiprocessor_count) +
                              " blocks of " + std::to_string(threads) + " threads that " + p.name + " holds at once (" +
                              std::to_string(per_multiprocessor) + " per multiprocessor, " +
                              std::to_string(p.multiprocessor_count) + " multiprocessors; see "
                              "max_cooperative_grid_blocks)");
  }
  if (r == cu::CUDA_ERROR_NOT_SUPPORTED)
    throw launch_error(r, what + ", which " + p.name + " or its driver does not support" +
                              (cu::driver().cuLaunchCooperativeKernel && !args.param_pointers()
                                   ? " (it needs a driver of CUDA 12.4 or newer, which tells kernels' parameters)"
                                   : ""));
  cu::throw_error(r, ("launching kernel '" + name() + "'").c_str());
}

int Kernel::max_active_blocks_per_multiprocessor(int block_size, size_t shared_bytes) const {
  int blocks = 0;
  cu::check(cu::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, block_size, shared_bytes),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

int64_t Kernel::max_cooperative_blocks(int64_t threads, size_t shared_bytes) const {
  if (threads < 1 || threads > attributes_.max_threads_per_block) return 0;
  return int64_t(max_active_blocks_per_multiprocessor(static_cast<int>(threads), shared_bytes)) *
         device_properties(device()).multiprocessor_count;
}

int Kernel::occupancy_block_size(size_t shared_bytes) {
  const uint64_t answer = occupancy_answer_.load(std::memory_order_relaxed);
  if (answer && answer / 2048 == shared_bytes) return static_cast<int>(answer % 2048);
  int best_size = 256, best_threads = 0;
  for (int size = 1024; size >= 64; size /= 2) {
    if (size > attributes_.max_threads_per_block) continue;
    int threads = max_active_blocks_per_multiprocessor(size, shared_bytes) * size;
    if (threads > best_threads) best_threads = threads, best_size = size;
  }
  occupancy_answer_.store(shared_bytes * 2048 + best_size, std::memory_order_relaxed);
  return best_size;
}

uint64_t new_param_layout_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void LaunchArgs::point_into_buffer() {
  pointers_.clear();
  pointers_for_ = layout_->id;
  if (!layout_->known || layout_->params.empty()) return;
  const KernelParam& last = layout_->params.back();
  buffer_.resize(std::max(buffer_.size(), last.offset + last.size));  // the buffer only grows here
  for (const KernelParam& p : layout_->params) pointers_.push_back(buffer_.data() + p.offset);
}

size_t LaunchArgs::next_size() const {
  if (!layout_->known || count_ >= layout_->params.size()) return 0;
  return layout_->params[count_].size;
}

namespace {
std::string arguments(size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); }
}  // namespace

unsigned char* LaunchArgs::checked_slot(size_t size, size_t align, const char* what) {
  size_t offset;
  const std::string& name = layout_->kernel_name;
  if (layout_->known) {
    const auto& params = layout_->params;
    if (count_ >= params.size())
      throw BadArgument("kernel '" + name + "' takes " + arguments(params.size()) + " but more were given");
    if (params[count_].size != size)
      throw BadArgument("argument " + std::to_string(count_) + " of kernel '" + name + "' is " + what + " (" +
                        std::to_string(size) + " bytes) but the kernel's parameter " + std::to_string(count_) +
                        " takes " + std::to_string(params[count_].size) + " bytes");
    offset = params[count_].offset;
  } else {
    offset = (size_ + align - 1) / align * align;
    if (buffer_.size() < offset + size) buffer_.resize(std::max<size_t>(offset + size, 2 * buffer_.size()));
  }
  size_ = std::max(size_, offset + size);
  ++count_;
  return buffer_.data() + offset;
}

void LaunchArgs::throw_missing_arguments() const {
  throw BadArgument("kernel '" + layout_->kernel_name + "' takes " + arguments(layout_->params.size()) + " but " +
                    std::to_string(count_) + " were given");
}

}  // namespace jiasu
