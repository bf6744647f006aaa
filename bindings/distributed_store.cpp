// jiasu.distributed.TCPStore: the rendezvous store of core/distributed/store.hpp. Waits release the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "common.hpp"
#include "distributed/store.hpp"

namespace jiasu::py {
namespace {

using distributed::TcpStore;

constexpr double kDefaultTimeoutS = 300.0;  // torch.distributed's default for its store

// Seconds from None (the default), a number or a datetime.timedelta.
double seconds_from(nb::handle timeout, double fallback) {
  if (timeout.is_none()) return fallback;
  if (PyBool_Check(timeout.ptr()))
    throw BadArgument("timeout must be a number of seconds or a datetime.timedelta, not bool");
  nb::object value = nb::hasattr(timeout, "total_seconds") ? timeout.attr("total_seconds")() : nb::borrow(timeout);
  if (!PyFloat_Check(value.ptr()) && !PyLong_Check(value.ptr()))
    throw BadArgument("timeout must be a number of seconds or a datetime.timedelta, not " + python_type_name(timeout));
  return nb::cast<double>(value);
}

// A value to store: bytes, or str (stored as UTF-8).
std::string value_from(nb::handle value) {
  if (nb::isinstance<nb::bytes>(value)) {
    nb::bytes bytes = nb::borrow<nb::bytes>(value);
    return std::string(bytes.c_str(), bytes.size());
  }
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  throw BadArgument("a store value must be bytes or str, not " + python_type_name(value));
}

nb::bytes as_bytes(const std::string& value) { return nb::bytes(value.data(), value.size()); }

}  // namespace

void bind_store(nb::module_& m) {
  nb::class_<TcpStore>(m, "TCPStore",
                       "TCPStore(host, port, world_size=None, is_master=False, timeout=300.0): the key-value store "
                       "through which ranks meet. The master serves it (port 0: any free port, see .port).")
      .def("__init__",
           [](TcpStore* self, const std::string& host, int port, std::optional<int> world_size, bool is_master,
              nb::handle timeout) {
             const double seconds = seconds_from(timeout, kDefaultTimeoutS);
             nb::gil_scoped_release unlocked;
             new (self) TcpStore(host, port, world_size.value_or(0), is_master, seconds);
           },
           nb::arg("host"), nb::arg("port"), nb::arg("world_size") = nb::none(), nb::arg("is_master") = false,
           nb::arg("timeout") = nb::none())
      .def_prop_ro("port", &TcpStore::port)
      .def_prop_ro("world_size",
                   [](const TcpStore& s) { return s.world_size() ? std::optional<int>(s.world_size()) : std::nullopt; })
      .def_prop_ro("is_master", &TcpStore::is_master)
      .def_prop_ro("timeout", [](TcpStore& s) { return s.client()->timeout(); })
      .def("set",
           [](TcpStore& s, const std::string& key, nb::handle value) {
             std::string bytes = value_from(value);
             auto client = s.client();
             nb::gil_scoped_release unlocked;
             client->set(key, bytes);
           },
           nb::arg("key"), nb::arg("value"))
      .def("get",
           [](TcpStore& s, const std::string& key) {
             std::string value;
             auto client = s.client();
             {
               nb::gil_scoped_release unlocked;
               value = client->get(key);
             }
             return as_bytes(value);
           },
           nb::arg("key"), "The value under key (bytes), waiting for it up to the store's timeout.")
      .def("add",
           [](TcpStore& s, const std::string& key, int64_t amount) {
             auto client = s.client();
             nb::gil_scoped_release unlocked;
             return client->add(key, amount);
           },
           nb::arg("key"), nb::arg("amount"))
      .def("check",
           [](TcpStore& s, const std::vector<std::string>& keys) {
             auto client = s.client();
             nb::gil_scoped_release unlocked;
             return client->check(keys);
           },
           nb::arg("keys"))
      .def("delete_key",
           [](TcpStore& s, const std::string& key) {
             auto client = s.client();
             nb::gil_scoped_release unlocked;
             return client->delete_key(key);
           },
           nb::arg("key"))
      .def("wait",
           [](TcpStore& s, const std::vector<std::string>& keys, nb::handle timeout) {
             auto client = s.client();
             const double seconds = seconds_from(timeout, client->timeout());
             nb::gil_scoped_release unlocked;
             client->wait(keys, seconds);
           },
           nb::arg("keys"), nb::arg("timeout") = nb::none())
      .def("barrier",
           [](TcpStore& s, const std::string& name) {
             nb::gil_scoped_release unlocked;
             s.barrier(name);
           },
           nb::arg("name") = "barrier", "Waits until world_size ranks have reached this barrier.")
      .def("close", &TcpStore::close, nb::call_guard<nb::gil_scoped_release>(),
           "Ends this rank's connection; the master's store first waits (up to 10 s) for the others to hang up.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](TcpStore& s, nb::args) {
        nb::gil_scoped_release unlocked;
        s.close();
      });
}

}  // namespace jiasu::py
