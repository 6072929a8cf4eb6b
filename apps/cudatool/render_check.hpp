// The renderings of a check report (check::Report, plain structs from the library): text
// for people, the --json document, and node_exporter's textfile format for Prometheus.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cudatool/check/check.hpp"

namespace cudatool::app {

// The version of check's --json document: 2 since driver_version is the driver's own
// version ("580.159.04", as in `devices --json`) and the CUDA version is cuda_version; it was
// the CUDA version in version 1 (CHANGELOG.md).
inline constexpr int kCheckSchemaVersion = 2;

std::string check_text(const check::Report& report);
// The --json document without schema_version (print_json adds it).
nlohmann::json check_json(const check::Report& report, int exit_code);

// What the Prometheus document says about the run besides the report: its exit code, and
// when it ran (Unix time).
struct CheckRun {
  int exit_code = 0;
  double timestamp_seconds = 0;
};
// The whole textfile document (cudatool(1), check, --format prometheus): the build, whether
// the check ran (cudatool_check_up) and passed (cudatool_check_success), and, from
// `report` where the check ran (null where it could not start: no driver, no device), each
// device's and each check's verdict and every measured quantity in base units with its
// threshold.
std::string check_prometheus(const check::Report* report, const CheckRun& run);

}  // namespace cudatool::app
