// Devices, streams, events, pinned and mapped host memory, library discovery and run-time compilation.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "cpu/host_kernel.hpp"
#include "program/source_module.hpp"
#include "runtime/backend.hpp"
#include "runtime/device.hpp"
#include "runtime/stream.hpp"
#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/host_compiler.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu::py {
namespace {

int parse_arch(nb::handle arch, CodeKind* kind) {
  if (arch.is_none()) {
    if (device_count() == 0) throw BadValue("no GPU is visible: pass arch= (e.g. 'sm_90') to compile for one");
    *kind = CodeKind::Cubin;
    return device_properties(current_device()).arch();
  }
  if (nb::isinstance<nb::int_>(arch)) {
    int number;
    if (!nb::try_cast(arch, number) || number < 1)
      throw BadValue("arch must look like 'sm_90', 'compute_90' or 90, not " + python_str(arch));
    return number;
  }
  std::string text = nb::cast<std::string>(arch);
  for (const char* prefix : {"sm_", "compute_"}) {
    std::string p = prefix, digits = text.substr(std::min(text.size(), p.size()));
    if (text.rfind(p, 0) == 0 && !digits.empty() && digits.size() <= 4 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      *kind = p == "sm_" ? CodeKind::Cubin : CodeKind::Ptx;
      return std::stoi(digits);
    }
  }
  throw BadValue("arch must look like 'sm_90', 'compute_90' or 90, not '" + text + "'");
}

nb::dict library_report(const std::string& name) {
  nb::dict out;
  if (name == "driver") {
    const auto& d = cu::driver();
    out["path"] = d.path;
    out["source"] = "system";
    out["version"] = std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10);
    return out;
  }
  LibraryReport r = inspect_cuda_library(name);
  out["path"] = r.library.path;
  out["source"] = r.library.source;
  out["version"] = r.version;
  return out;
}

// NumPy's view of `bytes` bytes of host memory, as uint8 (np.asarray(obj) of an object exporting it).
nb::dict host_bytes_interface(void* data, size_t bytes) {
  nb::dict d;
  d["shape"] = nb::make_tuple(bytes);
  d["typestr"] = "|u1";
  d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(data), false);
  d["version"] = 3;
  return d;
}

}  // namespace

cu::CUstream stream_handle(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  if (nb::isinstance<Stream>(stream)) return nb::inst_ptr<Stream>(stream)->handle();
  if (nb::isinstance<nb::int_>(stream)) {
    uintptr_t address;
    if (!nb::try_cast(stream, address))
      throw BadValue("stream " + python_str(stream) + " is not a CUstream address (those are 0 to 2**64 - 1)");
    return reinterpret_cast<cu::CUstream>(address);
  }
  throw BadArgument("stream must be None, a jiasu.Stream or a CUstream address (int), not " +
                    python_type_name(stream));
}

int device_from(nb::handle device) {
  if (device.is_none()) return default_device();
  if (nb::isinstance<Device>(device)) return nb::inst_ptr<Device>(device)->ordinal;
  if (PyLong_CheckExact(device.ptr())) {
    int ordinal;
    if (!nb::try_cast(device, ordinal) || ordinal < 0)
      throw CudaError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                      "device " + python_str(device) + " does not exist (GPU ordinals start at 0; the CPU is 'cpu')");
    return ordinal;
  }
  if (nb::isinstance<nb::str>(device)) {
    std::string name = nb::cast<std::string>(device);
    if (name == "cpu") return kCpuDevice;
    if (name == "cuda" || name == "gpu") return current_device();
    for (const char* prefix : {"cuda:", "gpu:"}) {
      std::string p = prefix;
      // At most 9 digits, so that the number fits an int (no GPU ordinal comes close).
      if (name.compare(0, p.size(), p) == 0 && name.size() > p.size() && name.size() - p.size() <= 9 &&
          name.find_first_not_of("0123456789", p.size()) == std::string::npos)
        return std::stoi(name.substr(p.size()));
    }
    throw BadValue("unknown device '" + name + "': use 'cpu', 'cuda', 'cuda:N' or a GPU ordinal");
  }
  throw BadArgument("a device is 'cpu', 'cuda', 'cuda:N', a GPU ordinal or a jiasu.Device, not " +
                    python_type_name(device));
}

