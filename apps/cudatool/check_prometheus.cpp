// check's textfile document for Prometheus (node_exporter's textfile collector): the
// build, whether the check ran and passed, each GPU's and check's verdict, and every measured
// quantity in base units with its threshold, labelled as dcgm-exporter labels its series.
#include <cuda.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/driver/driver.hpp"
#include "cudatool/driver/nvml.hpp"
#include "prometheus_exposition.hpp"
#include "render_check.hpp"

namespace cudatool::app {
namespace {

using check::CheckResult;
using check::Report;
using check::Verdict;

std::string_view threshold_word(check::Comparison comparison) {
  switch (comparison) {
    case check::Comparison::none:
      return "";
    case check::Comparison::at_least:
      return "min";
    case check::Comparison::at_most:
      return "max";
    case check::Comparison::below:
      return "limit";
    case check::Comparison::equal:
      return "expected";
  }
  return "";
}

std::string_view threshold_help(std::string_view word) {
  if (word == "min") return "at or above";
  if (word == "max") return "at or below";
  if (word == "limit") return "below";
  return "equal to";
}

// A GPU's labels, named as dcgm-exporter names them so that the series join with its: gpu
// (NVML's index, nvidia-smi's; absent without NVML), UUID, pci_bus_id (NVML's form) and
// modelName; and cuda_device, the CUDA ordinal (the JSON's `ordinal`, what --device takes),
// which differs from gpu under CUDA_VISIBLE_DEVICES or CUDA's fastest-first order. Where
// any GPU of the report has NVML's index (`with_gpu`), every GPU has the label, empty where
// NVML lost it: node_exporter refuses a metric whose samples differ in label names, and a
// broken GPU must not hide the others.
Labels gpu_labels(const check::DeviceReport& device, bool with_gpu) {
  const DeviceInfo& d = device.identity;
  Labels labels;
  if (with_gpu)
    labels.emplace_back("gpu", device.nvml_index ? std::to_string(*device.nvml_index) : "");
  labels.emplace_back("UUID", d.uuid);
  labels.emplace_back("pci_bus_id", nvml_pci_bus_id(d.pci_bus_id).value_or(d.pci_bus_id));
  labels.emplace_back("modelName", d.name);
  labels.emplace_back("cuda_device", std::to_string(d.ordinal));
  return labels;
}

void add_remediation(Exposition& out, const std::string& name, const std::string& help,
                     Labels labels, check::Remediation remediation) {
  labels.emplace_back("action", "");
  for (check::Remediation r : check::all_remediations()) {
    labels.back().second = std::string(remediation_name(r));
    out.add(name, help, labels, r == remediation ? "1" : "0");
  }
}

// A GPU's XIDs: how many of each since boot, and when the latest was (Unix time).
void add_xids(Exposition& out, const std::string& prefix, const Labels& labels,
              const std::vector<check::XidCount>& counts, double boot_time) {
  for (const auto& c : counts) {
    Labels l = labels;
    l.emplace_back("xid", std::to_string(c.xid));
    out.add(prefix + "xid_count",
            "Kernel-log lines of this XID since boot (xid: NVIDIA's number; cudatool(1), XID).", l,
            std::to_string(c.count));
    if (c.latest_uptime_s && boot_time > 0)
      out.add(prefix + "xid_latest_timestamp_seconds",
              "When the latest line of this XID was logged, in Unix time (from the kernel's "
              "time since boot).",
              l, sample_value(boot_time + *c.latest_uptime_s));
  }
}

void add_verdict(Exposition& out, const std::string& name, const std::string& help, Labels labels,
                 Verdict verdict) {
  labels.emplace_back("verdict", "");
  for (Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail, Verdict::skipped}) {
    labels.back().second = std::string(verdict_name(v));
    out.add(name, help, labels, verdict == v ? "1" : "0");
  }
}

// A check's verdict and its quantity: a GPU's check with the GPU's labels, a node's (`node`:
// the count of devices, whether they are alike) in a family of its own, without them.
void add_result(Exposition& out, Labels labels, const CheckResult& c, bool node) {
  if (c.peer) labels.emplace_back("peer_gpu", std::to_string(*c.peer));
  Labels verdict_labels = labels;
  verdict_labels.emplace_back("check", std::string(kind_name(c.kind)));
  verdict_labels.emplace_back("name", c.name);
  if (node)
    add_verdict(out, "cudatool_check_node_verdict",
                "1 for a node check's verdict, 0 for the other three (check: the group --only "
                "names; name: the check).",
                verdict_labels, c.verdict);
  else
    add_verdict(out, "cudatool_check_verdict",
                "1 for a GPU check's verdict, 0 for the other three (check: the group --only "
                "names; name: the check).",
                verdict_labels, c.verdict);
  const QuantityMetric q = quantity_metric(c.quantity);
  if (q.base.empty() || !c.value) return;
  const std::string unit = q.unit.empty() ? std::string() : concat("_", q.unit);
  const std::string value_name = concat("cudatool_check_", q.base, unit);
  out.add(value_name, std::string(q.help), labels, sample_value(*c.value));
  const std::string_view word = threshold_word(c.comparison);
  if (!c.threshold || word.empty()) return;
  out.add(
      concat("cudatool_check_", q.base, "_", word, unit),
      concat("The threshold of ", value_name, ": the check passes ", threshold_help(word), " it."),
      labels, sample_value(*c.threshold));
}

}  // namespace

