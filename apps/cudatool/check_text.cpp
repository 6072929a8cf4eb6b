// check's text for people: the node's checks, then each device's, one line a check, and the
// summary.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cudatool/base/units.hpp"
#include "cudatool/driver/driver.hpp"
#include "render_check.hpp"

namespace cudatool::app {
namespace {

using check::CheckResult;
using check::Report;
using check::Verdict;

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
  std::string out = number(display_value(c.quantity, *c.value));
  if (const std::string_view unit = display_unit(c.quantity); !unit.empty())
    out.append(" ").append(unit);
  if (c.threshold) {
    const std::string_view symbol = comparison_symbol(c.comparison);
    out.append(" (")
        .append(symbol.empty() ? "vs" : symbol)
        .append(" ")
        .append(number(display_value(c.quantity, *c.threshold)))
        .append(")");
  }
  return out;
}

void render_checks(std::ostringstream& out, const std::vector<CheckResult>& checks) {
  for (const auto& c : checks) {
    out << "  " << column(std::string(verdict_name(c.verdict)), 8) << column(display_name(c), 17)
        << column(value_text(c), 30) << c.reason;
    // What to do, where there is something to do.
    const check::Remediation r = remediation_of(c);
    if (r != check::Remediation::none && r != check::Remediation::monitor)
      out << " -> " << remediation_name(r);
    out << '\n';
  }
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
        << verdict_name(d.verdict());
    if (d.remediation() != check::Remediation::none)
      out << " (" << remediation_name(d.remediation()) << ")";
    out << '\n';
    render_checks(out, d.checks);
  }
  const VerdictCounts c = count_verdicts(report);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", report.seconds);
  out << "summary: " << report.devices.size() << " device"
      << (report.devices.size() == 1 ? "" : "s") << ", " << c.pass << " pass, " << c.warn
      << " warn, " << c.fail << " fail, " << c.skipped << " skipped in " << seconds
      << " s: " << verdict_name(report.verdict()) << '\n';
  const check::Remediation remediation = report.remediation();
  out << "remediation: " << remediation_name(remediation) << " (" << remediation_text(remediation)
      << ")";
  if (const std::string why = remediation_reason(report); !why.empty()) out << " for " << why;
  out << '\n';
  return out.str();
}

}  // namespace cudatool::app
