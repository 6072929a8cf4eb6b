// The JSON of the occupancy domain's structs (occupancy --json, and the Python module's
// to_dict): the library returns plain structs and formats nothing (lib/README.md).
#pragma once

#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

void write_json(JsonStream& out,
                const OccupancyUnknown& unknown);  // architecture, unknown_fields, reason
void write_json(JsonStream& out, const BlockLimits& limits);
void write_json(JsonStream& out, const OccupancyRecord& record);
void write_json(JsonStream& out, const OccupancyImprovement& improvement);
void write_json(JsonStream& out, const SweepStep& step);
void write_json(JsonStream& out, const OccupancySweep& sweep);
void write_json(JsonStream& out, const BlockSizeSuggestion& suggestion);
// The table's columns (unknown values null) and, for DeviceData, its origin and PyCUDA's
// names for the same values.
void write_json(JsonStream& out, const DeviceProperties& properties);
void write_json(JsonStream& out, const DeviceData& data);
JsonObject record_object(const OccupancyRecord& record);

}  // namespace cudatool::app
