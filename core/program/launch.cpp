#include "program/launch.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <utility>

#include "emit/runtime/array_abi.h"
#include "emit/check_failure.hpp"
#include "emit/runtime/device_error.h"
#include "program/advisor.hpp"
#include "program/signature.hpp"
#include "runtime/driver.hpp"
#include "runtime/graph.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// The packer's sizes and offsets are the runtime header's structs', for every rank a kernel takes.
template <int N>
constexpr bool packs_as_abi() {
  using C = ArrayC<float, N>;
  using A = ArrayA<float, N>;
  if (sizeof(C) != 8 + 8 * N || sizeof(A) != 8 + 16 * N || offsetof(C, data) != 0 || offsetof(A, data) != 0)
    return false;
  if constexpr (N > 0)
    return offsetof(C, shape) == 8 && offsetof(A, shape) == 8 && offsetof(A, strides) == 8 + 8 * N;
  return true;
}
template <int... N>
constexpr bool all_pack_as_abi(std::integer_sequence<int, N...>) {
  return (packs_as_abi<N>() && ...);
}
static_assert(all_pack_as_abi(std::make_integer_sequence<int, kMaxKernelArrayRank + 1>()),
              "pack_array and array_param_size must match ArrayC/ArrayA in emit/runtime/array_abi.h");
static_assert(sizeof(HostParams::Slot) >= sizeof(ArrayA<float, kMaxKernelArrayRank>), "a host slot holds any array");

}  // namespace

LaunchArgument LaunchArgument::tuple(const std::vector<LaunchArgument>& items, const std::vector<std::string>& fields) {
  LaunchArgument t;
  if (items.size() > 255) throw BadArgument("a tuple passed to a kernel holds at most 255 items");
  t.tuple_key = {fields.empty() ? 'T' : 'N', static_cast<char>(items.size())};
  size_t size = 0, align = 1;
  for (size_t k = 0; k < items.size(); ++k) {
    const LaunchArgument& item = items[k];
    if (!fields.empty()) {
      if (fields[k].size() > 255) throw BadArgument("a namedtuple passed to a kernel has field names of at most 255 bytes");
      t.tuple_key += static_cast<char>(fields[k].size());
      t.tuple_key += fields[k];
    }
    if (item.array) throw BadArgument("a tuple passed to a kernel holds numbers and tuples of them, not arrays");
    const size_t a = item.alignment();
    size = (size + a - 1) / a * a;
    if (size + item.size > sizeof t.bytes) throw BadArgument("a tuple passed to a kernel takes at most 64 bytes");
    std::memcpy(t.bytes + size, item.bytes, item.size);
    size += item.size;
    align = std::max(align, a);
    append_argument_key(t.tuple_key, item);
  }
  size = size == 0 ? 1 : (size + align - 1) / align * align;
  if (size > sizeof t.bytes) throw BadArgument("a tuple passed to a kernel takes at most 64 bytes");
  t.size = static_cast<uint8_t>(size);
  t.tuple_align = static_cast<uint8_t>(align);
  return t;
}

void append_argument_key(std::string& key, const LaunchArgument& argument) {
  if (!argument.tuple_key.empty()) {
    key += argument.tuple_key;
    return;
  }
  if (argument.enumeration) return append_enum_key(key, *argument.enumeration);
  if (!argument.array) return append_scalar_key(key, argument.dtype, argument.weak);
  const Array& array = *argument.array;
  if (array.ndim() > kMaxKernelArrayRank) throw BadArgument("kernel arrays have at most 8 dimensions");
  if (argument.record)
    return append_record_key(key, *argument.record, argument.single_record ? -1 : static_cast<int>(array.ndim()),
                             array.c_contiguous());
  append_array_key(key, array.dtype(), static_cast<int>(array.ndim()), array.c_contiguous());
}

Dim3 forall_grid(int64_t n, int block) {
  // More tasks than the largest grid holds would be dropped silently: a grid-stride loop covers them instead.
  const int64_t blocks = std::max<int64_t>(1, n / block + (n % block != 0));
  if (blocks > INT_MAX)
    throw BadValue("forall(" + std::to_string(n) + ") needs " + std::to_string(blocks) + " blocks of " +
                   std::to_string(block) + " threads, more than a CUDA grid has (" + std::to_string(INT_MAX) +
                   "): write the kernel as a grid-stride loop (for i in range(jiasu.grid(1), n, "
                   "jiasu.gridsize(1))) and launch it with a grid of your choice");
  return {static_cast<unsigned>(blocks), 1, 1};
}

void pick_forall(Kernel& kernel, int64_t n, size_t shared_bytes, Dim3& grid, Dim3& block) {
  const int size = kernel.occupancy_block_size(shared_bytes);
  block = {static_cast<unsigned>(size), 1, 1};
  grid = forall_grid(n, size);
}