std::string check_prometheus(const Report* report, const CheckRun& run) {
  Exposition out;
  out.add(
      "cudatool_build_info", "cudatool's version and the CUDA headers it was built with; always 1.",
      {{"version", CUDATOOL_VERSION}, {"cuda_headers", driver::format_cuda_version(CUDA_VERSION)}},
      "1");
  out.add("cudatool_check_up",
          "1 when the check ran on the GPUs, 0 when it could not start (no driver, no device, "
          "a driver error: cudatool_check_exit_code says which).",
          {}, report ? "1" : "0");
  out.add("cudatool_check_success", "1 when cudatool check exited 0 (no check failed), else 0.", {},
          run.exit_code == 0 ? "1" : "0");
  out.add("cudatool_check_exit_code",
          "cudatool check's exit code: 0 ok, 9 a check failed, 3 no driver, 4 no device, 5 a "
          "CUDA error (cudatool(1), EXIT STATUS).",
          {}, std::to_string(run.exit_code));
  out.add("cudatool_check_timestamp_seconds", "When the check ran, in Unix time.", {},
          sample_value(run.timestamp_seconds));
  out.add("cudatool_check_devices", "GPUs checked.", {},
          std::to_string(report ? report->devices.size() : 0));
  if (report == nullptr) return out.str();
  out.add("cudatool_check_duration_seconds", "Wall time of the check.", {},
          sample_value(report->seconds));
  out.add("cudatool_check_driver_info",
          "The driver's own version (driver_version, as nvidia-smi shows it; \"\" where unknown) "
          "and the CUDA version it supports (cuda_version); always 1.",
          {{"driver_version", report->driver_version.value_or("")},
           {"cuda_version", driver::format_cuda_version(report->cuda_version)}},
          "1");
  bool with_gpu = false;
  for (const auto& d : report->devices) with_gpu = with_gpu || d.nvml_index.has_value();
  for (const auto& d : report->devices)
    add_verdict(out, "cudatool_check_gpu_verdict",
                "1 for the GPU's verdict (the worst of its checks), 0 for the other three.",
                gpu_labels(d, with_gpu), d.verdict());
  add_remediation(out, "cudatool_check_remediation",
                  "1 for the node's remediation (the worst of its findings': none, monitor, "
                  "restart_job, reset_gpu, reboot_node, drain_inspect), 0 for the others.",
                  {}, report->remediation());
  for (const auto& d : report->devices)
    add_remediation(out, "cudatool_check_gpu_remediation",
                    "1 for the GPU's remediation (the worst of its checks'), 0 for the others.",
                    gpu_labels(d, with_gpu), d.remediation());
  for (const auto& d : report->devices)
    add_xids(out, "cudatool_check_", gpu_labels(d, with_gpu), d.xids, report->boot_time);
  for (const auto& [device, counts] : report->other_xids)
    add_xids(out, "cudatool_check_other_gpu_", {{"pci_bus_id", device + ".0"}}, counts,
             report->boot_time);
  for (const auto& c : report->node_checks) add_result(out, {}, c, true);
  for (const auto& d : report->devices)
    for (const auto& c : d.checks) add_result(out, gpu_labels(d, with_gpu), c, false);
  return out.str();
}

}  // namespace cudatool::app
