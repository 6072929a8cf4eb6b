// `kernels --baseline`: one renderer per format (text: kernels_compare_text.cpp, --json:
// kernels_compare_json.cpp, --markdown: kernels_compare_markdown.cpp), and the words the text
// and the Markdown share.
#include "kernels_compare_render.hpp"

#include <cstdio>
#include <string>

#include "cudatool/base/units.hpp"
#include "render.hpp"

namespace cudatool::app {

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

std::string architecture_change(const ArchitectureChange& a) {
  return a.old_images && a.new_images ? signed_bytes(a.old_bytes, a.new_bytes)
                                      : architecture_status(a);
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

void print_comparison(const KernelComparison& comparison, const ComparisonInputs& inputs,
                      ReportFormat format, std::ostream& out) {
  switch (format) {
    case ReportFormat::text:
      print_comparison_text(comparison, inputs, out);
      break;
    case ReportFormat::json:
      print_comparison_json(comparison, inputs, out);
      break;
    case ReportFormat::markdown:
      print_comparison_markdown(comparison, inputs, out);
      break;
  }
}

}  // namespace cudatool::app
