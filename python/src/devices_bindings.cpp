// devices() and attributes(): `cudatool devices` and `cudatool attrs`, request -> report ->
// the CLI's JSON renderer.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "attrs_report.hpp"
#include "bindings.hpp"
#include "cudatool/base/error.hpp"
#include "devices_report.hpp"

namespace cudatool::python {

using namespace nb::literals;

void bind_devices(nb::module_& m) {
  m.def(
      "devices",
      [](bool memory_usage) {
        app::DevicesRequest request;
        request.memory_usage = memory_usage;
        app::DevicesReport report;
        {
          nb::gil_scoped_release unlocked;
          report = app::devices_report(request);
        }
        // A device the driver does not answer for: listed, and the CLI exits 5 naming it.
        for (const DeviceInfo& d : report.listing.devices)
          if (!d.error.empty())
            throw RuntimeError("device " + std::to_string(d.ordinal) + " (" + d.pci_bus_id + ", " +
                               (d.uuid.empty() ? "no UUID" : d.uuid) +
                               ") does not answer: " + d.error);
        return document(app::devices_json(report));
      },
      "memory_usage"_a = false, "`cudatool devices --json` as a dict.");
  m.def(
      "attributes",
      [](std::optional<std::string> device, const std::vector<std::string>& names) {
        const app::AttrsRequest request = app::attrs_request(device, names, false);
        app::AttrsReport report;
        {
          nb::gil_scoped_release unlocked;
          report = app::attrs_report(request);
        }
        return document(app::attrs_json(report));
      },
      "device"_a = nb::none(), "names"_a = std::vector<std::string>(),
      "`cudatool attrs --json [--device D] [NAME...]` as a dict.");
}

}  // namespace cudatool::python
