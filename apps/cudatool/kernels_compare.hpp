// `kernels --baseline OLD NEW...` (what changed between two builds) and `kernels --sizes`
// (where the bytes go): the baseline read (a binary, or a saved `kernels --json`), the
// --fail-on rules, and one renderer per format for each report (text, --json with
// share/schemas/kernels-compare.schema.json and kernels-sizes.schema.json, --markdown for a
// pull-request comment).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/binary/binary_sizes.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/kernel_comparison.hpp"

namespace cudatool::app {

enum class ReportFormat { text, json, markdown };

// The baseline: a saved `kernels --json` document (its first non-blank byte is '{'), read
// back into a scan, or a binary, scanned with `options`. A document's images of
// architectures that options.arch leaves out are skipped, as a scan skips them. Throws
// UsageError `--baseline "<path>": ...` for a document that is not one.
ScanResult read_baseline(const std::string& path, const ScanOptions& options);
// A `kernels --json` document's text read back into its scan (untrusted: every index and
// value checked). Throws UsageError saying what is wrong (fuzz/kernels_document.cpp).
ScanResult read_kernels_document(std::string_view text, const ScanOptions& options);

// --fail-on's list: registers, spills, local, shared, barriers, occupancy, code_size, size,
// removed; each optionally =N (more than N worse) or =N% (more than N percent of the old
// value). Throws UsageError naming --fail-on.
std::vector<RegressionRule> parse_fail_on(const std::string& list);
// The names --fail-on takes (completion, help).
const std::vector<std::string>& fail_on_names();

// What the comparison report shows of its inputs.
struct ComparisonInputs {
  const ScanResult& old_scan;
  const ScanResult& new_scan;
  std::string old_name, new_name;  // the baseline's path; the new files' paths joined
  std::size_t top = 0;             // Markdown rows (0: all)
  bool wide = false;               // whole names on a terminal
};
// Each report in `format`, written to `out`.
void print_comparison(const KernelComparison& comparison, const ComparisonInputs& inputs,
                      ReportFormat format, std::ostream& out);

void print_sizes(const SizeReport& report, const ScanResult& scan, ReportFormat format, bool wide,
                 std::ostream& out);

// The --json forms (kernels_compare_json.cpp, kernels_sizes_json.cpp), and the words both
// the text and the JSON use.
void print_comparison_json(const KernelComparison& comparison, const ComparisonInputs& inputs,
                           std::ostream& out);
void print_sizes_json(const SizeReport& report, const ScanResult& scan, std::ostream& out);
std::string architecture_status(const ArchitectureChange& a);  // "added", "removed", "kept"
std::string arch_kind(const ArchitectureSize& a);              // "sass", "ptx", "unknown"

}  // namespace cudatool::app
