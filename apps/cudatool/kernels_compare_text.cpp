// `kernels --baseline`'s text for people: one line a changed, added or removed kernel
// (in the comparison's order, by impact), the architectures, and the summary.
#include <unistd.h>

#include <string>

#include "cudatool/base/units.hpp"
#include "kernels_compare_render.hpp"
#include "render.hpp"
#include "terminal_text.hpp"

namespace cudatool::app {
namespace {

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

}  // namespace

void print_comparison_text(const KernelComparison& c, const ComparisonInputs& in,
                           std::ostream& os) {
  const bool cut = !in.wide && isatty(STDOUT_FILENO);
  const auto name = [&](const KernelChange& k) {
    const std::string n = for_terminal(k.demangled);
    return cut ? cut_middle(n, 80, 27) : n;
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
           architecture_change(a) + '\n';
  }
  out += summary_line(c) + '\n';
  os << out;
}

}  // namespace cudatool::app
