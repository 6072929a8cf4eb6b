// The JSON of the device domain's structs (devices --json, check's devices): the library
// returns plain structs and formats nothing (lib/README.md).
#pragma once

#include "cudatool/device/device_info.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

// A device's object: check's devices add their verdicts to it.
JsonObject device_info_object(const DeviceInfo& info);

}  // namespace cudatool::app