void refuse_read_only_outputs(const Specialization& spec, const LaunchArgument* arguments, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (arguments[i].read_only && spec.written()[i])
      throw BadValue("argument " + std::to_string(i) + " is a read-only NumPy array, and results would be "
                     "written into it");
}

void copy_back_written(const Specialization& spec, const LaunchConfig& config, const StagedArray* staged, size_t n) {
  if (n == 0) return;
  // Staged arrays are copied back and freed on the legacy stream: let the kernel's stream finish first.
  if (config.stream) cu::check(cu::driver().cuStreamSynchronize(config.stream), "cuStreamSynchronize");
  for (size_t i = 0; i < n; ++i)
    if (spec.written()[staged[i].param]) staged[i].device->copy_to_host(staged[i].host);
}

void report_device_error(cu::CUdeviceptr record, cu::CUstream stream, const std::string& kernel) {
  refuse_in_capture("a debug kernel, which reports its errors after each launch,");
  const auto& d = cu::driver();
  cu::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
  int state = 0;  // the record's first field: the rest is read only when something was recorded
  cu::check(d.cuMemcpyDtoH(&state, record, sizeof state), "cuMemcpyDtoH");
  if (state == 0) return;
  DeviceError e;
  cu::check(d.cuMemcpyDtoH(&e, record, sizeof e), "cuMemcpyDtoH");
  static const DeviceError none{};
  cu::check(d.cuMemcpyHtoD(record, &none, sizeof none), "cuMemcpyHtoD");
  e.function[sizeof e.function - 1] = e.array[sizeof e.array - 1] = e.file[sizeof e.file - 1] =
      e.message[sizeof e.message - 1] = '\0';
  char message[sizeof e.function + sizeof e.array + sizeof e.file + sizeof e.message + 2048];
  if (e.kind != error_raise) {
    format_check_failure(e, message, sizeof message);
    emit::throw_check_failure(kernel, e.kind, message);
  }
  std::snprintf(message, sizeof message, JIASU_RAISE_FORMAT, e.function, e.file, e.line, e.column, e.thread[0],
                e.thread[1], e.thread[2], e.block[0], e.block[1], e.block[2], *e.message ? ": " : "", e.message);
  throw KernelRaised(e.exception, message);
}

void RepeatLaunch::pack(const ParamLayout& layout, const LaunchArgument* arguments, size_t n, int device) {
  clear();
  device_ = device;
  bool repeatable = true;
  args_.begin(layout);
  for (size_t i = 0; i < n; ++i) {
    const LaunchArgument& a = arguments[i];
    Record r;
    unsigned char* at;
    if (a.array) {
      at = args_.slot(array_param_size(*a.array), 8, "an array");
      pack_array(*a.array, at);
      if (a.repeatable) {
        r.kind = Record::Array;
        r.dtype = a.array->dtype();
        r.ndim = static_cast<uint8_t>(a.array->ndim());
        r.contiguous = a.array->c_contiguous();
      }
    } else {
      at = args_.slot(a.size, a.alignment(), a.tuple_key.empty() ? "a scalar" : "a tuple");
      std::memcpy(at, a.bytes, a.size);
      if (a.scalar_kind) {
        r.kind = Record::Scalar;
        r.scalar_kind = a.scalar_kind;
        r.scalar_type = a.scalar_type;
        r.size = a.size;
        r.converted = a.converted;
        r.given = a.given;
        r.dtype = a.dtype;
      }
    }
    r.offset = static_cast<uint32_t>(at - args_.buffer());
    repeatable = repeatable && r.kind != Record::None;
    has_array_ = has_array_ || r.kind == Record::Array;
    records_.push_back(r);
  }
  args_.finish();
  repeatable_ = repeatable;
}

namespace {

// The profiler's note of a launch of `spec`: its Python name and the bytes of the argument arrays it reads and
// writes, per array parameter, from their packed shapes (`packed(i)`: argument i's bytes {data, shape, ...}).
template <typename Packed>
LaunchNote launch_note(const Specialization& spec, Packed packed) {
  LaunchNote note;
  note.name = spec.function().name;
  note.origin = spec.origin();
  note.bytes_read = note.bytes_written = 0;
  const std::vector<fe::Param>& params = spec.function().params;
  for (size_t i = 0; i < params.size(); ++i) {
    const fe::Type& type = params[i].type;
    if (type.kind != fe::TypeKind::Array) continue;
    int64_t bytes = type.record ? type.record->itemsize : static_cast<int64_t>(itemsize(type.dtype));
    for (int d = 0; d < type.ndim; ++d) {
      int64_t extent;
      std::memcpy(&extent, packed(i) + 8 + 8 * d, 8);
      bytes *= extent;
    }
    if (spec.read()[i]) note.bytes_read += bytes;
    if (spec.written()[i]) note.bytes_written += bytes;
  }
  return note;
}

}  // namespace

