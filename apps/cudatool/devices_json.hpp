// The JSON of the device domain's structs (devices --json, the requirements object of
// devices and check, the Python module's to_dict): the library returns plain structs and
// formats nothing (lib/README.md). In namespace cudatool so that nlohmann finds them by
// argument-dependent lookup.
#pragma once

#include <nlohmann/json.hpp>

#include "cudatool/device/device_info.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const ComputeCapability& cc);
void to_json(nlohmann::json& j, const MemoryUsage& usage);
void to_json(nlohmann::json& j, const DeviceInfo& info);
void to_json(nlohmann::json& j, const DeviceListing& listing);
void to_json(nlohmann::json& j, const RequirementReport& report);

}  // namespace cudatool
