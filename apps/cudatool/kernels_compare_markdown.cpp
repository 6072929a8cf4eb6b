// `kernels --baseline --markdown`: a pull-request comment (a verdict heading, the summary,
// a table of the changed kernels and one of the architectures whose code changed).
#include <algorithm>
#include <string>

#include "cudatool/base/units.hpp"
#include "kernels_compare_render.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string markdown_cell(const KernelChange& k, KernelMetric m) {
  const auto one = [&](const std::optional<KernelMeasures>& side) {
    return side ? value_text(m, (*side)[m]) : std::string("-");
  };
  if (k.kind != KernelChange::Kind::changed)
    return one(k.old_measures ? k.old_measures : k.new_measures);
  const std::string x = one(k.old_measures), y = one(k.new_measures);
  return x == y ? x : "**" + x + " → " + y + "**";
}

}  // namespace

void print_comparison_markdown(const KernelComparison& c, const ComparisonInputs& in,
                               std::ostream& os) {
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
             architecture_change(a) + " |\n";
  }
  os << out;
}

}  // namespace cudatool::app
