#include <string>
#include <vector>

#include "cudatool/driver/driver.hpp"
#include "devices_report.hpp"
#include "render.hpp"

namespace cudatool::app {

// One CSV line per device, values unformatted: bytes, the
// driver's version and the CUDA version on every line (as nvidia-smi --query-gpu has them).
void print_devices_csv(const DevicesReport& report, bool header, bool memory_usage) {
  const DeviceListing& listing = report.listing;
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

}  // namespace cudatool::app
