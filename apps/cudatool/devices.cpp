// cudatool devices: one line per device and one for the driver, or JSON or CSV; requirement
// flags for CI smoke checks. Options -> request -> devices_report -> one renderer per format
// (devices_report.hpp).
#include <memory>
#include <string>

#include "command.hpp"
#include "devices_report.hpp"
#include "render.hpp"
#include "requirement_flags.hpp"

namespace cudatool::app {
namespace {

struct DevicesOptions {
  RequirementFlags requirements;
  bool memory_usage = false;
  bool fresh = false;
};

// What the report means for the exit status, with one line on stderr for each problem.
ExitStatus devices_status(const DevicesReport& report) {
  // A device the driver does not answer for: listed, named here, exit 5.
  bool broken = false;
  for (const DeviceInfo& d : report.listing.devices)
    if (!d.error.empty()) {
      print_message("device " + std::to_string(d.ordinal) + " (" + d.pci_bus_id + ", " +
                    (d.uuid.empty() ? "no UUID" : d.uuid) + ") does not answer: " + d.error);
      broken = true;
    }
  if (broken) return ExitStatus::cuda_error;
  if (!report.requirements.met) {
    std::string message = "requirement unmet: ";
    for (std::size_t i = 0; i < report.requirements.problems.size(); ++i)
      message += (i ? "; " : "") + report.requirements.problems[i];
    print_message(message);
    return ExitStatus::no_device;
  }
  return ExitStatus::success;
}

}  // namespace

Command add_devices(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand("devices", "List the visible CUDA devices");
  auto options = std::make_shared<DevicesOptions>();
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  add_requirement_flags(*sub, options->requirements,
                        "Fail (exit 4) unless at least N devices qualify");
  // Off by default: NVML's initialisation adds 10-30 ms to a listing that otherwise costs
  // what cuInit costs (bench/RESULTS.md), and the listing is meant to be that fast.
  sub->add_flag("--memory-usage", options->memory_usage,
                "Also show free and used memory (from NVML, where it is installed)");
  add_fresh_flag(*sub, options->fresh);

  return {sub, [options, &global]() {
            const DevicesRequest request{parse_requirement_flags(options->requirements),
                                         options->memory_usage, options->fresh};
            const DevicesReport report = devices_report(request);
            if (global.format == Format::json)
              print_devices_json(report);
            else if (global.format == Format::text)
              print_devices_text(report);
            else
              print_devices_csv(report, global.format == Format::csv, request.memory_usage);
            if (report.none_visible) return ExitStatus::success;
            return devices_status(report);
          }};
}

}  // namespace cudatool::app
