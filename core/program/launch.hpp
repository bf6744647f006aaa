// Launching a Python kernel's specialisations, from Python (bindings/kernel.cpp) or from C++ (array
// operations): arguments described neutrally, the signature key, the specialisation lookup, packing into
// the kernel's parameters (GPU) or host parameter slots (CPU), and the repeat launch of a loop.
//   LaunchArgument[] → signature key → Specialization → pack + record (RepeatLaunch) → Kernel::launch
//                                                    → host slots (HostParams)        → HostKernel::launch
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.hpp"
#include "cpu/access_trace.hpp"
#include "program/python_kernel.hpp"
#include "runtime/device.hpp"
#include "runtime/module.hpp"
#include "runtime/profiler.hpp"

namespace jiasu {

constexpr int kMaxKernelArrayRank = 8;  // kernels take arrays of at most this many dimensions

// The bytes an array is passed as (emit/runtime/array_abi.h): ArrayC<T, N> {data, shape[N]} when
// C-contiguous, else ArrayA<T, N> {data, shape[N], strides[N]}. launch.cpp checks both against the structs.
inline size_t array_param_size(const Array& array) {
  return 8 + (array.c_contiguous() ? 8 : 16) * static_cast<size_t>(array.ndim());
}
[[gnu::always_inline]] inline void pack_array(const Array& array, unsigned char* bytes) {
  const size_t n = static_cast<size_t>(array.ndim());
  cu::CUdeviceptr ptr = array.data();
  std::memcpy(bytes, &ptr, 8);
  for (size_t d = 0; d < n; ++d) std::memcpy(bytes + 8 + 8 * d, &array.shape()[d], 8);  // n <= 8: no call
  if (!array.c_contiguous())
    for (size_t d = 0; d < n; ++d) std::memcpy(bytes + 8 + 8 * (n + d), &array.strides()[d], 8);
}

// One argument of a launch: an array, or the bytes of a scalar of some dtype.
struct LaunchArgument {
  const Array* array = nullptr;  // an array argument (the caller keeps it alive); null for a scalar
  bool read_only = false;        // an array that may not be written: a launch whose kernel writes it is refused
  // An array the next launch may replace by another Array of the same dtype, rank and contiguity (the
  // caller's own array, not one made for this launch, e.g. a staged copy).
  bool repeatable = false;
  unsigned char bytes[64] = {};  // a scalar's value, `size` bytes of it (complex128 takes 16, a tuple up to 64)
  uint8_t size = 0;
  DType dtype = DType::Bool;
  bool weak = false;  // a Python int or float (NEP 50)
  // For the repeat launch: the caller's name for the kind of value the scalar came from (0: one the repeat
  // launch cannot take) and, where the kind needs it, the value's type. The core only compares them.
  uint8_t scalar_kind = 0;
  const void* scalar_type = nullptr;
  // A scalar converted to its parameter's declared type (KernelLauncher::declare_scalar_types): the dtype it
  // came as, which the repeat launch converts from.
  bool converted = false;
  DType given = DType::Bool;
  // A tuple of scalars (and of such tuples): its bytes laid out as the kernel's struct of it, its signature
  // entry ('T', count, the items' entries) and the struct's alignment. Empty for anything else.
  std::string tuple_key;
  uint8_t tuple_align = 0;
  // A structured array (`array` holds its memory as elements of the record's size) or, with single_record,
  // one record passed by reference (a 0-d `array`): the fields' layout.
  std::shared_ptr<const fe::RecordLayout> record;
  bool single_record = false;
  // An enum member (an int64 scalar): its class, part of the signature (fe::EnumClass).
  std::shared_ptr<const fe::EnumClass> enumeration;

