// The pieces that the text and Markdown forms of `kernels --baseline` share
// (kernels_compare_render.cpp), and those two renderers (kernels_compare_text.cpp,
// kernels_compare_markdown.cpp; the JSON: kernels_compare_json.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels_compare.hpp"

namespace cudatool::app {

void print_comparison_text(const KernelComparison& c, const ComparisonInputs& in, std::ostream& os);
void print_comparison_markdown(const KernelComparison& c, const ComparisonInputs& in,
                               std::ostream& os);

// A number without decimals: "368", "-8".
std::string number_text(double v);
// A metric's value as a cell shows it: a number, occupancy as a percentage, "?" if unknown.
std::string value_text(KernelMetric m, const std::optional<double>& v);
// "+1024 B (+2.5%)": the change in bytes, and its share of `before` where there is one.
std::string signed_bytes(std::uint64_t before, std::uint64_t after);
// An architecture's change of size (signed_bytes), or "added" or "removed".
std::string architecture_change(const ArchitectureChange& a);
// The counts, the device code's size before and after, and the regressions, in one line.
std::string summary_line(const KernelComparison& c);

}  // namespace cudatool::app