Specialization& KernelLauncher::launch(const LaunchConfig& config, const LaunchArgument* arguments, size_t n,
                                       int device) {
  std::string key;
  for (size_t i = 0; i < n; ++i) append_argument_key(key, arguments[i]);
  if (device != kCpuDevice) return launch_gpu(config, arguments, n, key, device);
  HostParams params;
  for (size_t i = 0; i < n; ++i)
    if (arguments[i].array) params.hold(*arguments[i].array);
  Specialization& spec = prepare_host(arguments, n, key, params);
  run_host(spec, config, params);
  return spec;
}

Specialization& KernelLauncher::launch_gpu(const LaunchConfig& config, const LaunchArgument* arguments, size_t n,
                                           const std::string& key, int device) {
  Specialization& spec = kernel_.specialization(key);
  refuse_read_only_outputs(spec, arguments, n);
  Kernel& compiled = spec.kernel(device);
  last_kernel_ = nullptr;  // until packing succeeds
  error_record_ = spec.device_errors() ? compiled.module().global("jiasu_device_error", sizeof(DeviceError)) : 0;
  error_kernel_ = &spec.name();
  repeat_.pack(compiled.param_layout(), arguments, n, device);
  last_kernel_ = &compiled;
  if (profiling()) [[unlikely]]
    note_gpu_launch();
  run(config, compiled, repeat_.args());
  if (error_record_) report_device_error(error_record_, config.stream, *error_kernel_);
  return spec;
}

Specialization& KernelLauncher::prepare_host(const LaunchArgument* arguments, size_t n, const std::string& key,
                                             HostParams& params) {
  Specialization& spec = kernel_.specialization(key);
  refuse_read_only_outputs(spec, arguments, n);
  params.slots.resize(n);
  params.pointers.clear();
  for (size_t i = 0; i < n; ++i) {
    const LaunchArgument& a = arguments[i];
    if (a.array)
      pack_array(*a.array, params.slots[i].bytes);
    else
      std::memcpy(params.slots[i].bytes, a.bytes, a.size);
    params.pointers.push_back(params.slots[i].bytes);
  }
  return spec;
}

void KernelLauncher::note_gpu_launch() {
  const Specialization* spec = kernel_.last();
  if (!spec) return;
  note_next_launch(launch_note(*spec, [this](size_t i) { return repeat_.args().buffer() + repeat_.record(i).offset; }));
}

AccessReport KernelLauncher::analyze_host(Specialization& spec, const LaunchConfig& config, HostParams& params,
                                          const LaunchArgument* arguments, size_t n, const std::string& kernel_name) {
  std::vector<emit::AccessSite> sites;
  const HostKernel& traced = spec.traced_host_kernel(sites);
  std::vector<bool> shared;
  for (const emit::AccessSite& site : sites) shared.push_back(site.shared);
  std::vector<MemoryRange> ranges;
  for (size_t i = 0; i < n; ++i)
    if (arguments[i].array) {
      const Allocation& memory = *arguments[i].array->memory();
      ranges.push_back(MemoryRange{memory.ptr(), memory.bytes()});
    }
  AccessTrace trace(std::move(shared), std::move(ranges));
  struct FlushStdout {  // the kernel's printf calls wrote to C's stdout (see run_host)
    bool prints;
    ~FlushStdout() {
      if (prints) std::fflush(stdout);
    }
  } flush{spec.prints()};
  try {
    traced.launch(config.grid, config.block, params.pointers.data(), config.shared_bytes, &trace);
  } catch (const LaunchError&) {
    if (!trace.full()) throw;
    throw BadValue("analyze: a block of kernel '" + kernel_name + "' made more than " +
                   std::to_string(trace.max_block_accesses()) + " accesses to global and shared arrays, more than " +
                   "the analysis records for one block; analyze a smaller launch (fewer threads per block, or fewer "
                   "loop iterations per thread)");
  }
  AccessReport report = access_report(kernel_name, config.grid, config.block, sites, trace.finish());
  remember_access_report(spec.origin(), report);  // for the advisor's reports to quote
  return report;
}

void KernelLauncher::run_host(Specialization& spec, const LaunchConfig& config, HostParams& params) {
  Dim3 grid = config.grid, block = config.block;
  if (config.forall >= 0) {
    block = {256, 1, 1};
    grid = forall_grid(config.forall, 256);
  }
  const HostKernel& host = spec.host_kernel();  // compiled first, so that a profile times the run alone
  std::optional<ProfiledCall> timed;
  if (profiling()) [[unlikely]] {
    note_next_launch(launch_note(spec, [&params](size_t i) -> const unsigned char* { return params.slots[i].bytes; }));
    timed.emplace("", kCpuDevice, nullptr, grid, block, /*library=*/false);
  }
  if (!spec.prints()) return host.launch(grid, block, params.pointers.data(), config.shared_bytes);
  // The kernel's printf calls wrote to C's stdout: its lines come out now, before the caller's next output.
  try {
    host.launch(grid, block, params.pointers.data(), config.shared_bytes);
  } catch (...) {
    std::fflush(stdout);
    throw;
  }
  std::fflush(stdout);
}

}  // namespace jiasu