  // The tuple of `items` (scalars or tuples), laid out as C lays out the emitted struct: each item at its
  // alignment, the size rounded up to the largest; an empty tuple takes one byte, as an empty C++ struct does.
  // BadArgument for an array item or more than 64 bytes.
  // `fields`: a namedtuple's field names, one per item (at most 255 bytes each), or none.
  static LaunchArgument tuple(const std::vector<LaunchArgument>& items, const std::vector<std::string>& fields = {});
  // Where a scalar or tuple sits in a parameter buffer: a complex number at its parts' alignment.
  size_t alignment() const {
    if (!tuple_key.empty()) return tuple_align;
    return info(dtype).kind == DTypeKind::Complex ? size / 2u : size;
  }

  static LaunchArgument of(const Array& array, bool repeatable = true) {
    LaunchArgument a;
    a.array = &array;
    a.repeatable = repeatable;
    return a;
  }
  template <typename T>
  static LaunchArgument scalar(T value, DType dtype, bool weak = false) {
    static_assert(sizeof(T) <= 16, "scalars are at most 16 bytes");
    LaunchArgument a;
    std::memcpy(a.bytes, &value, sizeof value);
    a.size = sizeof value;
    a.dtype = dtype;
    a.weak = weak;
    return a;
  }
  // A scalar argument converted to `to` as the kernel language converts numbers (integers wrap, floats
  // truncate toward zero, a complex number gives its real part): strong, of dtype `to`.
  void convert_to(DType to);
};

// Writes the value at `in`, of dtype `from`, at `out` as dtype `to` (LaunchArgument::convert_to's rule).
void convert_scalar(DType from, const void* in, DType to, void* out);

// The argument's entry of the signature key (see signature.hpp); BadArgument for an array of more than
// kMaxKernelArrayRank dimensions.
void append_argument_key(std::string& key, const LaunchArgument& argument);

// The grid, block, dynamic shared memory and stream of a launch. forall >= 0: the grid and block are
// picked at launch to cover that many threads (pick_forall on a GPU, 256-thread blocks on the CPU).
struct LaunchConfig {
  Dim3 grid, block;
  size_t shared_bytes = 0;
  cu::CUstream stream = nullptr;
  int64_t forall = -1;
};

// One thread per task: a grid of at most 2**31-1 blocks of `block` threads, as CUDA allows (BadValue for more).
Dim3 forall_grid(int64_t n, int block);
// The block size with the most resident threads per multiprocessor, and enough blocks to cover n.
void pick_forall(Kernel& kernel, int64_t n, size_t shared_bytes, Dim3& grid, Dim3& block);

// BadValue when an argument marked read_only is one the kernel writes.
void refuse_read_only_outputs(const Specialization& spec, const LaunchArgument* arguments, size_t n);

// A host array the caller copied to the device for one GPU launch: argument `param`'s device copy, and the
// C-contiguous host memory it came from.
struct StagedArray {
  size_t param;
  const Array* device;
  void* host;
};
// After the launch: waits for its stream, then copies back into host memory each staged array the kernel
// writes (Specialization::written); the others stay as they were. Touches no Python: may run without the GIL.
void copy_back_written(const Specialization& spec, const LaunchConfig& config, const StagedArray* staged, size_t n);

// After a launch of a debug kernel, whose module records its first raise or failed check
// (Specialization::device_errors) at device address `record`: waits for `stream`, and when a thread failed,
// clears the record for the next launch and throws what the CPU backend throws, with its message: KernelRaised,
// or for `kernel`'s failed check OutOfRange or DivisionByZero (emit::throw_check_failure).
void report_device_error(cu::CUdeviceptr record, cu::CUstream stream, const std::string& kernel);

// Where a launch runs when the caller does not say and `array` is among the arguments: the CPU for an
// array in host memory, else the current GPU (default_device() when no array decides).
inline int launch_device_of(const Array& array) { return array.on_host() ? kCpuDevice : current_device(); }

// The packed parameters of the last GPU launch and, per argument, what it was and where its bytes went:
// the next launch with arguments of the same kinds on the same device writes their bytes over these and
// launches the same kernel. Record, check and pack only: no driver call, so it is tested without a GPU.
class RepeatLaunch {
 public:
  struct Record {
    enum Kind : uint8_t { None, Array, Scalar } kind = None;
    uint8_t scalar_kind = 0;  // Scalar's: LaunchArgument::scalar_kind
    uint8_t size = 0;         // Scalar's bytes
    DType dtype{};            // Array's
    uint8_t ndim = 0;
    bool contiguous = false;
    const void* scalar_type = nullptr;  // Scalar's: LaunchArgument::scalar_type
    uint32_t offset = 0;                // in the parameter buffer
    bool converted = false;             // Scalar's: converted from `given` to `dtype` (LaunchArgument::converted)
    DType given{};
  };

