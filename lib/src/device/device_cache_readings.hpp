// Internal: the device cache's rules over NVML's live readings (driver/nvml_inventory.hpp):
// which reading a cached answer depends on, and when two sets of readings are the same. A
// kept answer is used only while the readings it depends on are unchanged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cudatool/driver/handles.hpp"
#include "driver/nvml_inventory.hpp"

namespace cudatool::detail {

// The live reading a cached attribute depends on ("compute_mode", "ecc", "display"), or
// nullopt where it depends on none that can change while the machine runs.
std::optional<std::string> reading_for(DeviceAttribute attribute);

// The GPU is in MIG mode now (its "mig" reading: current mode enabled).
bool mig_enabled(const NvmlGpu& gpu);

// The GPUs of `a` and `b` are the same GPUs, in the same order, and `reading` is the same on
// each.
bool same_readings(const std::vector<NvmlGpu>& a, const std::vector<NvmlGpu>& b,
                   const std::string& reading);

// Every GPU lacks the setting (NVML's "not supported"): it cannot change under the same
// driver and GPUs. True for no GPUs.
bool unsupported_everywhere(const std::vector<NvmlGpu>& gpus, const std::string& reading);

}  // namespace cudatool::detail
