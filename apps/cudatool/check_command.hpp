// `cudatool check`: its flags and the request they make (check.cpp), for the executable and
// the Python module's check() alike; the report's renderers are in render_check.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/check/check.hpp"
#include "exit_status.hpp"
#include "requirement_flags.hpp"

namespace cudatool::app {

// The flags, as given.
struct CheckOptions {
  std::vector<std::string> devices;
  std::optional<std::string> only, skip;
  RequirementFlags requirements;
  std::optional<std::string> expect_count, expect_name;
  // Decimals go through the strict parser (base/numbers.hpp), before the driver is touched.
  std::optional<std::string> fraction, min_h2d, min_d2h, min_d2d, min_peer;
  std::optional<std::string> max_used_memory;  // a size (base/units.hpp)
  bool require_idle = false;
  bool strict = false;
};

// Declares the flags on `sub` (all but --json and --format).
void add_check_options(CLI::App& sub, CheckOptions& options);

// The library's request from the options: everything the user gave is checked before the
// driver is touched (the devices are resolved later, through it: add_devices).
check::Options check_request(const CheckOptions& options);
// The devices of --device, resolved through the driver, each once.
void add_devices(const std::vector<std::string>& specs, check::Options& o);
// 9 when a check failed, or with --strict warned; else 0.
ExitStatus check_exit_status(const check::Report& report, bool strict);

}  // namespace cudatool::app
