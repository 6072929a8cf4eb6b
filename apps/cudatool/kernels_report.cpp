// `kernels --baseline` and `kernels --sizes`: the files scanned whole, then the comparison
// or the size report, each in its three forms (kernels_compare.hpp).
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "kernels_command.hpp"
#include "kernels_compare.hpp"
#include "progress.hpp"

namespace cudatool::app {

ExitStatus run_report(const KernelsOptions& options, KernelsRequest& request, std::ostream& out,
                      const Messages& message) {
  if (options.baseline && options.sizes)
    throw UsageError("--baseline and --sizes exclude each other (run them one after the other)");
  const char* report = options.sizes ? "--sizes" : "--baseline";
  if (request.format == Format::csv || request.format == Format::csv_noheader)
    throw UsageError(std::string("--format csv does not apply to ") + report +
                     " (text, --json or --markdown)");
  if (options.markdown && request.format == Format::json)
    throw UsageError("--markdown and --json exclude each other");
  if (request.sort) throw UsageError(std::string("--sort does not apply to ") + report);
  if (options.sizes && request.threads) throw UsageError("--threads does not apply to --sizes");
  const ReportFormat format = request.format == Format::json ? ReportFormat::json
                              : options.markdown             ? ReportFormat::markdown
                                                             : ReportFormat::text;
  const std::size_t top =
      options.top ? static_cast<std::size_t>(parse_int(*options.top, "--top", 0, 1000000)) : 20;
  std::vector<RegressionRule> rules;
  if (options.fail_on) rules = parse_fail_on(*options.fail_on);

  ScanProgress progress("reading", "images");
  if (request.progress) request.scan.progress = std::ref(progress);
  ScanResult scan = scan_binaries(request.files, request.scan);
  keep_matching(scan, request);
  const ScanProblems problems = report_problems(scan, message);
  bool bad_entry = problems.bad_entry;
  if (options.sizes) {
    print_sizes(size_report(scan, top == 0 ? scan.kernels.size() : top), scan, format, request.wide,
                out);
  } else {
    ScanResult old_scan = read_baseline(*options.baseline, request.scan);
    keep_matching(old_scan, request);
    for (const ScannedImage& image : old_scan.images)
      if (!image.error.empty()) bad_entry = true;
    ComparisonOptions compare;
    compare.threads = request.threads.value_or(256);
    compare.rules = std::move(rules);
    ArchitectureTable architectures;
    const KernelComparison comparison = compare_kernels(old_scan, scan, compare, architectures);
    std::string names;
    for (const std::string& f : request.files) names += (names.empty() ? "" : " ") + f;
    print_comparison(comparison, {old_scan, scan, *options.baseline, names, top, request.wide},
                     format, out);
    if (!comparison.broken_rules.empty()) return ExitStatus::regression;
  }
  if (!problems.any_cuda) return ExitStatus::usage;
  if (bad_entry) return ExitStatus::unreadable_entry;
  return ExitStatus::success;
}

}  // namespace cudatool::app