  // The full path: packs `arguments` into `layout` (BadArgument/LaunchError for a wrong count or size,
  // see LaunchArgs) and records them for a launch on `device`.
  void pack(const ParamLayout& layout, const LaunchArgument* arguments, size_t n, int device);
  void clear() {
    records_.clear();
    repeatable_ = has_array_ = false;
  }
  // Whether every argument of the last pack can be replaced in place, and whether one is an Array.
  bool repeatable() const { return repeatable_; }
  bool has_array() const { return has_array_; }
  // Whether n arguments on `device` may be a repeat of the last pack (then check each with put_*).
  [[gnu::always_inline]] bool matches(int device, size_t n) const {
    return repeatable_ && device_ == device && n == records_.size();
  }
  const Record& record(size_t i) const { return records_[i]; }
  // Writes `array` over argument i when it is an Array of the recorded dtype, rank and contiguity on
  // `device`; false (nothing written) otherwise.
  [[gnu::always_inline]] bool put_array(const Record& r, const jiasu::Array& array, int device) {
    if (r.kind != Record::Array || array.dtype() != r.dtype || array.ndim() != r.ndim ||
        array.c_contiguous() != r.contiguous || array.device() != device)
      return false;
    pack_array(array, args_.buffer() + r.offset);
    return true;
  }
  // Writes a scalar's `size` bytes over argument i when it is of the recorded kind, type and size.
  [[gnu::always_inline]] bool put_scalar(const Record& r, uint8_t scalar_kind, const void* scalar_type,
                                         const void* bytes, size_t size) {
    if (r.kind != Record::Scalar || r.scalar_kind != scalar_kind || r.scalar_type != scalar_type) return false;
    if (r.converted) [[unlikely]] {
      if (size != itemsize(r.given)) return false;
      convert_scalar(r.given, bytes, r.dtype, args_.buffer() + r.offset);
      return true;
    }
    if (r.size != size) return false;
    std::memcpy(args_.buffer() + r.offset, bytes, size);
    return true;
  }
  LaunchArgs& args() { return args_; }

 private:
  LaunchArgs args_;
  std::vector<Record> records_;
  int device_ = kCpuDevice;
  bool repeatable_ = false, has_array_ = false;
};

// A CPU launch's parameters: one slot per argument, the pointers the entry point reads, and holds on the
// memory of the arrays it uses (it runs without the GIL, so another thread may free() them meanwhile).
struct HostParams {
  struct alignas(16) Slot {
    unsigned char bytes[8 + 16 * kMaxKernelArrayRank];
  };
  std::vector<Slot> slots;
  std::vector<void*> pointers;
  std::vector<std::shared_ptr<const void>> in_use;
  // Holds `array`'s memory until clear(); InvalidArrayError for a freed array.
  void hold(const Array& array) { in_use.push_back(array.memory()->hold()); }
  void clear() {
    pointers.clear();
    in_use.clear();
  }
};

// The launches of one Python kernel. Not thread-safe by itself: the Python binding calls it with the GIL
// held (run_host excepted), other callers serialise their calls to one launcher.
class KernelLauncher {
 public:
  explicit KernelLauncher(PythonKernel& kernel) : kernel_(kernel) {}

