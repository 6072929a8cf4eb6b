// cudatool devices: one line per device and one for the driver, or JSON; requirement flags for CI
// smoke checks.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/device/device_info.hpp"
#include "cudatool/driver/driver.hpp"
#include "devices_json.hpp"
#include "render.hpp"
#include "requirement_flags.hpp"

namespace cudatool::app {
namespace {

struct DevicesOptions {
  RequirementFlags requirements;
  bool memory_usage = false;
  bool fresh = false;
};

void render_text(const DeviceListing& listing) {
  // Text from the driver and NVML (names, bus ids, the version) is shown as on a terminal:
  // an escape or a newline in it is escaped, never written (render.hpp's printable).
  const auto shown = [](const std::string& text) { return printable(text, kMaxMessageLine); };
  // Columns as wide as their widest entry.
  std::vector<std::string> memory;
  std::size_t name_width = 0, memory_width = 0;
  for (const auto& d : listing.devices) {
    memory.push_back(format_bytes(d.total_memory));
    if (d.memory_usage) memory.back() += " (" + format_bytes(d.memory_usage->free) + " free)";
    name_width = std::max(name_width, shown(d.name).size());
    memory_width = std::max(memory_width, memory.back().size());
  }
  for (std::size_t i = 0; i < listing.devices.size(); ++i) {
    const DeviceInfo& d = listing.devices[i];
    if (!d.error.empty()) {  // named by where it is, with what the driver said
      command_out() << d.ordinal << "  " << pad("(no answer)", name_width) << "  "
                    << shown(d.pci_bus_id) << "  " << shown(d.uuid) << "  " << shown(d.error)
                    << '\n';
      continue;
    }
    command_out() << d.ordinal << "  " << pad(shown(d.name), name_width) << "  "
                  << d.compute_capability.sm() << "  " << pad(memory[i], memory_width) << "  "
                  << d.multiprocessor_count << " SMs  " << shown(d.pci_bus_id) << '\n';
  }
  if (!listing.peer_access.empty()) {
    command_out() << "peer access:";
    for (std::size_t i = 0; i < listing.peer_access.size(); ++i) {
      command_out() << (i ? "," : "") << ' ' << i << "->";
      std::string peers;
      for (std::size_t j = 0; j < listing.peer_access[i].size(); ++j)
        if (listing.peer_access[i][j]) peers += (peers.empty() ? "" : "+") + std::to_string(j);
      command_out() << (peers.empty() ? "none" : peers);
    }
    command_out() << '\n';
  }
  // The driver's own version where NVML or /proc tells it, and the CUDA version it supports.
  command_out() << "driver: "
                << (listing.driver_version ? shown(*listing.driver_version) + " (CUDA " : "CUDA ")
                << driver::format_cuda_version(listing.cuda_version)
                << (listing.driver_version ? ")" : "") << '\n';
}

// One CSV line per device (add_table_format_option), values unformatted: bytes, the
// driver's version and the CUDA version on every line (as nvidia-smi --query-gpu has them).
void render_csv(const DeviceListing& listing, bool header, bool memory_usage) {
  // The columns are named as --json's keys.
  std::vector<std::string> columns = {
      "ordinal",    "name", "compute_capability", "total_memory_bytes", "multiprocessor_count",
      "pci_bus_id", "uuid", "driver_version",     "cuda_version"};
  if (memory_usage) {
    columns.push_back("memory_free_bytes");
    columns.push_back("memory_used_bytes");
  }
  if (header) print_csv_row(columns);
  for (const DeviceInfo& d : listing.devices) {
    std::vector<std::string> row = {std::to_string(d.ordinal),
                                    d.name,
                                    d.compute_capability.str(),
                                    std::to_string(d.total_memory),
                                    std::to_string(d.multiprocessor_count),
                                    d.pci_bus_id,
                                    d.uuid,
                                    listing.driver_version.value_or(""),
                                    driver::format_cuda_version(listing.cuda_version)};
    if (memory_usage) {
      row.push_back(d.memory_usage ? std::to_string(d.memory_usage->free) : "");
      row.push_back(d.memory_usage ? std::to_string(d.memory_usage->used) : "");
    }
    print_csv_row(row);
  }
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
            const TableFormat format = table_format(global);
            const DeviceRequirements requirements = parse_requirement_flags(options->requirements);

            DeviceListing listing;
            use_device_cache(options->fresh, "--fresh");
            try {
              listing = list_devices(options->memory_usage);
            } catch (const DeviceNotFoundError&) {
              // No visible device answers "--min-count 0" and fails anything else.
              if (requirements.min_count == 0 && !requirements.min_compute_capability &&
                  !requirements.min_memory) {
                if (global.json)
                  print_json({{"device_count", 0}, {"devices", nlohmann::json::array()}});
                else if (format == TableFormat::csv)
                  render_csv({}, true, options->memory_usage);
                return ExitStatus::success;
              }
              throw;
            }
            const RequirementReport report = requirements.any()
                                                 ? check_requirements(listing.devices, requirements)
                                                 : RequirementReport{};
            if (global.json) {
              nlohmann::json j = listing;
              if (requirements.any()) j["requirements"] = report;
              print_json(j);
            } else if (format == TableFormat::text) {
              render_text(listing);
            } else {
              render_csv(listing, format == TableFormat::csv, options->memory_usage);
            }
            // A device the driver does not answer for: listed above, named here, exit 5.
            bool broken = false;
            for (const DeviceInfo& d : listing.devices)
              if (!d.error.empty()) {
                print_message("device " + std::to_string(d.ordinal) + " (" + d.pci_bus_id + ", " +
                              (d.uuid.empty() ? "no UUID" : d.uuid) +
                              ") does not answer: " + d.error);
                broken = true;
              }
            if (broken) return ExitStatus::cuda_error;
            if (!report.met) {
              std::string message = "requirement unmet: ";
              for (std::size_t i = 0; i < report.problems.size(); ++i)
                message += (i ? "; " : "") + report.problems[i];
              print_message(message);
              return ExitStatus::no_device;
            }
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
