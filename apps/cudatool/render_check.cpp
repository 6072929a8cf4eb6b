// The renderings of a check report: text for people, the --json document, and
// node_exporter's textfile format (Prometheus' text exposition format).
#include "render_check.hpp"

#include <cuda.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/driver/driver.hpp"
#include "cudatool/driver/nvml.hpp"
#include "devices_json.hpp"

namespace cudatool::app {
namespace {

using check::CheckResult;
using check::Report;
using check::Verdict;

// ---- Text ----

std::string number(double v) {
  char buffer[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15)
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
  else
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

// `text` in a column of `width` characters, with at least one blank after it.
std::string column(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string display_name(const CheckResult& c) {
  return c.peer ? c.name + "->" + std::to_string(*c.peer) : c.name;
}

std::string value_text(const CheckResult& c) {
  if (!c.value) return "";
  std::string out = number(*c.value) + (c.unit.empty() ? "" : " " + c.unit);
  if (c.threshold)
    out += " (" + (c.comparison.empty() ? std::string("vs") : c.comparison) + " " +
           number(*c.threshold) + ")";
  return out;
}

void render_checks(std::ostringstream& out, const std::vector<CheckResult>& checks) {
  for (const auto& c : checks)
    out << "  " << column(std::string(verdict_name(c.verdict)), 8) << column(display_name(c), 17)
        << column(value_text(c), 30) << c.reason << '\n';
}

struct Counts {
  int pass = 0, warn = 0, fail = 0, skipped = 0;
  void add(Verdict v) {
    switch (v) {
      case Verdict::pass:
        ++pass;
        break;
      case Verdict::warn:
        ++warn;
        break;
      case Verdict::fail:
        ++fail;
        break;
      case Verdict::skipped:
        ++skipped;
        break;
    }
  }
};

Counts count(const Report& report) {
  Counts counts;
  for (const auto& c : report.node_checks) counts.add(c.verdict);
  for (const auto& d : report.devices)
    for (const auto& c : d.checks) counts.add(c.verdict);
  return counts;
}

// ---- JSON ----

nlohmann::json result_json(const CheckResult& c) {
  nlohmann::json j = {
      {"check", kind_name(c.kind)}, {"name", c.name},       {"verdict", verdict_name(c.verdict)},
      {"value", nullptr},           {"threshold", nullptr}, {"unit", c.unit},
      {"comparison", c.comparison}, {"reason", c.reason}};
  if (c.value) j["value"] = *c.value;
  if (c.threshold) j["threshold"] = *c.threshold;
  if (c.peer) j["peer"] = *c.peer;
  if (!c.shared_with.empty()) j["shared_with"] = c.shared_with;
  return j;
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

// ---- Prometheus ----

// The parts appended in order: GCC 12's -O3 -Wrestrict reports false positives on
// `"literal" + std::string` temporaries (CHANGELOG, issue 22 item 7).
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

// A label value: valid UTF-8 (a byte that is not is U+FFFD, as in the JSON of the same run:
// the format takes nothing else, and its parsers reject the whole file), with backslash,
// double quote and newline escaped.
std::string label_value(const std::string& text) {
  std::string out;
  for (char c : valid_utf8(text)) {
    if (c == '\\' || c == '"')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// A sample value: a whole number as one (below 2^53, where every integer is exact), else
// the shortest text that reads back as the same double.
std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
    return buffer;
  }
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

// How each check's value becomes a metric: cudatool_check_<base>[_<unit>], in the base unit
// (Prometheus' naming rules: bytes, seconds, ratios; a count is named by what it counts), and
// its threshold cudatool_check_<base>_<min|max|limit|expected>[_<unit>] by the comparison
// (value >= min, <= max, < limit, == expected), as node_exporter names its hwmon and
// conntrack limits. `scale` takes the check's unit to the base unit.
struct Quantity {
  std::string_view check;  // CheckResult::name
  std::string_view base;
  std::string_view unit;  // "" for a count
  double scale;
  std::string_view help;
};

constexpr double kGB = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> table = {
      {"count", "qualifying_devices", "", 1, "Devices that meet the --min-* requirements."},
      {"processes", "other_processes", "", 1, "Other processes with a context on the GPU (NVML)."},
      {"used_memory", "memory_used_by_others", "bytes", kGiB,
       "Device memory other processes hold (NVML, read before cudatool's own context)."},
      {"utilization", "gpu_utilization", "ratio", 0.01,
       "The highest GPU utilization NVML read over the check's window, 0 to 1."},
      {"compute", "compute_wrong_elements", "", 1,
       "Elements the compute kernel got wrong (every element is compared on the host)."},
      {"d2d", "device_to_device", "bytes_per_second", kGB,
       "Device memory copy rate (a copy's read + write), median of 5."},
      {"h2d", "host_to_device", "bytes_per_second", kGB,
       "Host-to-device copy rate from pinned memory, median of 5."},
      {"d2h", "device_to_host", "bytes_per_second", kGB,
       "Device-to-host copy rate into pinned memory, median of 5."},
      {"peer", "peer_copy", "bytes_per_second", kGB,
       "Peer copy rate from the GPU to peer_gpu, median of 5."},
      {"ecc_mode", "ecc_enabled", "", 1, "1 when ECC is enabled, 0 when it is disabled (NVML)."},
      {"ecc_uncorrected", "ecc_uncorrected_errors", "", 1,
       "Volatile uncorrected ECC errors since the driver loaded (NVML)."},
      {"retired_pages", "retired_pages", "", 1, "Retired pages, both causes (NVML)."},
      {"row_remap", "uncorrectable_remapped_rows", "", 1,
       "Rows remapped for uncorrectable errors (NVML)."},
      {"throttle", "clock_event_reasons", "", 1,
       "NVML's clock-event (throttle) reason bits, as a number (cudatool(1), CLOCK EVENTS)."},
      {"pcie_link", "pcie_link", "bytes_per_second", kGB,
       "The PCIe link's rate, one direction, at the generation and width read while busy."},
      {"nvlink", "nvlinks_up", "", 1, "NVLinks up (NVML)."},
  };
  return table;
}

const Quantity* quantity_of(const CheckResult& c) {
  for (const Quantity& q : quantities())
    if (q.check == c.name) return &q;
  return nullptr;
}

std::string_view threshold_word(const std::string& comparison) {
  if (comparison == ">=") return "min";
  if (comparison == "<=") return "max";
  if (comparison == "<") return "limit";
  if (comparison == "==") return "expected";
  return "";
}

std::string_view threshold_help(std::string_view word) {
  if (word == "min") return "at or above";
  if (word == "max") return "at or below";
  if (word == "limit") return "below";
  return "equal to";
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// The metric families in the order they are first given; each written whole, with its HELP
// and TYPE lines (every metric here is a gauge). Every sample of a family carries the same
// label names, in one order (a label a sample lacks is written empty, which Prometheus reads
// as absent): node_exporter's textfile collector and the Pushgateway have refused families
// whose "label dimensions" differ.
class Exposition {
 public:
  void add(const std::string& name, const std::string& help, Labels labels,
           const std::string& value) {
    Family* family = nullptr;
    for (auto& f : families_)
      if (f.name == name) family = &f;
    if (family == nullptr) family = &families_.emplace_back(Family{name, help, {}});
    family->samples.push_back({std::move(labels), value});
  }
  std::string str() const {
    std::string out;
    for (const auto& f : families_) {
      out += concat("# HELP ", f.name, " ", f.help, "\n# TYPE ", f.name, " gauge\n");
      std::vector<std::string> names;
      for (const auto& sample : f.samples)
        for (const auto& label : sample.labels)
          if (std::find(names.begin(), names.end(), label.first) == names.end())
            names.push_back(label.first);
      std::stable_sort(names.begin(), names.end(),
                       [](const auto& a, const auto& b) { return label_rank(a) < label_rank(b); });
      for (const auto& sample : f.samples) {
        out += f.name;
        for (std::size_t i = 0; i < names.size(); ++i) {
          std::string value;
          for (const auto& label : sample.labels)
            if (label.first == names[i]) value = label.second;
          out += concat(i == 0 ? "{" : ",", names[i], "=\"", label_value(value), "\"");
        }
        out += concat(names.empty() ? " " : "} ", sample.value, "\n");
      }
    }
    return out;
  }

 private:
  // The labels' order: the GPU's (dcgm-exporter's first), then the check's.
  static std::size_t label_rank(const std::string& name) {
    static const std::vector<std::string> order = {"gpu",       "UUID",        "pci_bus_id",
                                                   "modelName", "cuda_device", "peer_gpu",
                                                   "check",     "name",        "verdict"};
    const auto at = std::find(order.begin(), order.end(), name);
    return static_cast<std::size_t>(at - order.begin());  // others after, in given order
  }
  struct Sample {
    Labels labels;
    std::string value;
  };
  struct Family {
    std::string name, help;
    std::vector<Sample> samples;
  };
  std::vector<Family> families_;
};

// A GPU's labels, named as dcgm-exporter names them so that the series join with its: gpu
// (NVML's index, nvidia-smi's; absent without NVML), UUID, pci_bus_id (NVML's form) and
// modelName; and cuda_device, the CUDA ordinal (the JSON's `ordinal`, what --device takes),
// which differs from gpu under CUDA_VISIBLE_DEVICES or CUDA's fastest-first order.
Labels gpu_labels(const check::DeviceReport& device) {
  const DeviceInfo& d = device.identity;
  Labels labels;
  if (device.nvml_index) labels.emplace_back("gpu", std::to_string(*device.nvml_index));
  labels.emplace_back("UUID", d.uuid);
  labels.emplace_back("pci_bus_id", nvml_pci_bus_id(d.pci_bus_id).value_or(d.pci_bus_id));
  labels.emplace_back("modelName", d.name);
  labels.emplace_back("cuda_device", std::to_string(d.ordinal));
  return labels;
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
  const Quantity* q = quantity_of(c);
  if (q == nullptr || !c.value) return;
  const std::string unit = q->unit.empty() ? std::string() : concat("_", q->unit);
  const std::string value_name = concat("cudatool_check_", q->base, unit);
  out.add(value_name, std::string(q->help), labels, sample_value(*c.value * q->scale));
  const std::string_view word = threshold_word(c.comparison);
  if (!c.threshold || word.empty()) return;
  out.add(
      concat("cudatool_check_", q->base, "_", word, unit),
      concat("The threshold of ", value_name, ": the check passes ", threshold_help(word), " it."),
      labels, sample_value(*c.threshold * q->scale));
}

}  // namespace

std::string check_text(const Report& report) {
  std::ostringstream out;
  out << "cudatool check on " << (report.hostname.empty() ? "?" : report.hostname)
      << " (CUDA driver " << driver::format_cuda_version(report.cuda_version)
      << "; kernels: " << report.kernel_form << ")\n";
  if (!report.node_checks.empty()) {
    out << "node\n";
    render_checks(out, report.node_checks);
  }
  for (const auto& d : report.devices) {
    out << "device " << d.identity.ordinal << "  " << d.identity.name << "  "
        << d.identity.compute_capability.sm() << "  " << format_bytes(d.identity.total_memory)
        << "  " << d.identity.pci_bus_id << "  " << d.identity.uuid << "  -> "
        << verdict_name(d.verdict()) << '\n';
    render_checks(out, d.checks);
  }
  const Counts c = count(report);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", report.seconds);
  out << "summary: " << report.devices.size() << " device"
      << (report.devices.size() == 1 ? "" : "s") << ", " << c.pass << " pass, " << c.warn
      << " warn, " << c.fail << " fail, " << c.skipped << " skipped in " << seconds
      << " s: " << verdict_name(report.verdict()) << '\n';
  return out.str();
}

nlohmann::json check_json(const Report& report, int exit_code) {
  const Counts c = count(report);
  nlohmann::json j = {
      {"hostname", report.hostname},
      {"cuda_version", driver::format_cuda_version(report.cuda_version)},
      {"cudatool_version", CUDATOOL_VERSION},
      {"kernels", report.kernel_form},
      {"verdict", verdict_name(report.verdict())},
      {"exit_code", exit_code},
      {"duration_s", report.seconds},
      {"summary", {{"pass", c.pass}, {"warn", c.warn}, {"fail", c.fail}, {"skipped", c.skipped}}},
      {"node_checks", nlohmann::json::array()},
      {"devices", nlohmann::json::array()}};
  if (report.driver_version) j["driver_version"] = *report.driver_version;
  for (const auto& check : report.node_checks) j["node_checks"].push_back(result_json(check));
  for (const auto& d : report.devices) {
    nlohmann::json device = d.identity;
    device["verdict"] = verdict_name(d.verdict());
    if (d.nvml_index) device["nvml_index"] = *d.nvml_index;
    if (d.occupancy) device["occupancy"] = occupancy_json(*d.occupancy);
    device["checks"] = nlohmann::json::array();
    for (const auto& check : d.checks) device["checks"].push_back(result_json(check));
    j["devices"].push_back(device);
  }
  return j;
}

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
  for (const auto& d : report->devices)
    add_verdict(out, "cudatool_check_gpu_verdict",
                "1 for the GPU's verdict (the worst of its checks), 0 for the other three.",
                gpu_labels(d), d.verdict());
  for (const auto& c : report->node_checks) add_result(out, {}, c, true);
  for (const auto& d : report->devices)
    for (const auto& c : d.checks) add_result(out, gpu_labels(d), c, false);
  return out.str();
}

}  // namespace cudatool::app
