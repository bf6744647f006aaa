// A compiled kernel's resources and its occupancy (k.resources(), RawKernel.resources), as Python objects.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <climits>
#include <cstdio>

#include "common.hpp"
#include "runtime/memory.hpp"

namespace jiasu::py {
namespace {

nb::object optional_int(const std::optional<int>& value) { return value ? nb::object(nb::int_(*value)) : nb::none(); }

nb::object blocks_or_none(int blocks) { return blocks >= Occupancy::kUnlimited ? nb::none() : nb::object(nb::int_(blocks)); }

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g%%", fraction * 100);
  return text;
}

}  // namespace

void bind_resources(nb::module_& m) {
  nb::class_<KernelOccupancy>(m, "Occupancy",
                              "A kernel's theoretical occupancy at one block size and dynamic shared memory size, by "
                              "the CUDA Occupancy Calculator's rules: resident blocks and warps per multiprocessor, "
                              "what limits them, and the block size with the most resident threads.")
      .def_prop_ro("block_size", [](const KernelOccupancy& o) { return o.occupancy.block_size; })
      .def_prop_ro("shared_bytes", [](const KernelOccupancy& o) { return o.occupancy.dynamic_shared_bytes; },
                   "The dynamic shared memory per block asked about.")
      .def_prop_ro("occupancy", [](const KernelOccupancy& o) { return o.occupancy.occupancy; },
                   "Resident warps / the most a multiprocessor holds, from 0 to 1.")
      .def_prop_ro("active_blocks", [](const KernelOccupancy& o) { return o.occupancy.active_blocks; },
                   "Resident blocks per multiprocessor (0: a block of this size cannot run).")
      .def_prop_ro("active_warps", [](const KernelOccupancy& o) { return o.occupancy.active_warps; })
      .def_prop_ro("max_warps", [](const KernelOccupancy& o) { return o.occupancy.max_warps; },
                   "The warps a multiprocessor holds at most.")
      .def_prop_ro("limiter", [](const KernelOccupancy& o) { return limiter_name(o.occupancy.limiter); },
                   "What bounds the resident blocks: 'warps' (the multiprocessor's threads), 'blocks' (its block "
                   "slots), 'registers', 'shared_memory', or 'block_size' (more threads than a block may have).")
      .def_prop_ro("limits", [](const KernelOccupancy& o) {
        nb::dict d;
        d["warps"] = blocks_or_none(o.occupancy.blocks_by_warps);
        d["blocks"] = blocks_or_none(o.occupancy.blocks_by_blocks);
        d["registers"] = blocks_or_none(o.occupancy.blocks_by_registers);
        d["shared_memory"] = blocks_or_none(o.occupancy.blocks_by_shared_memory);
        return d;
      }, "The blocks per multiprocessor each resource alone admits (None: no bound).")
      .def_prop_ro("best_block_size", [](const KernelOccupancy& o) { return o.best_block_size; },
                   "The block size with the most resident threads for the same dynamic shared memory, as "
                   "cudaOccupancyMaxPotentialBlockSize chooses it (0: none fits).")
      .def("__repr__", [](const KernelOccupancy& o) {
        const Occupancy& x = o.occupancy;
        return "Occupancy(" + percent(x.occupancy) + " at " + std::to_string(x.block_size) + " threads and " +
               std::to_string(x.dynamic_shared_bytes) + " shared bytes: " + std::to_string(x.active_blocks) +
               " blocks, " + std::to_string(x.active_warps) + " of " + std::to_string(x.max_warps) +
               " warps per multiprocessor, limited by " + limiter_name(x.limiter) + "; best block size " +
               std::to_string(o.best_block_size) + ")";
      });

  nb::class_<KernelResources>(m, "KernelResources",
                              "What a compiled kernel uses: on a GPU the driver's account of the loaded kernel; on "
                              "the CPU backend what its source declares (no registers, constant memory or occupancy).")
      .def_prop_ro("registers", [](const KernelResources& r) { return optional_int(r.registers); },
                   "Registers per thread (None on the CPU backend).")
      .def_prop_ro("shared_bytes", [](const KernelResources& r) { return r.shared_bytes; },
                   "Static shared memory per block, in bytes.")
      .def_prop_ro("local_bytes", [](const KernelResources& r) { return r.local_bytes; },
                   "Local memory per thread, in bytes: local arrays and, on a GPU, registers spilled.")
      .def_prop_ro("const_bytes", [](const KernelResources& r) { return optional_int(r.const_bytes); },
                   "The kernel's own constant memory, in bytes (None on the CPU backend).")
      .def_prop_ro("max_threads_per_block", [](const KernelResources& r) { return r.max_threads_per_block; },
                   "The largest block the kernel can run (its registers may make it smaller than the device's).")
      .def_prop_ro("device", [](const KernelResources& r) { return Device{r.device}; })
      .def("occupancy", [](const KernelResources& r, nb::handle block_size, nb::handle shared_bytes) -> nb::object {
        const Dim3 block = dim3_from(block_size, "block_size");
        const unsigned long long threads = 1ull * block.x * block.y * block.z;
        const auto result = kernel_occupancy(r, static_cast<int>(std::min<unsigned long long>(threads, INT_MAX)),
                                             shared_bytes_from(shared_bytes, "shared_bytes"));
        return result ? nb::cast(*result) : nb::none();
      }, nb::arg("block_size"), nb::arg("shared_bytes") = 0,
         "The occupancy of blocks of `block_size` threads (an int or a tuple of up to 3 ints) with `shared_bytes` "
         "of dynamic shared memory each, on the kernel's GPU (jiasu's launches opt in to shared memory beyond 48 "
         "KiB, up to the device's limit); None on the CPU backend, which has no occupancy.")
      .def("__repr__", [](const KernelResources& r) {
        auto text = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("None"); };
        return "KernelResources(registers=" + text(r.registers) + ", shared_bytes=" + std::to_string(r.shared_bytes) +
               ", local_bytes=" + std::to_string(r.local_bytes) + ", const_bytes=" + text(r.const_bytes) +
               ", max_threads_per_block=" + std::to_string(r.max_threads_per_block) + ", device=" +
               (r.device == kCpuDevice ? std::string("'cpu'") : std::to_string(r.device)) + ")";
      });
}

}  // namespace jiasu::py
