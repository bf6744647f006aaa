// The one extension module, jiasu._core.
#include "common.hpp"

NB_MODULE(_core, m) {
  m.doc() = "jiasu's C++ core";
  m.attr("__version__") = JIASU_VERSION;
  jiasu::py::bind_errors(m);
  jiasu::py::bind_runtime(m);
  jiasu::py::bind_tuning(m);
  jiasu::py::bind_array(m);
  jiasu::py::bind_shapes(m);
  jiasu::py::bind_reductions(m);
  jiasu::py::bind_vectorize(m);
  jiasu::py::bind_gufunc(m);
  jiasu::py::bind_nn(m);
  jiasu::py::bind_resources(m);
  jiasu::py::bind_launch(m);
  jiasu::py::bind_access_report(m);
  jiasu::py::bind_kernel(m);
  jiasu::py::bind_benchmark(m);
  jiasu::py::bind_store(m);
  jiasu::py::bind_distributed(m);
}
