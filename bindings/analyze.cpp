// k.analyze's report (cpu/access_trace.hpp): its rows as dicts, its table as str().
#include <nanobind/stl/string.h>

#include "common.hpp"
#include "cpu/access_trace.hpp"

namespace jiasu::py {
namespace {

nb::dict row_dict(const AccessRow& row) {
  const emit::AccessSite& site = row.site;
  const AccessStats& t = row.stats;
  const double requests = double(t.requests), transactions = double(t.transactions), ideal = double(t.ideal);
  nb::dict d;
  d["file"] = site.file;
  d["line"] = site.line;
  d["column"] = site.column;
  d["source"] = site.source;
  d["array"] = site.array;
  d["space"] = site.shared ? "shared" : "global";
  d["access"] = emit::access_kind_name(site.kind);
  d["requests"] = t.requests;
  d["accesses"] = t.accesses;
  d["bytes"] = t.bytes;
  d["efficiency"] = row.efficiency();
  nb::object none = nb::none();
  d["sectors"] = site.shared ? none : nb::int_(t.transactions);
  d["ideal_sectors"] = site.shared ? none : nb::int_(t.ideal);
  d["sectors_per_request"] = site.shared ? none : nb::float_(transactions / requests);
  d["wavefronts"] = site.shared ? nb::int_(t.transactions) : none;
  d["ideal_wavefronts"] = site.shared ? nb::int_(t.ideal) : none;
  d["wavefronts_per_request"] = site.shared ? nb::float_(transactions / requests) : none;
  d["bank_conflicts"] = site.shared ? nb::int_(t.transactions - t.ideal) : none;
  d["ways"] = site.shared ? nb::float_(ideal > 0 ? transactions / ideal : 1.0) : none;
  d["ways_max"] = site.shared ? nb::float_(t.max_ways) : none;
  return d;
}

}  // namespace

void bind_access_report(nb::module_& m) {
  nb::class_<AccessReport>(m, "AccessReport",
                           "What k.analyze(blocks, threads, *args) found: per access site of the Python source, the "
                           "warp requests to global memory (32-byte sectors, coalescing) and to shared memory "
                           "(wavefronts, bank conflicts). print() it for a table; rows gives the numbers.")
      .def_prop_ro("kernel", [](const AccessReport& r) { return r.kernel; })
      .def_prop_ro("rows", [](const AccessReport& r) {
        nb::list rows;
        for (const AccessRow& row : r.rows) rows.append(row_dict(row));
        return rows;
      }, "One dict per access site that ran, in source order: file, line, column, source, array, space ('global' "
         "or 'shared'), access ('load', 'store', 'load+store', 'atomic'), requests, accesses (the lanes'), bytes "
         "(the lanes asked for), efficiency (ideal / actual transactions, in percent); global: sectors, "
         "ideal_sectors, sectors_per_request; shared: wavefronts, ideal_wavefronts, wavefronts_per_request, "
         "bank_conflicts (wavefronts beyond the ideal), ways (wavefronts / ideal), ways_max (of one request). "
         "The other space's keys are None.")
      .def("__str__", &AccessReport::table)
      .def("__repr__", [](const AccessReport& r) {
        return "<AccessReport of kernel '" + r.kernel + "': " + std::to_string(r.rows.size()) + " access sites>";
      });
}

}  // namespace jiasu::py