void bind_runtime(nb::module_& m) {
  m.def("host_compiler", [] {
    const HostCompiler& c = host_compiler();
    nb::dict d;
    d["path"] = c.path;
    d["identity"] = c.identity;
    return d;
  }, "The C++ compiler the CPU backend uses (path, `--version` line); raises when there is none.");
  m.def("cpu_threads", &host_thread_count, "OS threads the CPU backend runs blocks on ($JIASU_CPU_THREADS).");
  m.def("get_backend", [] { return backend_name(active_backend()); },
        "The active backend: 'cuda' or 'cpu'.");
  m.def("set_backend", [](const std::string& name) { set_active_backend(backend_from_name(name)); }, nb::arg("name"),
        "Make 'cpu' or 'cuda' the backend of new arrays and of launches whose arguments do not decide.");
  m.def("set_wheel_roots", &set_wheel_roots, "Folders where NVIDIA's pip wheels may be installed.");
  m.def("device_count", &device_count);
  m.def("current_device", &current_device);
  m.def("set_device", &set_current_device);
  m.def("synchronize", [](nb::handle device) {
    int ordinal = device_from(device);
    if (ordinal == kCpuDevice) return;  // CPU launches return when they are done
    nb::gil_scoped_release unlocked;
    synchronize_device(ordinal);
  }, nb::arg("device").none() = nb::none(), "Wait for the work queued on a GPU (default: the active backend's).");
  m.def("library_info", &library_report, nb::arg("name"),
        "Path, origin and version of 'driver', 'nvrtc', 'cudnn', 'cublas', 'cublaslt' or 'nccl'; raises when missing.");
  m.def("cache_dir", &default_cache_dir);

  m.def("compile_cuda", [](const std::string& source, nb::handle arch, nb::handle output,
                           const std::vector<std::string>& options, const std::string& file_name) {
    CudaCompileRequest request;
    request.source = source;
    request.file_name = file_name;
    request.options = options;
    request.kind = CodeKind::Ptx;
    request.arch = parse_arch(arch, &request.kind);
    if (!output.is_none()) {
      std::string o = nb::cast<std::string>(output);
      if (o != "ptx" && o != "cubin") throw BadValue("output must be 'ptx' or 'cubin', not '" + o + "'");
      request.kind = o == "ptx" ? CodeKind::Ptx : CodeKind::Cubin;
    }
    CompiledCode code;
    {
      nb::gil_scoped_release unlocked;
      code = compile_cuda(request, &compile_cache());
    }
    return nb::bytes(code.image.data(), code.image.size());
  }, nb::arg("source"), nb::arg("arch") = nb::none(), nb::arg("output") = nb::none(),
     nb::arg("options") = std::vector<std::string>(), nb::arg("name") = "jiasu_module.cu");

  nb::class_<Device>(m, "Device", "A device: a CUDA GPU and its properties, or the CPU ('cpu').")
      .def("__init__", [](Device* self, nb::handle spec) {
        int ordinal = device_from(spec);
        if (ordinal != kCpuDevice) device_properties(ordinal);  // validates the ordinal
        new (self) Device{ordinal};
      }, nb::arg("device").none() = 0)
      .def_prop_ro("id", [](const Device& d) -> nb::object {
        if (d.ordinal == kCpuDevice) return nb::none();
        return nb::int_(d.ordinal);
      },
                   "The GPU ordinal (None for the CPU).")
      .def_prop_ro("type", [](const Device& d) { return d.ordinal == kCpuDevice ? "cpu" : "cuda"; })
      .def_prop_ro("name", [](const Device& d) { return d.ordinal == kCpuDevice ? std::string("cpu") : d.props().name; })
      .def_prop_ro("compute_capability", [](const Device& d) {
        return nb::make_tuple(d.props().compute_capability_major, d.props().compute_capability_minor);
      })
      .def_prop_ro("arch", [](const Device& d) { return "sm_" + std::to_string(d.props().arch()); })
      .def_prop_ro("multiprocessor_count", [](const Device& d) { return d.props().multiprocessor_count; })
      .def_prop_ro("total_memory", [](const Device& d) { return d.props().total_memory; })
      .def_prop_ro("l2_cache_size", [](const Device& d) { return d.props().l2_cache_size; })
      .def_prop_ro("warp_size", [](const Device& d) {
        return d.ordinal == kCpuDevice ? 32 : d.props().warp_size;  // the CPU backend's warps have 32 lanes
      })
      .def_prop_ro("max_threads_per_block", [](const Device& d) { return d.props().max_threads_per_block; })
      .def_prop_ro("max_block_dim", [](const Device& d) {
        auto& p = d.props();
        return nb::make_tuple(p.max_block_dim[0], p.max_block_dim[1], p.max_block_dim[2]);
      })
      .def_prop_ro("max_grid_dim", [](const Device& d) {
        auto& p = d.props();
        return nb::make_tuple(p.max_grid_dim[0], p.max_grid_dim[1], p.max_grid_dim[2]);
      })
      .def_prop_ro("max_shared_memory_per_block", [](const Device& d) { return d.props().max_shared_memory_per_block; })
      .def_prop_ro("max_shared_memory_per_block_optin",
                   [](const Device& d) { return d.props().max_shared_memory_per_block_optin; })
      .def_prop_ro("max_shared_memory_per_multiprocessor",
                   [](const Device& d) { return d.props().max_shared_memory_per_multiprocessor; })
      .def_prop_ro("max_threads_per_multiprocessor",
                   [](const Device& d) { return d.props().max_threads_per_multiprocessor; })
      .def_prop_ro("max_registers_per_block", [](const Device& d) { return d.props().max_registers_per_block; })
      .def_prop_ro("max_registers_per_multiprocessor",
                   [](const Device& d) { return d.props().max_registers_per_multiprocessor; })
      .def_prop_ro("max_blocks_per_multiprocessor",
                   [](const Device& d) { return d.props().max_blocks_per_multiprocessor; })
      .def_prop_ro("reserved_shared_memory_per_block",
                   [](const Device& d) { return d.props().reserved_shared_memory_per_block; })
      .def_prop_ro("total_constant_memory", [](const Device& d) { return d.props().total_constant_memory; })
      .def_prop_ro("clock_rate_khz", [](const Device& d) { return d.props().clock_rate_khz; })
      .def_prop_ro("memory_clock_rate_khz", [](const Device& d) { return d.props().memory_clock_rate_khz; })
      .def_prop_ro("memory_bus_width", [](const Device& d) { return d.props().memory_bus_width; })
      .def_prop_ro("pci_bus_id", [](const Device& d) { return d.props().pci_bus_id; })
      .def("memory_info", [](const Device& d) {
        MemoryInfo info = jiasu::memory_info(d.ordinal);
        return nb::make_tuple(info.free, info.total);
      }, "(free, total) bytes of device memory.")
      .def("synchronize", [](const Device& d) {
        if (d.ordinal == kCpuDevice) return;  // CPU launches return when they are done
        nb::gil_scoped_release unlocked;
        synchronize_device(d.ordinal);
      })
      .def("use", [](const Device& d) {
        if (d.ordinal == kCpuDevice) throw BadValue("the CPU is a backend, not a current GPU: jiasu.set_backend('cpu')");
        set_current_device(d.ordinal);
      }, "Make this the current GPU of this thread.")
      .def("__eq__", [](const Device& a, nb::handle b) {
        return nb::isinstance<Device>(b) && nb::inst_ptr<Device>(b)->ordinal == a.ordinal;
      }, nb::arg("other").none())
      .def("__hash__", [](const Device& d) { return d.ordinal; })
      .def("__repr__", [](const Device& d) {
        if (d.ordinal == kCpuDevice) return std::string("<jiasu.Device cpu>");
        return "<jiasu.Device " + std::to_string(d.ordinal) + ": " + d.props().name + ", sm_" +
               std::to_string(d.props().arch()) + ">";
      });

  nb::class_<Event>(m, "Event", "A CUDA event, for ordering streams and timing.")
      .def("__init__", [](Event* self, bool timing) { new (self) Event(default_device(), timing); },
           nb::arg("timing") = true)
      .def("record", [](Event& e, nb::handle stream) {
        e.record(stream_handle(stream));
        return nb::none();
      }, nb::arg("stream") = nb::none())
      .def("synchronize", [](const Event& e) {
        nb::gil_scoped_release unlocked;
        e.synchronize();
      })
      .def_prop_ro("done", &Event::done)
      .def("elapsed_time", &Event::elapsed_ms, nb::arg("end"), "Milliseconds from this event to `end`.")
      .def_prop_ro("ptr", [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); });

  nb::class_<Stream>(m, "Stream", "A CUDA stream.")
      .def("__init__", [](Stream* self, bool non_blocking, int priority) {
        new (self) Stream(default_device(), non_blocking, priority);
      }, nb::arg("non_blocking") = false, nb::arg("priority") = 0)
      .def("synchronize", [](const Stream& s) {
        nb::gil_scoped_release unlocked;
        s.synchronize();
      })
      .def_prop_ro("done", &Stream::done)
      // Numba's `with stream.auto_synchronize():` (and `with stream:`): the stream is synchronized at the end.
      .def("auto_synchronize", [](nb::handle self) { return nb::borrow(self); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](const Stream& s, nb::args) {
        nb::gil_scoped_release unlocked;
        s.synchronize();
      })
      .def("wait_event", &Stream::wait, nb::arg("event"))
      .def("record", [](const Stream& s) {
        auto* e = new Event(s.device(), true);
        e->record(s.handle());
        return e;
      }, nb::rv_policy::take_ownership, "Record a new timing event on this stream and return it.")
      .def_prop_ro("device", [](const Stream& s) { return Device{s.device()}; })
      .def_prop_ro("ptr", [](const Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); });

  nb::class_<PinnedBuffer>(m, "PinnedBuffer", "Page-locked host memory.")
      .def(nb::init<size_t>(), nb::arg("nbytes"))
      .def_prop_ro("ptr", [](const PinnedBuffer& b) { return reinterpret_cast<uintptr_t>(b.data()); })
      .def_prop_ro("nbytes", &PinnedBuffer::bytes)
      .def_prop_ro("__array_interface__", [](const PinnedBuffer& b) { return host_bytes_interface(b.data(), b.bytes()); });

  nb::class_<HostDeviceMemory>(m, "HostDeviceMemory",
                               "Host memory that kernels use in place: mapped into the GPU's address space, or managed.")
      .def_static("mapped", &HostDeviceMemory::mapped, nb::arg("nbytes"), nb::arg("portable") = false,
                  nb::arg("write_combined") = false, "Page-locked host memory mapped into the current GPU's address space.")
      .def_static("managed", &HostDeviceMemory::managed, nb::arg("nbytes"), nb::arg("attach_global") = true,
                  "Managed memory, which the driver moves between host and the current GPU on demand.")
      .def_prop_ro("ptr", [](const HostDeviceMemory& b) { return reinterpret_cast<uintptr_t>(b.host()); },
                   "The host address.")
      .def_prop_ro("device_ptr", [](const HostDeviceMemory& b) { return static_cast<uintptr_t>(b.device_ptr()); },
                   "The address kernels use.")
      .def_prop_ro("nbytes", &HostDeviceMemory::bytes)
      .def_prop_ro("device", [](const HostDeviceMemory& b) { return Device{b.device()}; })
      .def_prop_ro("__array_interface__", [](const HostDeviceMemory& b) {
        return host_bytes_interface(b.host(), b.bytes());
      });
}

}  // namespace jiasu::py
