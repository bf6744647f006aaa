// The tuning tools: jiasu.graph() (the core's Graph) and jiasu.profile() (its Profile), as context managers.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "runtime/backend.hpp"
#include "runtime/graph.hpp"
#include "runtime/memory.hpp"
#include "program/advisor.hpp"
#include "runtime/profiler.hpp"

namespace jiasu::py {
namespace {

nb::tuple dims(Dim3 d) { return nb::make_tuple(d.x, d.y, d.z); }
nb::object known(int64_t value) { return value < 0 ? nb::none() : nb::object(nb::int_(value)); }

nb::dict record_dict(const LaunchRecord& r) {
  nb::dict d;
  d["name"] = r.name;
  d["device"] = r.device == kCpuDevice ? nb::object(nb::str("cpu")) : nb::object(nb::int_(r.device));
  d["grid"] = dims(r.grid);
  d["block"] = dims(r.block);
  d["shared_bytes"] = r.shared_bytes;
  d["library"] = r.library;
  d["registers"] = r.has_attributes ? nb::object(nb::int_(r.attributes.registers)) : nb::none();
  d["local_bytes"] = r.has_attributes ? nb::object(nb::int_(r.attributes.local_bytes)) : nb::none();
  d["static_shared_bytes"] = r.has_attributes ? nb::object(nb::int_(r.attributes.static_shared_bytes)) : nb::none();
  d["bytes_read"] = known(r.bytes_read);
  d["bytes_written"] = known(r.bytes_written);
  d["flops"] = known(r.flops);
  d["ms"] = r.ms;
  return d;
}

nb::dict advice_dict(const KernelAdvice& k) {
  nb::dict d;
  d["name"] = k.row.name;
  d["grid"] = dims(k.row.grid);
  d["block"] = dims(k.row.block);
  d["calls"] = k.row.calls;
  d["total_ms"] = k.row.total_ms;
  d["mean_ms"] = k.row.total_ms / double(k.row.calls);
  d["library"] = k.library;
  d["registers"] = k.has_attributes ? nb::object(nb::int_(k.attributes.registers)) : nb::none();
  d["local_bytes"] = k.has_attributes ? nb::object(nb::int_(k.attributes.local_bytes)) : nb::none();
  d["shared_bytes"] = k.has_attributes ? nb::object(nb::int_(k.attributes.static_shared_bytes + k.dynamic_shared_bytes))
                                       : nb::none();
  d["occupancy"] = k.occupancy ? nb::object(nb::float_(k.occupancy->occupancy)) : nb::none();
  d["limiter"] = k.occupancy ? nb::object(nb::str(limiter_name(k.occupancy->limiter))) : nb::none();
  d["active_blocks"] = k.occupancy ? nb::object(nb::int_(k.occupancy->active_blocks)) : nb::none();
  d["best_block_size"] = k.occupancy ? nb::object(nb::int_(k.best_block_size)) : nb::none();
  d["bytes"] = known(k.bytes);
  d["gbs"] = k.bytes >= 0 ? nb::object(nb::float_(k.gbs)) : nb::none();
  d["bandwidth_fraction"] = k.bytes >= 0 ? nb::object(nb::float_(k.bandwidth_fraction)) : nb::none();
  d["flops"] = known(k.flops);
  d["gflops"] = k.flops >= 0 ? nb::object(nb::float_(k.gflops)) : nb::none();
  d["advice"] = k.advice;
  return d;
}

}  // namespace

void bind_tuning(nb::module_& m) {
  nb::class_<ProfileReport>(m, "ProfileReport", "The advisor's report on a profile: print() it.")
      .def_prop_ro("kernels", [](const ProfileReport& r) {
        nb::list out;
        for (const KernelAdvice& k : r.kernels) out.append(advice_dict(k));
        return out;
      }, "One dict per kernel and configuration, the most total time first.")
      .def_prop_ro("peaks", [](const ProfileReport& r) {
        nb::dict d;
        d["device"] = r.device == kCpuDevice ? nb::object(nb::str("cpu")) : nb::object(nb::int_(r.device));
        d["bandwidth_gbs"] = r.peaks.bandwidth_gbs;
        d["theoretical_bandwidth_gbs"] = r.peaks.theoretical_bandwidth_gbs;
        d["fp32_gflops"] = r.peaks.fp32_gflops;
        d["bandwidth_method"] = r.peaks.bandwidth_method;
        return d;
      })
      .def("__str__", &ProfileReport::text);

  nb::class_<Graph>(m, "Graph",
                    "A CUDA graph: `with g:` records the GPU work queued inside (kernels, copies, array operations) "
                    "instead of running it; g.replay() runs it again. A later `with g:` (or `with g.update():`) "
                    "records the work anew and updates the graph in place.")
      .def("__init__", [](Graph* self, nb::handle stream) {
        new (self) Graph(default_device(), stream_handle(stream));
      }, nb::arg("stream").none() = nb::none())
      .def("__enter__", [](nb::handle self) {
        nb::cast<Graph&>(self).begin();
        return nb::borrow(self);
      })
      .def("__exit__", [](Graph& g, nb::args exception) {
        g.end(/*keep=*/exception.size() == 0 || exception[0].is_none());
        return false;
      })
      .def("update", [](nb::handle self) { return nb::borrow(self); },
           "`with g.update():` records the work anew (new arrays, new scalars) and updates the graph in place.")
      .def("replay", [](Graph& g, nb::handle stream) { g.replay(stream_handle(stream)); },
           nb::arg("stream").none() = nb::none(),
           "Run the recorded work on `stream` (default: the graph's stream, else the default stream).")
      .def_prop_ro("nodes", &Graph::nodes, "How many operations the last recording holds.")
      .def_prop_ro("updated", &Graph::updated,
                   "Whether the last recording updated the graph in place (False: it was instantiated anew).")
      .def_prop_ro("captured", &Graph::captured, "Whether the graph has work to replay.")
      .def_prop_ro("capturing", &Graph::is_capturing)
      .def("__repr__", [](const Graph& g) {
        return "<jiasu.Graph on device " + std::to_string(g.device()) + ": " +
               (g.captured() ? std::to_string(g.nodes()) + " nodes" : std::string("nothing recorded")) + ">";
      });

  nb::class_<Profile>(m, "Profile",
                      "`with jiasu.profile() as p:` records every kernel launch, matmul and convolution inside, with "
                      "its configuration and its time (CUDA events on a GPU, the host clock on the CPU backend); "
                      "print(p) shows the table.")
      .def(nb::init<>())
      .def("__enter__", [](nb::handle self) {
        nb::cast<Profile&>(self).start();
        return nb::borrow(self);
      })
      .def("__exit__", [](Profile& p, nb::args) {
        nb::gil_scoped_release unlocked;
        p.stop();
        return false;
      })
      .def_prop_ro("records", [](const Profile& p) {
        nb::list out;
        for (const LaunchRecord& r : p.records()) out.append(record_dict(r));
        return out;
      }, "One dict per launch, in launch order: name, device, grid, block, shared_bytes, registers, local_bytes, "
         "static_shared_bytes, bytes_read, bytes_written, flops (None where unknown) and ms.")
      .def("summary", [](const Profile& p) {
        nb::list out;
        for (const Profile::Summary& s : p.summary()) {
          nb::dict d = record_dict(p.records()[s.first]);
          d["calls"] = s.calls;
          d["total_ms"] = s.total_ms;
          d["mean_ms"] = s.total_ms / double(s.calls);
          d["min_ms"] = s.min_ms;
          d["max_ms"] = s.max_ms;
          d.attr("pop")("ms");
          out.append(d);
        }
        return out;
      }, "One dict per kernel and configuration, the most total time first.")
      .def("report", [](const Profile& p, const std::map<std::string, int64_t>& flops) {
        if (p.open()) throw BadValue("the profile is still open: ask for the report after the `with` block");
        nb::gil_scoped_release unlocked;  // the first report measures the device's memory bandwidth
        return advise(p, flops);
      }, nb::arg("flops") = std::map<std::string, int64_t>(),
         "The advisor's report: per kernel its resources, occupancy, bandwidth and FLOP/s against the device's "
         "peaks, and advice. `flops` maps kernel names to the FLOPs of one call, where you counted them.")
      .def_prop_ro("wall_ms", &Profile::wall_ms)
      .def("table", &Profile::table)
      .def("__str__", &Profile::table)
      .def("__repr__", [](const Profile& p) {
        return "<jiasu.Profile: " + std::to_string(p.records().size()) + " launches" + (p.open() ? ", open>" : ">");
      });
}

}  // namespace jiasu::py
