// jiasu.benchmark: the core's timing loop (runtime/benchmark.hpp) calling a Python function, and its result.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstdio>
#include <optional>

#include "common.hpp"
#include "runtime/backend.hpp"
#include "runtime/benchmark.hpp"

namespace jiasu::py {
namespace {

// The times of one clock, in milliseconds, with their statistics.
struct Timings {
  std::vector<double> ms;
  TimingStats stats;
};

struct BenchmarkResult {
  std::string name;
  int device;
  Timings cpu;
  std::optional<Timings> gpu;
};

Timings timings(std::vector<double> ms) {
  const TimingStats stats = timing_stats(ms);
  return {std::move(ms), stats};
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", ms);
  return text;
}

std::string summary(const Timings& t) {
  const TimingStats& s = t.stats;
  return "median " + ms_text(s.median) + " ms (min " + ms_text(s.min) + ", mean " + ms_text(s.mean) + " +/- " +
         ms_text(s.std) + ", max " + ms_text(s.max) + ")";
}

// A count from a Python int (not a bool): TypeError for another type, ValueError below `minimum` or beyond int.
int count_from(nb::handle value, const char* what, int minimum) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    throw BadArgument(std::string(what) + " must be an int, not " + python_type_name(value));
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow || n < minimum || n > INT_MAX)
    throw BadValue(std::string(what) + " must be an int from " + std::to_string(minimum) + " to " +
                   std::to_string(INT_MAX) + ", not " + python_str(value));
  return static_cast<int>(n);
}

std::string function_name(nb::handle fn) {
  for (const char* attribute : {"__qualname__", "__name__"})
    if (nb::hasattr(fn, attribute)) return python_str(fn.attr(attribute));
  return nb::cast<std::string>(nb::repr(fn));
}

}  // namespace

void bind_benchmark(nb::module_& m) {
  nb::class_<Timings>(m, "Timings", "The times of one clock over a benchmark's timed calls, in milliseconds.")
      .def_prop_ro("times", [](const Timings& t) { return numpy().attr("array")(nb::cast(t.ms), "float64"); },
                   "Each timed call's time (a NumPy float64 array, in milliseconds).")
      .def_prop_ro("min", [](const Timings& t) { return t.stats.min; })
      .def_prop_ro("median", [](const Timings& t) { return t.stats.median; })
      .def_prop_ro("mean", [](const Timings& t) { return t.stats.mean; })
      .def_prop_ro("max", [](const Timings& t) { return t.stats.max; })
      .def_prop_ro("std", [](const Timings& t) { return t.stats.std; }, "The population standard deviation.")
      .def("__len__", [](const Timings& t) { return t.ms.size(); })
      .def("__repr__", [](const Timings& t) { return "Timings(" + summary(t) + ", " + std::to_string(t.ms.size()) + " calls)"; });

  nb::class_<BenchmarkResult>(m, "BenchmarkResult", "What jiasu.benchmark measured.")
      .def_ro("name", &BenchmarkResult::name, "The function's name.")
      .def_ro("cpu", &BenchmarkResult::cpu, "The host's wall clock of each call itself (Timings).")
      .def_prop_ro("gpu", [](const BenchmarkResult& r) { return r.gpu ? nb::cast(*r.gpu) : nb::none(); },
                   "The GPU time of each call, between CUDA events on the default stream (Timings); None on the "
                   "CPU backend.")
      .def_prop_ro("device", [](const BenchmarkResult& r) { return Device{r.device}; })
      .def("__repr__", [](const BenchmarkResult& r) {
        std::string text = r.name + ": CPU " + summary(r.cpu);
        if (r.gpu) text += ", GPU-" + std::to_string(r.device) + " " + summary(*r.gpu);
        return text + ", " + std::to_string(r.cpu.ms.size()) + " calls";
      });

  m.def("benchmark", [](nb::handle fn, nb::tuple args, nb::dict kwargs, nb::handle n_repeat, nb::handle n_warmup,
                        nb::handle flush_l2) {
    if (!PyCallable_Check(fn.ptr())) throw BadArgument("benchmark needs a callable, not " + python_type_name(fn));
    if (!PyBool_Check(flush_l2.ptr())) throw BadArgument("flush_l2 must be True or False, not " + python_type_name(flush_l2));
    BenchmarkOptions options;
    options.n_repeat = count_from(n_repeat, "n_repeat", 1);
    options.n_warmup = count_from(n_warmup, "n_warmup", 0);
    options.flush_l2 = flush_l2.ptr() == Py_True;
    const int device = default_device();
    BenchmarkTimes times = benchmark(device, [&] {
      PyObject* result = PyObject_Call(fn.ptr(), args.ptr(), kwargs.ptr());
      if (!result) throw nb::python_error();
      Py_DECREF(result);
    }, options);
    BenchmarkResult result{function_name(fn), device, timings(std::move(times.cpu_ms)), std::nullopt};
    if (!times.gpu_ms.empty()) result.gpu = timings(std::move(times.gpu_ms));
    return result;
  }, nb::arg("fn"), nb::arg("args"), nb::arg("kwargs"), nb::arg("n_repeat"), nb::arg("n_warmup"), nb::arg("flush_l2"),
     "The timing loop of jiasu.benchmark (see there).");
}

}  // namespace jiasu::py
