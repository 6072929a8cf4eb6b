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

// A value in the unit the text shows (GiB, GB/s, percent), from the base unit it is held in.
std::optional<double> shown(check::Quantity q, const std::optional<double>& value) {
  if (!value) return std::nullopt;
  return display_value(q, *value);
}

JsonObject result_json(const CheckResult& c) {
  JsonObject j;
  j.set("check", kind_name(c.kind))
      .set("name", c.name)
      .set("verdict", verdict_name(c.verdict))
      .set("value", shown(c.quantity, c.value))
      .set("threshold", shown(c.quantity, c.threshold))
      .set("unit", display_unit(c.quantity))
      .set("comparison", comparison_symbol(c.comparison))
      .set("reason", c.reason);
  if (c.peer) j.set("peer", *c.peer);
  if (!c.shared_with.empty()) j.set("shared_with", c.shared_with);
  j.set("remediation", remediation_name(remediation_of(c)));
  return j;
}

// A GPU's XIDs: each with NVIDIA's catalog entry (null where the catalog lacks it), what
// cudatool makes of it, and the latest occurrence.
std::vector<JsonObject> xids_json(const std::vector<check::XidCount>& counts, double boot_time) {
  std::vector<JsonObject> out;
  for (const auto& c : counts) {
    const check::XidCatalogEntry* entry = check::find_xid(c.xid);
    const CheckResult alone = check::xid_result({c});
    JsonObject x;
    x.set("xid", c.xid)
        .set("count", c.count)
        .set("mnemonic", nullptr)
        .set("description", nullptr)
        .set("nvidia_action", nullptr)
        .set("remediation", remediation_name(remediation_of(alone)))
        .set("latest_uptime_s", nullptr)
        .set("latest_time", nullptr)
        .set("latest_text", c.latest_text);
    if (entry)
      x.set("mnemonic", entry->mnemonic)
          .set("description", entry->description)
          .set("nvidia_action", xid_action_name(entry->action));
    if (c.latest_uptime_s) {
      x.set("latest_uptime_s", *c.latest_uptime_s);
      if (boot_time > 0) x.set("latest_time", boot_time + *c.latest_uptime_s);
    }
    out.push_back(std::move(x));
  }
  return out;
}

JsonObject occupancy_json(const check::Occupancy& o) {
  JsonObject j;
  if (o.processes) {
    std::vector<JsonObject> processes;
    for (const auto& p : *o.processes)
      processes.push_back(JsonObject()
                              .set("pid", p.pid)
                              .set("name", p.name)
                              .set("used_memory_bytes", p.used_memory)
                              .set("compute", p.compute)
                              .set("graphics", p.graphics));
    j.set("processes", processes);
  } else {
    j.set("processes", nullptr);
  }
  if (o.compute_mode)
    j.set("compute_mode", check::compute_mode_name(*o.compute_mode));
  else
    j.set("compute_mode", nullptr);
  return j.set("used_memory_bytes", o.used_memory)
      .set("total_memory_bytes", o.total_memory)
      .set("used_excludes_reserved", o.used_excludes_reserved)
      .set("gpu_utilization_percent", o.gpu_utilization)
      .set("memory_utilization_percent", o.memory_utilization)
      .set("utilization_readings", o.utilization_readings)
      .set("utilization_window_s", o.window_s)
      .set("context_refused", o.context_refused);
}

}  // namespace

JsonObject check_json(const Report& report, int exit_code) {
  const VerdictCounts c = count_verdicts(report);
  JsonObject j;
  j.set("hostname", report.hostname)
      .set("cuda_version", driver::format_cuda_version(report.cuda_version))
      .set("cudatool_version", CUDATOOL_VERSION)
      .set("kernels", report.kernel_form)
      .set("verdict", verdict_name(report.verdict()))
      .set("remediation", remediation_name(report.remediation()))
      .set("remediation_reason", remediation_reason(report))
      .set("exit_code", exit_code)
      .set("duration_s", report.seconds)
      .set("summary", JsonObject()
                          .set("pass", c.pass)
                          .set("warn", c.warn)
                          .set("fail", c.fail)
                          .set("skipped", c.skipped));
  if (report.driver_version) j.set("driver_version", *report.driver_version);
  if (!report.kernel_log_source.empty() || !report.kernel_log_why_not.empty()) {
    std::vector<JsonObject> others;
    for (const auto& [device, counts] : report.other_xids)
      others.push_back(
          JsonObject().set("pci_device", device).set("xids", xids_json(counts, report.boot_time)));
    j.set("kernel_log", JsonObject()
                            .set("readable", !report.kernel_log_source.empty())
                            .set("source", report.kernel_log_source)
                            .set("note", report.kernel_log_why_not)
                            .set("xid_catalog", check::xid_catalog_source())
                            .set("other_gpus", others));
  }
  std::vector<JsonObject> node_checks;
  for (const auto& check : report.node_checks) node_checks.push_back(result_json(check));
  j.set("node_checks", node_checks);
  std::vector<JsonObject> devices;
  for (const auto& d : report.devices) {
    JsonObject device = device_info_object(d.identity);
    device.set("verdict", verdict_name(d.verdict()))
        .set("remediation", remediation_name(d.remediation()));
    if (!report.kernel_log_source.empty()) device.set("xids", xids_json(d.xids, report.boot_time));
    if (d.nvml_index) device.set("nvml_index", *d.nvml_index);
    if (d.occupancy) device.set("occupancy", occupancy_json(*d.occupancy));
    std::vector<JsonObject> checks;
    for (const auto& check : d.checks) checks.push_back(result_json(check));
    device.set("checks", checks);
    devices.push_back(std::move(device));
  }
  j.set("devices", devices);
  return j;
}

}  // namespace cudatool::app
