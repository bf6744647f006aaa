// CUDA graphs: jiasu.graph() as a context manager over the core's Graph.
#include "common.hpp"
#include "runtime/backend.hpp"
#include "runtime/graph.hpp"

namespace jiasu::py {

void bind_graph(nb::module_& m) {
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
}

}  // namespace jiasu::py
