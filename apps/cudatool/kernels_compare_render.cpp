// The comparison's three forms: text sorted by impact, --json (kernels_compare_json.cpp),
// --markdown (a pull-request comment).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "cudatool/base/units.hpp"
#include "kernels_compare.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

std::string value_text(KernelMetric m, const std::optional<double>& v) {
  if (!v) return "?";
  if (m == KernelMetric::occupancy) return percent(*v);
  return number_text(*v);
}

const char* metric_label(KernelMetric m) {
  switch (m) {
    case KernelMetric::registers:
      return "registers";
    case KernelMetric::spill_stores:
      return "spill stores";
    case KernelMetric::spill_loads:
      return "spill loads";
    case KernelMetric::local:
      return "local";
    case KernelMetric::shared:
      return "shared";
    case KernelMetric::barriers:
      return "barriers";
    case KernelMetric::occupancy:
      return "occupancy";
    case KernelMetric::code_size:
      return "code";
  }
  return "";
}

bool in_bytes(KernelMetric m) {
  return m != KernelMetric::registers && m != KernelMetric::barriers &&
         m != KernelMetric::occupancy;
}

// "registers 32 -> 40 (+8), spill stores 0 -> 368 B, ..." for the metrics that differ.
std::string differences(const KernelChange& c) {
  std::string text;
  for (std::size_t i = 0; i < kKernelMetricCount; ++i) {
    const auto m = KernelMetric(i);
    const auto& x = (*c.old_measures)[m];
    const auto& y = (*c.new_measures)[m];
    if (x == y) continue;
    if (!text.empty()) text += ", ";
    text += std::string(metric_label(m)) + " " + value_text(m, x) + " -> " + value_text(m, y);
    if (in_bytes(m)) text += " B";
    if (x && y && m != KernelMetric::occupancy)
      text += " (" + std::string(*y > *x ? "+" : "") + number_text(*y - *x) + ")";
  }
  return text;
}

std::string signed_bytes(std::uint64_t before, std::uint64_t after) {
  const double change = static_cast<double>(after) - static_cast<double>(before);
  // Appended, not "literal" + temporary: GCC 12 -O3 warns (-Wrestrict) on that form.
  std::string text = change >= 0 ? "+" : "";
  text += number_text(change);
  text += " B";
  if (before > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%+.1f%%)", change / static_cast<double>(before) * 100);
    text += pct;
  }
  return text;
}

std::string summary_line(const KernelComparison& c) {
  std::string line = std::to_string(c.changed) + " kernels changed (" + std::to_string(c.worsened) +
                     " worse, " + std::to_string(c.improved) + " better), " +
                     std::to_string(c.added) + " added, " + std::to_string(c.removed) +
                     " removed, " + std::to_string(c.unchanged) + " unchanged; device code " +
                     format_bytes(c.old_bytes) + " -> " + format_bytes(c.new_bytes) + ", " +
                     signed_bytes(c.old_bytes, c.new_bytes) + "; ";
  if (c.broken_rules.empty()) return line + "no regression";
  std::string rules;
  for (const std::string& r : c.broken_rules) rules += (rules.empty() ? "" : ", ") + r;
  return line + std::to_string(c.regressions) + " regression" + (c.regressions == 1 ? "" : "s") +
         " (--fail-on " + rules + ")";
}

std::string for_terminal(const std::string& text) {
  return printable(text, text.size());
}

void print_text(const KernelComparison& c, const ComparisonInputs& in, std::ostream& os) {
  const bool cut = !in.wide && isatty(STDOUT_FILENO);
  const auto name = [&](const KernelChange& k) {
    std::string n = for_terminal(k.demangled);
    if (cut && n.size() > 80) n = n.substr(0, 50) + "..." + n.substr(n.size() - 27);
    return n;
  };
  std::string out = for_terminal(in.old_name) + " -> " + for_terminal(in.new_name) +
                    "  (occupancy at " + std::to_string(c.threads) + " threads per block)\n";
  for (const KernelChange& k : c.changes) {
    const char* mark = k.kind == KernelChange::Kind::added     ? "+ "
                       : k.kind == KernelChange::Kind::removed ? "- "
                                                               : "~ ";
    out += (k.regressions.empty() ? "  " : "! ") + std::string(mark) + name(k) + "  " +
           k.arch.str() + (k.relocatable ? " relocatable" : "") + "  ";
    if (k.kind == KernelChange::Kind::changed)
      out += differences(k);
    else
      out += k.kind == KernelChange::Kind::added ? "added" : "removed";
    if (!k.regressions.empty()) {
      out += "  [";
      for (std::size_t r = 0; r < k.regressions.size(); ++r)
        out += (r ? ", " : "") + k.regressions[r];
      out += "]";
    }
    out += '\n';
  }
  out += "architecture     images (old -> new)    bytes (old -> new)\n";
  for (const ArchitectureChange& a : c.architectures) {
    const std::string arch = a.arch ? a.arch->str() : std::string("unknown");
    out += pad(arch, 16) +
           pad(std::to_string(a.old_images) + " -> " + std::to_string(a.new_images), 22) + " " +
           format_bytes(a.old_bytes) + " -> " + format_bytes(a.new_bytes) + "  " +
           (a.old_images && a.new_images ? signed_bytes(a.old_bytes, a.new_bytes)
                                         : architecture_status(a)) +
           '\n';
  }
  out += summary_line(c) + '\n';
  os << out;
}

