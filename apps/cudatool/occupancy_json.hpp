// The JSON of the occupancy domain's structs (occupancy --json, and the Python module's
// to_dict): the library returns plain structs and formats nothing (lib/README.md). In
// namespace cudatool so that nlohmann finds them by argument-dependent lookup.
#pragma once

#include <nlohmann/json.hpp>

#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"

namespace cudatool {

void to_json(nlohmann::json& j,
             const OccupancyUnknown& unknown);  // architecture, unknown_fields, reason
void to_json(nlohmann::json& j, const BlockLimits& limits);
void to_json(nlohmann::json& j, const OccupancyRecord& record);
void to_json(nlohmann::json& j, const OccupancyImprovement& improvement);
void to_json(nlohmann::json& j, const SweepStep& step);
void to_json(nlohmann::json& j, const OccupancySweep& sweep);
void to_json(nlohmann::json& j, const BlockSizeSuggestion& suggestion);
// The table's columns (unknown values null) and, for DeviceData, its origin and PyCUDA's
// names for the same values.
void to_json(nlohmann::json& j, const DeviceProperties& properties);
void to_json(nlohmann::json& j, const DeviceData& data);

}  // namespace cudatool
