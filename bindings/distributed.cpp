// jiasu._core.distributed: NCCL communicators and their collectives (core/distributed). Converts arrays and
// streams; the results of in-place calls are the Python objects given.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "common.hpp"
#include "distributed/communicator.hpp"
#include "distributed/watchdog.hpp"

namespace jiasu::py {
namespace {

using distributed::Communicator;

// out when given (checked by the core), else a new array of `shape` made for the call.
struct Result {
  Array array;
  nb::object object;
};
Result result_for(const Communicator& comm, nb::handle out, const Shape& shape, const Array& x, cu::CUstream stream) {
  if (!out.is_none()) return {device_array_from(out), nb::borrow(out)};
  Array made = comm.new_result(shape, x.dtype(), stream);
  return {made, nb::cast(made)};
}

// The collectives wait for nothing, but NCCL may take a moment to queue (and the CPU stand-in runs them in
// the call), so other Python threads run meanwhile.
template <typename Call>
void unlocked(const Call& call) {
  nb::gil_scoped_release released;
  call();
}

nb::object all_reduce(Communicator& c, nb::handle x, const std::string& op, nb::handle out, nb::handle stream) {
  const Array a = device_array_from(x);
  const nccl::ReduceOp reduce_op = nccl::reduce_op(op);
  const cu::CUstream s = stream_handle(stream);
  const Result r = out.is_none() ? Result{a, nb::borrow(x)} : result_for(c, out, a.shape(), a, s);
  unlocked([&] { c.all_reduce(a, r.array, reduce_op, s); });
  return r.object;
}

nb::object reduce(Communicator& c, nb::handle x, int root, const std::string& op, nb::handle out, nb::handle stream) {
  const Array a = device_array_from(x);
  const nccl::ReduceOp reduce_op = nccl::reduce_op(op);
  const cu::CUstream s = stream_handle(stream);
  const Result r = out.is_none() ? Result{a, nb::borrow(x)} : result_for(c, out, a.shape(), a, s);
  unlocked([&] { c.reduce(a, r.array, reduce_op, root, s); });
  return r.object;
}

nb::object broadcast(Communicator& c, nb::handle x, int root, nb::handle stream) {
  const Array a = device_array_from(x);
  const cu::CUstream s = stream_handle(stream);
  unlocked([&] { c.broadcast(a, root, s); });
  return nb::borrow(x);
}

nb::object all_gather(Communicator& c, nb::handle x, nb::handle out, nb::handle stream) {
  const Array a = device_array_from(x);
  const cu::CUstream s = stream_handle(stream);
  const Result r = result_for(c, out, c.gathered_shape(a.shape()), a, s);
  unlocked([&] { c.all_gather(a, r.array, s); });
  return r.object;
}

nb::object reduce_scatter(Communicator& c, nb::handle x, const std::string& op, nb::handle out, nb::handle stream) {
  const Array a = device_array_from(x);
  const nccl::ReduceOp reduce_op = nccl::reduce_op(op);
  const cu::CUstream s = stream_handle(stream);
  const Result r = result_for(c, out, c.scattered_shape(a.shape()), a, s);
  unlocked([&] { c.reduce_scatter(a, r.array, reduce_op, s); });
  return r.object;
}

nb::object all_to_all(Communicator& c, nb::handle x, nb::handle out, nb::handle stream) {
  const Array a = device_array_from(x);
  const cu::CUstream s = stream_handle(stream);
  const Result r = result_for(c, out, a.shape(), a, s);
  unlocked([&] { c.all_to_all(a, r.array, s); });
  return r.object;
}

nb::object send(Communicator& c, nb::handle x, int peer, nb::handle stream) {
  const Array a = device_array_from(x);
  const cu::CUstream s = stream_handle(stream);
  unlocked([&] { c.send(a, peer, s); });
  return nb::borrow(x);
}

nb::object recv(Communicator& c, nb::handle x, int peer, nb::handle stream) {
  const Array a = device_array_from(x);
  const cu::CUstream s = stream_handle(stream);
  unlocked([&] { c.recv(a, peer, s); });
  return nb::borrow(x);
}

}  // namespace

void bind_distributed(nb::module_& m) {
  nb::module_ d = m.def_submodule("distributed", "NCCL communicators (core/distributed)");
  d.def("unique_id", [] {
    const std::string id = distributed::new_unique_id();
    return nb::bytes(id.data(), id.size());
  }, "A fresh NCCL unique id (128 bytes): rank 0 makes it and shares it with the others.");
  d.def("group_start", &distributed::group_start);
  d.def("group_end", [] {
    nb::gil_scoped_release released;
    distributed::group_end();
  });
  d.def("shutdown", [] {
    nb::gil_scoped_release released;
    distributed::shutdown();
  }, "Stops the watchdog and aborts the communicators still alive (at exit).");

  nb::class_<Communicator>(d, "Communicator")
      .def_static("create", [](nb::bytes id, int rank, int world_size, int device, double timeout, bool check_calls) {
        std::string bytes(id.c_str(), id.size());
        nb::gil_scoped_release released;
        return Communicator::create(bytes, rank, world_size, device, timeout, check_calls);
      }, nb::arg("unique_id"), nb::arg("rank"), nb::arg("world_size"), nb::arg("device"), nb::arg("timeout"),
         nb::arg("check_calls") = false)
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("world_size", &Communicator::world_size)
      .def_prop_ro("device", &Communicator::device)
      .def_prop_ro("timeout", &Communicator::timeout_s)
      .def_prop_ro("alive", &Communicator::alive)
      .def_prop_ro("check_calls", &Communicator::check_calls)
      .def("all_reduce", &all_reduce, nb::arg("x"), nb::arg("op"), nb::arg("out").none(), nb::arg("stream").none())
      .def("reduce", &reduce, nb::arg("x"), nb::arg("root"), nb::arg("op"), nb::arg("out").none(),
           nb::arg("stream").none())
      .def("broadcast", &broadcast, nb::arg("x"), nb::arg("root"), nb::arg("stream").none())
      .def("all_gather", &all_gather, nb::arg("x"), nb::arg("out").none(), nb::arg("stream").none())
      .def("reduce_scatter", &reduce_scatter, nb::arg("x"), nb::arg("op"), nb::arg("out").none(),
           nb::arg("stream").none())
      .def("all_to_all", &all_to_all, nb::arg("x"), nb::arg("out").none(), nb::arg("stream").none())
      .def("send", &send, nb::arg("x"), nb::arg("peer"), nb::arg("stream").none())
      .def("recv", &recv, nb::arg("x"), nb::arg("peer"), nb::arg("stream").none())
      .def("barrier", [](Communicator& c, nb::handle stream) {
        const cu::CUstream s = stream_handle(stream);
        nb::gil_scoped_release released;
        c.barrier(s);
      }, nb::arg("stream").none())
      .def("synchronize", &Communicator::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("split", &Communicator::split, nb::arg("color"), nb::arg("key"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("abort", &Communicator::abort, nb::call_guard<nb::gil_scoped_release>())
      .def("destroy", &Communicator::destroy, nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace jiasu::py
