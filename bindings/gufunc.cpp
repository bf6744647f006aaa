// Generalized ufuncs (Numba's @guvectorize): ops::Gufunc's layout, signatures and call shapes, converted.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "ops/gufunc.hpp"

namespace jiasu::py {

void bind_gufunc(nb::module_& m) {
  nb::class_<ops::Gufunc>(m, "Gufunc", "A generalized ufunc's layout and signatures, and the shapes of its calls.")
      .def("__init__", [](ops::Gufunc* self, const std::string& layout, nb::handle signatures) {
        // Each signature: a (dtype, ndim) pair per operand, ndim None for a number.
        std::vector<std::vector<ops::GufuncParam>> converted;
        for (nb::handle sig : signatures) {
          std::vector<ops::GufuncParam> params;
          for (nb::handle param : sig) {
            nb::handle ndim = param[1];
            params.push_back({dtype_from_object(param[0]),
                              ndim.is_none() ? ops::GufuncParam::kScalar : nb::cast<int>(ndim)});
          }
          converted.push_back(std::move(params));
        }
        new (self) ops::Gufunc(layout, std::move(converted));
      }, nb::arg("layout"), nb::arg("signatures"))
      .def_prop_ro("nin", &ops::Gufunc::nin)
      .def_prop_ro("nout", &ops::Gufunc::nout)
      .def("dtypes", [](const ops::Gufunc& g, size_t index) {
        nb::list out;
        for (const ops::GufuncParam& p : g.signature(index)) out.append(numpy_dtype(p.dtype));
        return out;
      }, nb::arg("index"), "The dtypes of signature `index`: the inputs', then the outputs'.")
      .def("choose", [](const ops::Gufunc& g, const std::vector<nb::handle>& dtypes) {
        std::vector<DType> inputs;
        for (nb::handle d : dtypes) inputs.push_back(dtype_from_object(d));
        return g.choose(inputs);
      }, nb::arg("dtypes"), "The index of the signature for inputs of these dtypes (Numba's choice).")
      .def("prepare", [](const ops::Gufunc& g, size_t index, const std::vector<Array>& inputs,
                         const std::vector<std::optional<Array>>& outputs) {
        ops::GufuncLaunch launch = g.prepare(index, inputs, outputs);
        return nb::make_tuple(to_tuple(launch.loop), launch.count, nb::cast(launch.operands), nb::cast(launch.outputs));
      }, nb::arg("index"), nb::arg("inputs"), nb::arg("outputs"),
         "(loop, count, operands, outputs) of a call: the kernel's loop shape and its size, the operands as the kernel "
         "takes them, and the outputs (those given, and those made).")
      .def("kernel_source", &ops::Gufunc::kernel_source, nb::arg("index"), nb::arg("loop_rank"), nb::arg("name"),
           "The kernel that calls the function `core` at every loop index.");
}

}  // namespace jiasu::py
