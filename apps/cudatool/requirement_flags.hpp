// The device-requirement flags that `devices` and `check` share (--min-count, --min-cc,
// --min-memory): added and parsed in one place, through the strict number and size parsers.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cudatool/base/numbers.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/device/device_info.hpp"

namespace cudatool::app {

struct RequirementFlags {
  std::optional<std::string> min_count, min_cc, min_memory;
};

inline void add_requirement_flags(CLI::App& sub, RequirementFlags& flags,
                                  const std::string& min_count_help) {
  sub.add_option("--min-count", flags.min_count, min_count_help);
  sub.add_option("--min-cc", flags.min_cc,
                 "A device qualifies only with at least this compute capability (8.0, sm_90)");
  sub.add_option("--min-memory", flags.min_memory,
                 "A device qualifies only with at least this much memory (40G, 80GiB)");
}

// Throws UsageError for a malformed value, before the driver is touched.
inline DeviceRequirements parse_requirement_flags(const RequirementFlags& flags) {
  DeviceRequirements requirements;
  if (flags.min_count) requirements.min_count = parse_int(*flags.min_count, "--min-count", 0);
  if (flags.min_cc)
    requirements.min_compute_capability = parse_compute_capability(*flags.min_cc, "--min-cc");
  if (flags.min_memory) requirements.min_memory = parse_size(*flags.min_memory, "--min-memory");
  return requirements;
}

}  // namespace cudatool::app