std::string markdown_cell(const KernelChange& k, KernelMetric m) {
  const auto one = [&](const std::optional<KernelMeasures>& side) {
    return side ? value_text(m, (*side)[m]) : std::string("-");
  };
  if (k.kind != KernelChange::Kind::changed)
    return one(k.old_measures ? k.old_measures : k.new_measures);
  const std::string x = one(k.old_measures), y = one(k.new_measures);
  return x == y ? x : "**" + x + " → " + y + "**";
}

void print_markdown(const KernelComparison& c, const ComparisonInputs& in, std::ostream& os) {
  std::string out = c.broken_rules.empty()
                        ? "### ✅ cudatool kernels: no regression\n\n"
                        : "### ❌ cudatool kernels: " + std::to_string(c.regressions) +
                              " regression" + (c.regressions == 1 ? "" : "s") + "\n\n";
  out += markdown_code(in.old_name) + " → " + markdown_code(in.new_name) + ": " + summary_line(c) +
         ". Occupancy at " + std::to_string(c.threads) + " threads per block.\n\n";
  if (!c.changes.empty()) {
    out +=
        "| | kernel | arch | registers | spill stores (B) | spill loads (B) | local (B) | "
        "shared (B) | barriers | occupancy | code (B) |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|---|\n";
    const std::size_t rows = in.top == 0 ? c.changes.size() : std::min(in.top, c.changes.size());
    for (std::size_t r = 0; r < rows; ++r) {
      const KernelChange& k = c.changes[r];
      std::string status = k.kind == KernelChange::Kind::added     ? "added"
                           : k.kind == KernelChange::Kind::removed ? "removed"
                                                                   : "changed";
      if (!k.regressions.empty()) status = std::string("❌ ").append(status);
      out += "| " + status + " | " + markdown_code(k.demangled) + " | " + k.arch.str() + " |";
      for (std::size_t i = 0; i < kKernelMetricCount; ++i)
        out.append(" ").append(markdown_cell(k, KernelMetric(i))).append(" |");
      out += '\n';
    }
    if (rows < c.changes.size())
      out += "\n… and " + std::to_string(c.changes.size() - rows) +
             " more (cudatool kernels --baseline without --top, or --json, lists them all)\n";
  }
  bool any_arch_change = false;
  for (const ArchitectureChange& a : c.architectures)
    any_arch_change |= a.old_images == 0 || a.new_images == 0 || a.old_bytes != a.new_bytes;
  if (any_arch_change) {
    out += "\n| architecture | images | bytes | change |\n|---|---|---|---|\n";
    for (const ArchitectureChange& a : c.architectures)
      out += "| " + (a.arch ? a.arch->str() : std::string("unknown")) + " | " +
             std::to_string(a.old_images) + " → " + std::to_string(a.new_images) + " | " +
             format_bytes(a.old_bytes) + " → " + format_bytes(a.new_bytes) + " | " +
             (a.old_images && a.new_images ? signed_bytes(a.old_bytes, a.new_bytes)
                                           : architecture_status(a)) +
             " |\n";
  }
  os << out;
}

}  // namespace

void print_comparison(const KernelComparison& comparison, const ComparisonInputs& inputs,
                      ReportFormat format, std::ostream& out) {
  switch (format) {
    case ReportFormat::text:
      print_text(comparison, inputs, out);
      break;
    case ReportFormat::json:
      print_comparison_json(comparison, inputs, out);
      break;
    case ReportFormat::markdown:
      print_markdown(comparison, inputs, out);
      break;
  }
}

}  // namespace cudatool::app
