// The renderings of a check report: text for people, the --json document, and
// node_exporter's textfile format. Strings only; the app prints them.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"
#include "cudatool/driver/driver.hpp"

namespace cudatool::check {
namespace {

std::string number(double v) {
  char buffer[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15)
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
  else
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string pad(const std::string& text, std::size_t width) {
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
    out << "  " << pad(std::string(verdict_name(c.verdict)), 8) << pad(display_name(c), 17)
        << pad(value_text(c), 30) << c.reason << '\n';
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

nlohmann::json check_json(const CheckResult& c) {
  nlohmann::json j = {
      {"check", kind_name(c.kind)}, {"name", c.name},       {"verdict", verdict_name(c.verdict)},
      {"value", nullptr},           {"threshold", nullptr}, {"unit", c.unit},
      {"comparison", c.comparison}, {"reason", c.reason}};
  if (c.value) j["value"] = *c.value;
  if (c.threshold) j["threshold"] = *c.threshold;
  if (c.peer) j["peer"] = *c.peer;
  return j;
}

// A Prometheus label value: valid UTF-8 (a byte that is not is U+FFFD, as in the JSON of
// the same run: the format takes nothing else, and its parsers reject the whole file), with
// backslash, double quote and newline escaped.
std::string label(const std::string& text) {
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

std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

}  // namespace

std::string format_text(const Report& report) {
  std::ostringstream out;
  out << "cudatool check on " << (report.hostname.empty() ? "?" : report.hostname)
      << " (CUDA driver " << driver::format_cuda_version(report.driver_version)
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

nlohmann::json report_json(const Report& report, int exit_code) {
  const Counts c = count(report);
  nlohmann::json j = {
      {"hostname", report.hostname},
      {"driver_version", driver::format_cuda_version(report.driver_version)},
      {"cudatool_version", CUDATOOL_VERSION},
      {"kernels", report.kernel_form},
      {"verdict", verdict_name(report.verdict())},
      {"exit_code", exit_code},
      {"duration_s", report.seconds},
      {"summary", {{"pass", c.pass}, {"warn", c.warn}, {"fail", c.fail}, {"skipped", c.skipped}}},
      {"node_checks", nlohmann::json::array()},
      {"devices", nlohmann::json::array()}};
  for (const auto& check : report.node_checks) j["node_checks"].push_back(check_json(check));
  for (const auto& d : report.devices) {
    nlohmann::json device = d.identity;
    device["verdict"] = verdict_name(d.verdict());
    device["checks"] = nlohmann::json::array();
    for (const auto& check : d.checks) device["checks"].push_back(check_json(check));
    j["devices"].push_back(device);
  }
  return j;
}

std::string format_prometheus(const Report& report, int exit_code) {
  std::ostringstream out;
  struct Row {
    std::string labels;
    const CheckResult* check;
  };
  std::vector<Row> rows;
  auto labels_of = [](const std::string& device, const std::string& uuid, const std::string& name,
                      const CheckResult& c) {
    return "device=\"" + label(device) + "\",uuid=\"" + label(uuid) + "\",gpu_name=\"" +
           label(name) + "\",check=\"" + std::string(kind_name(c.kind)) + "\",name=\"" +
           label(c.name) + "\",peer=\"" + (c.peer ? std::to_string(*c.peer) : "") + "\"";
  };
  for (const auto& c : report.node_checks) rows.push_back({labels_of("", "", "", c), &c});
  for (const auto& d : report.devices)
    for (const auto& c : d.checks)
      rows.push_back(
          {labels_of(std::to_string(d.identity.ordinal), d.identity.uuid, d.identity.name, c), &c});

  out << "# HELP cudatool_check_verdict 1 for the check's verdict, 0 for the other three.\n"
         "# TYPE cudatool_check_verdict gauge\n";
  for (const auto& row : rows)
    for (Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail, Verdict::skipped})
      out << "cudatool_check_verdict{" << row.labels << ",verdict=\"" << verdict_name(v) << "\"} "
          << (row.check->verdict == v ? 1 : 0) << '\n';
  out << "# HELP cudatool_check_value The value a check measured, in the unit labelled.\n"
         "# TYPE cudatool_check_value gauge\n";
  for (const auto& row : rows)
    if (row.check->value)
      out << "cudatool_check_value{" << row.labels << ",unit=\"" << label(row.check->unit) << "\"} "
          << prom_number(*row.check->value) << '\n';
  out << "# HELP cudatool_check_threshold The threshold a check's value was held against.\n"
         "# TYPE cudatool_check_threshold gauge\n";
  for (const auto& row : rows)
    if (row.check->threshold)
      out << "cudatool_check_threshold{" << row.labels << ",unit=\"" << label(row.check->unit)
          << "\",comparison=\"" << label(row.check->comparison) << "\"} "
          << prom_number(*row.check->threshold) << '\n';
  const std::string host = "hostname=\"" + label(report.hostname) + "\"";
  out << "# HELP cudatool_check_devices Devices checked.\n# TYPE cudatool_check_devices gauge\n"
      << "cudatool_check_devices{" << host << "} " << report.devices.size() << '\n';
  out << "# HELP cudatool_check_exit_code The exit code of cudatool check (0 ok, 9 a check "
         "failed).\n"
         "# TYPE cudatool_check_exit_code gauge\n"
      << "cudatool_check_exit_code{" << host << "} " << exit_code << '\n';
  out << "# HELP cudatool_check_duration_seconds Wall time of the check.\n"
         "# TYPE cudatool_check_duration_seconds gauge\n"
      << "cudatool_check_duration_seconds{" << host << "} " << prom_number(report.seconds) << '\n';
  out << "# HELP cudatool_check_timestamp_seconds When the check ran (Unix time).\n"
         "# TYPE cudatool_check_timestamp_seconds gauge\n"
      << "cudatool_check_timestamp_seconds{" << host << "} "
      << static_cast<long long>(std::time(nullptr)) << '\n';
  return out.str();
}

}  // namespace cudatool::check
