// The identity checks: each device against the requirements (--min-cc, --min-memory,
// --expect-name) and the node as a whole (--expect-count, devices alike).
#include <string>

#include "check/reason_format.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

using detail::join;

CheckResult identity_result(const DeviceInfo& d, const DeviceRequirements& requirements,
                            const std::optional<std::string>& expect_name) {
  CheckResult r;
  r.kind = Kind::identity;
  r.name = "identity";
  std::vector<std::string> problems;
  if (requirements.min_compute_capability &&
      d.compute_capability < *requirements.min_compute_capability)
    problems.push_back("compute capability " + d.compute_capability.str() + ", need " +
                       requirements.min_compute_capability->str());
  if (requirements.min_memory && d.total_memory < *requirements.min_memory)
    problems.push_back(format_bytes_beside(d.total_memory, *requirements.min_memory) +
                       " of memory, need " +
                       format_bytes_beside(*requirements.min_memory, d.total_memory));
  if (expect_name && d.name.find(*expect_name) == std::string::npos)
    problems.push_back("name \"" + d.name + "\" lacks \"" + *expect_name + "\"");
  r.verdict = problems.empty() ? Verdict::pass : Verdict::fail;
  r.reason = problems.empty()
                 ? d.name + ", " + d.compute_capability.sm() + ", " + format_bytes(d.total_memory) +
                       ", " + std::to_string(d.multiprocessor_count) + " SMs"
                 : join(problems);
  return r;
}

std::vector<CheckResult> node_identity_results(const std::vector<DeviceInfo>& devices,
                                               const DeviceRequirements& requirements,
                                               std::optional<int> expect_count) {
  std::vector<CheckResult> out;
  CheckResult count;
  count.kind = Kind::identity;
  count.name = "count";
  const RequirementReport report = check_requirements(devices, requirements);
  count.quantity = Quantity::qualifying_devices;
  count.value = report.qualifying;
  if (expect_count) {
    count.threshold = *expect_count;
    count.comparison = Comparison::equal;
    const bool ok = static_cast<int>(devices.size()) == *expect_count && report.met;
    count.verdict = ok ? Verdict::pass : Verdict::fail;
    count.reason =
        std::to_string(devices.size()) + " devices, expected " + std::to_string(*expect_count);
    if (!report.met) count.reason += "; " + join(report.problems);
  } else {
    count.threshold = requirements.min_count.value_or(1);
    count.comparison = Comparison::at_least;
    count.verdict = report.met ? Verdict::pass : Verdict::fail;
    count.reason = report.met ? std::to_string(report.qualifying) + " qualifying devices"
                              : join(report.problems);
  }
  out.push_back(count);

  CheckResult same;
  same.kind = Kind::identity;
  same.name = "homogeneous";
  if (devices.size() < 2) {
    same.verdict = Verdict::skipped;
    same.reason = "one device";
  } else {
    std::vector<std::string> differences;
    const DeviceInfo& first = devices.front();
    for (const DeviceInfo& d : devices) {
      if (d.name != first.name)
        differences.push_back("device " + std::to_string(d.ordinal) + " is " + d.name +
                              ", device " + std::to_string(first.ordinal) + " " + first.name);
      else if (d.total_memory != first.total_memory)
        differences.push_back(
            "device " + std::to_string(d.ordinal) + " has " + format_bytes(d.total_memory) +
            ", device " + std::to_string(first.ordinal) + " " + format_bytes(first.total_memory));
      else if (d.compute_capability != first.compute_capability)
        differences.push_back("device " + std::to_string(d.ordinal) + " is " +
                              d.compute_capability.sm());
    }
    same.verdict = differences.empty() ? Verdict::pass : Verdict::warn;
    same.reason = differences.empty() ? "all " + std::to_string(devices.size()) +
                                            " devices alike (" + first.name + ")"
                                      : join(differences);
  }
  out.push_back(same);
  return out;
}

}  // namespace cudatool::check
