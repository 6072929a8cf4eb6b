// Internal: the device cache's machine fingerprint: everything of the machine, the driver
// library and the environment that the driver's answers depend on and that can be read
// without cuInit (device_cache.hpp lists it). An entry is used only while the fingerprint of
// now is the one written with it, line for line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "driver/nvml_inventory.hpp"

namespace cudatool::detail {

// The fingerprint's version: a change to what it holds, or to the entry's payload, counts up.
inline constexpr int kDeviceCacheFormat = 1;

// A system path: the path itself, or for the test suite only (a build with test hooks), the
// same path under $CUDATOOL_TEST_SYSTEM_ROOT (a fake /proc/driver/nvidia, /dev, boot id).
std::string system_path(std::string_view absolute);

// The names in `dir`, sorted ("." and ".." left out; at most a few thousand).
std::vector<std::string> sorted_entries(const std::string& dir);

// Text that fits on one fingerprint line: a newline is "\n", a backslash "\\".
std::string one_line(std::string_view text);

// The environment that shapes what the driver enumerates and answers, as sorted "env" lines:
// of this process now, or of `from` (the driver's start, driver_api.hpp).
std::vector<std::string> environment_lines(const std::vector<std::string>* from = nullptr);

// Everything of the machine the driver's answers depend on, that can be read without
// cuInit; nullopt (with `why`) where the machine cannot be described with certainty.
// `nvml` names the GPUs where /proc has none.
std::optional<std::string> machine_lines(const NvmlInventory* nvml, std::string& why);

// The whole fingerprint: the format, the machine's lines, the environment's, and the driver
// library's (the file `libcuda` and what the loader's search depends on).
std::string compose_fingerprint(const std::string& machine,
                                const std::vector<std::string>& environment,
                                const std::string& libcuda);

// The whole fingerprint of now, for the entry's library path.
std::optional<std::string> fingerprint(const NvmlInventory* nvml, const std::string& libcuda,
                                       const std::vector<std::string>& environment,
                                       std::string& why);

}  // namespace cudatool::detail
