// devices' text: one line per device, the peer access and the driver.
#include <algorithm>
#include <string>
#include <vector>

#include "cudatool/base/units.hpp"
#include "cudatool/driver/driver.hpp"
#include "devices_report.hpp"
#include "render.hpp"

namespace cudatool::app {

void print_devices_text(const DevicesReport& report) {
  if (report.none_visible) return;
  const DeviceListing& listing = report.listing;
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
        if (listing.peer_access[i][j]) {
          if (!peers.empty()) peers += '+';
          peers += std::to_string(j);
        }
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

}  // namespace cudatool::app