  // From C++: the whole launch on `device` (kCpuDevice or a GPU), the signature key built here. A GPU
  // launch records the arguments for repeat_kernel/relaunch.
  Specialization& launch(const LaunchConfig& config, const LaunchArgument* arguments, size_t n, int device);

  // A GPU launch whose `key` the caller built with append_argument_key while classifying: specialisation,
  // read-only check, kernel for `device`, packing (recorded for the repeat launch) and cuLaunchKernel.
  // Returns the specialisation, whose written() says which arguments to copy back.
  [[gnu::cold, gnu::noinline]] Specialization& launch_gpu(const LaunchConfig& config, const LaunchArgument* arguments,
                                                          size_t n, const std::string& key, int device);
  // A CPU launch in two steps: prepare_host (specialisation, read-only check, host slots) with the caller's
  // locks held, then run_host, which touches only C++ state (it compiles the host build on first use) and
  // may run without them, e.g. without the GIL.
  Specialization& prepare_host(const LaunchArgument* arguments, size_t n, const std::string& key, HostParams& params);
  static void run_host(Specialization& spec, const LaunchConfig& config, HostParams& params);
  // k.analyze: as run_host (after prepare_host), with the build that records memory accesses (see
  // cpu/access_trace.hpp); arguments: the launch's, whose arrays are its global memory. Throws BadValue when a
  // block makes more accesses than the analysis records for one.
  static AccessReport analyze_host(Specialization& spec, const LaunchConfig& config, HostParams& params,
                                   const LaunchArgument* arguments, size_t n, const std::string& kernel_name);

  // The repeat launch: the kernel of the last GPU launch when n arguments on `device` may repeat it (null
  // otherwise). Each argument is then written with repeat().put_* (a false return means: take the full
  // path) and relaunch() launches.
  [[gnu::always_inline]] Kernel* repeat_kernel(int device, size_t n) const {
    return repeat_.matches(device, n) ? last_kernel_ : nullptr;
  }
  RepeatLaunch& repeat() { return repeat_; }
  [[gnu::always_inline]] void relaunch(const LaunchConfig& config, Kernel& compiled) {
    if (profiling()) [[unlikely]]
      note_gpu_launch();
    run(config, compiled, repeat_.args());
    if (error_record_) report_device_error(error_record_, config.stream, *error_kernel_);
  }
  PythonKernel& kernel() { return kernel_; }

  // Numba's signature types of scalar parameters (cuda.jit("void(int32[:], int32)")): types[i], when set, is
  // the dtype a scalar argument i takes, whatever number it is given as. Empty: arguments keep their own types.
  void declare_scalar_types(std::vector<std::optional<DType>> types) { declared_ = std::move(types); }
  // Converts argument `index` to its declared type, if it is a scalar (not a tuple) whose parameter has one.
  // Callers apply it to each classified argument before keying it.
  [[gnu::always_inline]] void apply_declared_type(size_t index, LaunchArgument& a) const {
    if (index < declared_.size() && declared_[index] && !a.array && a.tuple_key.empty()) [[unlikely]]
      a.convert_to(*declared_[index]);
  }

 private:
  void note_gpu_launch();  // tells the profiler the kernel's name and its arrays' traffic
  [[gnu::always_inline]] static void run(const LaunchConfig& config, Kernel& compiled, LaunchArgs& packed) {
    Dim3 grid = config.grid, block = config.block;
    if (config.forall >= 0) pick_forall(compiled, config.forall, config.shared_bytes, grid, block);
    compiled.launch(grid, block, packed, config.shared_bytes, config.stream);
  }

  PythonKernel& kernel_;
  RepeatLaunch repeat_;
  Kernel* last_kernel_ = nullptr;  // the last GPU launch's (its module keeps it alive)
  cu::CUdeviceptr error_record_ = 0;  // its module's jiasu_device_error, in debug mode
  const std::string* error_kernel_ = nullptr;  // its kernel's name, for the messages
  std::vector<std::optional<DType>> declared_;
};

}  // namespace jiasu
