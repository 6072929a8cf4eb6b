// `devices`: the request (flags checked before the driver is touched), the report (the
// listing and the requirements' verdict), and one renderer per format (devices_text.cpp,
// devices_json.cpp, devices_csv.cpp; the JSON is share/schemas/devices.schema.json).
#pragma once

#include "cudatool/device/device_info.hpp"
#include "format.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

struct DevicesRequest {
  DeviceRequirements requirements;
  bool memory_usage = false;  // --memory-usage: free and used memory from NVML
  bool fresh = false;         // --fresh: the driver, not the device cache
};

struct DevicesReport {
  // No device is visible and none was required (--min-count 0 or no requirement flag):
  // an empty listing without the driver's versions.
  bool none_visible = false;
  DeviceListing listing;
  bool requirements_asked = false;
  RequirementReport requirements;
};

// Lists the devices and checks the requirements. Throws DeviceNotFoundError where no
// device is visible and the request requires one.
DevicesReport devices_report(const DevicesRequest& request);

void print_devices_text(const DevicesReport& report);
void print_devices_json(const DevicesReport& report);
// The --json document without schema_version (print_json adds it).
JsonObject devices_json(const DevicesReport& report);
// One CSV line per device; `header`: the column names first.
void print_devices_csv(const DevicesReport& report, bool header, bool memory_usage);

}  // namespace cudatool::app
