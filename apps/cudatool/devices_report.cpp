#include "devices_report.hpp"

#include "cudatool/base/error.hpp"
#include "cudatool/device/device_cache.hpp"

namespace cudatool::app {

DevicesReport devices_report(const DevicesRequest& request) {
  const DeviceRequirements& requirements = request.requirements;
  DevicesReport report;
  use_device_cache(request.fresh, "--fresh");
  try {
    report.listing = list_devices(request.memory_usage);
  } catch (const DeviceNotFoundError&) {
    // No visible device answers "--min-count 0" and fails anything else.
    if (requirements.min_count == 0 && !requirements.min_compute_capability &&
        !requirements.min_memory) {
      report.none_visible = true;
      return report;
    }
    throw;
  }
  report.requirements_asked = requirements.any();
  if (report.requirements_asked)
    report.requirements = check_requirements(report.listing.devices, requirements);
  return report;
}

}  // namespace cudatool::app
