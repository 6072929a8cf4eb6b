// The renderings of a check report (check::Report, plain structs from the library, numbers
// in base units), one file each: text for people (check_text.cpp), the --json document
// (check_json.cpp, schema share/schemas/check.schema.json), both showing numbers in the units
// of check_units.cpp, and node_exporter's textfile format for Prometheus (check_prometheus.cpp,
// in base units).
#pragma once

#include <string>
#include <string_view>

#include "cudatool/check/check.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

// The version of check's --json document: 2 since driver_version is the driver's own
// version ("580.159.04", as in `devices --json`) and the CUDA version is cuda_version; it was
// the CUDA version in version 1 (CHANGELOG.md).
inline constexpr int kCheckSchemaVersion = 2;

// The verdicts of a report's checks, counted (the text's summary line, the JSON's summary).
struct VerdictCounts {
  int pass = 0, warn = 0, fail = 0, skipped = 0;
  void add(check::Verdict v) {
    switch (v) {
      case check::Verdict::pass:
        ++pass;
        break;
      case check::Verdict::warn:
        ++warn;
        break;
      case check::Verdict::fail:
        ++fail;
        break;
      case check::Verdict::skipped:
        ++skipped;
        break;
    }
  }
};

inline VerdictCounts count_verdicts(const check::Report& report) {
  VerdictCounts counts;
  for (const auto& c : report.node_checks) counts.add(c.verdict);
  for (const auto& d : report.devices)
    for (const auto& c : d.checks) counts.add(c.verdict);
  return counts;
}

// The finding behind the node's remediation, in one line: "device 1 (0000:02:00.0) nvml:
// NVML cannot reach the GPU: ..." or "node count: ..."; "" where nothing needs doing. The
// text's last line and the JSON's remediation_reason (what a Slurm drain reason quotes).
inline std::string remediation_reason(const check::Report& report) {
  const check::Remediation worst = report.remediation();
  if (worst == check::Remediation::none) return "";
  auto line = [](const check::CheckResult& c) {
    std::string reason = c.reason.size() > 240 ? c.reason.substr(0, 240) + "..." : c.reason;
    return c.name + (c.peer ? "->" + std::to_string(*c.peer) : "") + ": " + reason;
  };
  // A GPU's own finding first: it names the GPU.
  for (const auto& d : report.devices)
    for (const auto& c : d.checks)
      if (remediation_of(c) == worst)
        return "device " + std::to_string(d.identity.ordinal) + " (" + d.identity.pci_bus_id +
               ") " + line(c);
  for (const auto& c : report.node_checks)
    if (remediation_of(c) == worst) return "node " + line(c);
  return "";
}

// How text and JSON show a result's number (check_units.cpp): the unit ("GB/s", "GiB", "%",
// "processes", ...; "" for none) and the number in it, from the quantity's base unit.
std::string_view display_unit(check::Quantity q);
double display_value(check::Quantity q, double base);
// How text and JSON write a comparison: ">=", "<=", "<", "==" ("" for none).
std::string_view comparison_symbol(check::Comparison c);

std::string check_text(const check::Report& report);
// The --json document without schema_version (print_json adds it).
JsonObject check_json(const check::Report& report, int exit_code);

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
// The metric of a quantity (check_prometheus.cpp): cudatool_check_<base>[_<unit>], in the
// quantity's base unit (unit: "bytes", "bytes_per_second", "ratio"; "" for a number), and
// its HELP text; empty for Quantity::none.
struct QuantityMetric {
  std::string_view base, unit, help;
};
QuantityMetric quantity_metric(check::Quantity q);

// The Node Feature Discovery feature file (--format nfd; cudatool(1)): name=value lines of
// the local source, from `report` (null where the check could not start).
std::string check_nfd(const check::Report* report);
// `text` as a Kubernetes label value: [A-Za-z0-9._-] (others become '-'), alphanumeric at
// both ends, at most 63 characters.
std::string nfd_label_value(std::string_view text);

}  // namespace cudatool::app
