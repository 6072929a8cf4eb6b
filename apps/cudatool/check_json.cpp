// check's --json document (share/schemas/check.schema.json, without schema_version:
// print_json adds it).
#include <optional>
#include <string>

#include "cudatool/check/xid.hpp"
#include "cudatool/driver/driver.hpp"
#include "devices_json.hpp"
#include "render_check.hpp"

namespace cudatool::app {
namespace {

using check::CheckResult;
using check::Report;
using check::Verdict;

nlohmann::json result_json(const CheckResult& c) {
  nlohmann::json j = {{"check", kind_name(c.kind)},
                      {"name", c.name},
                      {"verdict", verdict_name(c.verdict)},
                      {"value", nullptr},
                      {"threshold", nullptr},
                      {"unit", display_unit(c.quantity)},
                      {"comparison", comparison_symbol(c.comparison)},
                      {"reason", c.reason}};
  if (c.value) j["value"] = display_value(c.quantity, *c.value);
  if (c.threshold) j["threshold"] = display_value(c.quantity, *c.threshold);
  if (c.peer) j["peer"] = *c.peer;
  if (!c.shared_with.empty()) j["shared_with"] = c.shared_with;
  j["remediation"] = remediation_name(remediation_of(c));
  return j;
}

// A GPU's XIDs: each with NVIDIA's catalog entry (null where the catalog lacks it), what
// cudatool makes of it, and the latest occurrence.
nlohmann::json xids_json(const std::vector<check::XidCount>& counts, double boot_time) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : counts) {
    const check::XidCatalogEntry* entry = check::find_xid(c.xid);
    const CheckResult alone = check::xid_result({c});
    nlohmann::json x = {{"xid", c.xid},
                        {"count", c.count},
                        {"mnemonic", nullptr},
                        {"description", nullptr},
                        {"nvidia_action", nullptr},
                        {"remediation", remediation_name(remediation_of(alone))},
                        {"latest_uptime_s", nullptr},
                        {"latest_time", nullptr},
                        {"latest_text", c.latest_text}};
    if (entry) {
      x["mnemonic"] = entry->mnemonic;
      x["description"] = entry->description;
      x["nvidia_action"] = xid_action_name(entry->action);
    }
    if (c.latest_uptime_s) {
      x["latest_uptime_s"] = *c.latest_uptime_s;
      if (boot_time > 0) x["latest_time"] = boot_time + *c.latest_uptime_s;
    }
    out.push_back(x);
  }
  return out;
}

template <class T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json occupancy_json(const check::Occupancy& o) {
  nlohmann::json processes = nullptr;
  if (o.processes) {
    processes = nlohmann::json::array();
    for (const auto& p : *o.processes)
      processes.push_back({{"pid", p.pid},
                           {"name", p.name},
                           {"used_memory_bytes", or_null(p.used_memory)},
                           {"compute", p.compute},
                           {"graphics", p.graphics}});
  }
  nlohmann::json mode = nullptr;
  if (o.compute_mode) mode = check::compute_mode_name(*o.compute_mode);
  return {{"processes", processes},
          {"used_memory_bytes", or_null(o.used_memory)},
          {"total_memory_bytes", or_null(o.total_memory)},
          {"used_excludes_reserved", o.used_excludes_reserved},
          {"gpu_utilization_percent", or_null(o.gpu_utilization)},
          {"memory_utilization_percent", or_null(o.memory_utilization)},
          {"utilization_readings", o.utilization_readings},
          {"utilization_window_s", o.window_s},
          {"compute_mode", mode},
          {"context_refused", o.context_refused}};
}

}  // namespace

nlohmann::json check_json(const Report& report, int exit_code) {
  const VerdictCounts c = count_verdicts(report);
  nlohmann::json j = {
      {"hostname", report.hostname},
      {"cuda_version", driver::format_cuda_version(report.cuda_version)},
      {"cudatool_version", CUDATOOL_VERSION},
      {"kernels", report.kernel_form},
      {"verdict", verdict_name(report.verdict())},
      {"remediation", remediation_name(report.remediation())},
      {"remediation_reason", remediation_reason(report)},
      {"exit_code", exit_code},
      {"duration_s", report.seconds},
      {"summary", {{"pass", c.pass}, {"warn", c.warn}, {"fail", c.fail}, {"skipped", c.skipped}}},
      {"node_checks", nlohmann::json::array()},
      {"devices", nlohmann::json::array()}};
  if (report.driver_version) j["driver_version"] = *report.driver_version;
  if (!report.kernel_log_source.empty() || !report.kernel_log_why_not.empty()) {
    nlohmann::json others = nlohmann::json::array();
    for (const auto& [device, counts] : report.other_xids)
      others.push_back({{"pci_device", device}, {"xids", xids_json(counts, report.boot_time)}});
    j["kernel_log"] = {{"readable", !report.kernel_log_source.empty()},
                       {"source", report.kernel_log_source},
                       {"note", report.kernel_log_why_not},
                       {"xid_catalog", check::xid_catalog_source()},
                       {"other_gpus", others}};
  }
  for (const auto& check : report.node_checks) j["node_checks"].push_back(result_json(check));
  for (const auto& d : report.devices) {
    nlohmann::json device = d.identity;
    device["verdict"] = verdict_name(d.verdict());
    device["remediation"] = remediation_name(d.remediation());
    if (!report.kernel_log_source.empty()) device["xids"] = xids_json(d.xids, report.boot_time);
    if (d.nvml_index) device["nvml_index"] = *d.nvml_index;
    if (d.occupancy) device["occupancy"] = occupancy_json(*d.occupancy);
    device["checks"] = nlohmann::json::array();
    for (const auto& check : d.checks) device["checks"].push_back(result_json(check));
    j["devices"].push_back(device);
  }
  return j;
}

}  // namespace cudatool::app
