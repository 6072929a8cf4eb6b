// cudatool kernels: every kernel in compiled CUDA binaries (CUBIN, fatbin, host objects,
// static archives, executables, shared libraries), what it costs, and with --threads its
// occupancy on the image's architecture from the offline table. No driver, no GPU.
// Options -> KernelsRequest (kernels_selection.hpp) -> scan_binaries -> select_kernels ->
// the JSON (kernels_json.hpp), text or CSV (kernels_render.hpp) renderer.
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "kernels_compare.hpp"
#include "kernels_json.hpp"
#include "kernels_render.hpp"
#include "kernels_selection.hpp"
#include "progress.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// The flags as given: numbers go through the strict parser (base/numbers.hpp), as in
// every other command, once the request is made.
struct KernelsOptions {
  std::vector<std::string> files;
  std::vector<std::string> arch_lists;  // each --arch as given: comma-separated
  std::optional<std::string> kernel;
  std::optional<std::string> threads, jobs;
  std::optional<std::string> sort;
  bool wide = false;
  bool no_progress = false;
  bool relocatable = false;             // list the relocatable leftovers of linked files too
  std::optional<std::string> baseline;  // --baseline OLD: compare the files with it
  std::optional<std::string> fail_on;   // --fail-on LIST: the regressions that fail
  std::optional<std::string> top;       // --top N: rows of the reports' lists
  bool sizes = false;                   // --sizes: where the bytes go
  bool markdown = false;                // the reports as Markdown
};

KernelsRequest make_request(const KernelsOptions& o, const GlobalOptions& global) {
  KernelsRequest request;
  request.format = global.format;
  request.files = o.files;
  // Split here, not by CLI11 (which drops empty entries): "sm_90," is an error, as in
  // compile --arch.
  for (const std::string& list : o.arch_lists)
    for (const std::string& item : split_list(list, "--arch", "sm_80,sm_90"))
      request.scan.arch.push_back(Arch::parse(item, "--arch"));
  if (o.threads) request.threads = parse_int(*o.threads, "--threads", 1, 1024);
  if (o.jobs) request.jobs = static_cast<unsigned>(parse_int(*o.jobs, "--jobs", 1, 1024));
  const auto& columns = kernel_sort_columns();
  if (o.sort && std::find(columns.begin(), columns.end(), *o.sort) == columns.end()) {
    std::string names;
    for (const auto& c : columns) names += (names.empty() ? "" : ", ") + c;
    throw UsageError("--sort " + quote_input(*o.sort) + ": unknown column (columns: " + names +
                     ")");
  }
  if (o.sort == "occupancy" && !request.threads)
    throw UsageError("--sort occupancy needs --threads N");
  request.sort = o.sort;
  if (o.kernel) request.pattern.emplace(*o.kernel, "--kernel");
  request.scan.relocatable_leftovers = o.relocatable;
  request.scan.threads = request.jobs;
  request.wide = o.wide;
  request.progress = !o.no_progress && isatty(STDERR_FILENO);
  return request;
}

// A line on stderr for each entry or file that could not be read (their text made
// printable by print_message); whether any file held CUDA code, and whether an entry failed.
struct ScanProblems {
  bool any_cuda = false;
  bool bad_entry = false;
};
ScanProblems report_problems(const ScanResult& result) {
  ScanProblems problems;
  for (const auto& image : result.images)
    if (!image.error.empty()) {
      print_message(image.error);
      problems.bad_entry = true;
    }
  for (const auto& f : result.files) {
    if (f.has_cuda_code)
      problems.any_cuda = true;
    else
      print_message(f.path + ": " + f.note);
  }
  return problems;
}

// --kernel's pattern applied to a whole scan (the reports read every kernel kept).
void keep_matching(ScanResult& scan, const KernelsRequest& request) {
  if (!request.pattern) return;
  std::erase_if(scan.kernels, [&](const ScannedKernel& k) { return !request.keeps(k.resources); });
  for (ScannedImage& image : scan.images) image.kernel_count = 0;
  for (const ScannedKernel& k : scan.kernels) ++scan.images[k.image].kernel_count;
}

// --baseline and --sizes: the files scanned whole, then the comparison or the size report.
ExitStatus run_report(const KernelsOptions& options, KernelsRequest& request) {
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
  const ScanProblems problems = report_problems(scan);
  bool bad_entry = problems.bad_entry;
  if (options.sizes) {
    print_sizes(size_report(scan, top == 0 ? scan.kernels.size() : top), scan, format,
                request.wide);
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
                     format);
    if (!comparison.broken_rules.empty()) return ExitStatus::regression;
  }
  if (!problems.any_cuda) return ExitStatus::usage;
  if (bad_entry) return ExitStatus::unreadable_entry;
  return ExitStatus::success;
}

ExitStatus run_kernels(const KernelsOptions& options, const GlobalOptions& global) {
  KernelsRequest request = make_request(options, global);
  if (options.baseline || options.sizes) return run_report(options, request);
  if (options.fail_on) throw UsageError("--fail-on needs --baseline OLD");
  if (options.markdown) throw UsageError("--markdown needs --baseline or --sizes");
  if (options.top) throw UsageError("--top needs --baseline or --sizes");
  ScanProgress progress("reading", "images");
  if (request.progress) request.scan.progress = std::ref(progress);
  ArchitectureTable architectures;
  // --json in image order (no --sort): each image's kernels are filtered, measured and
  // rendered on the thread that read the image, while the other images are still being
  // read; the kernels array is then their text in image order.
  std::optional<KernelsJsonWhileReading> while_reading;
  if (request.format == Format::json && !request.sort) {
    while_reading.emplace(request, architectures);
    request.scan.keep_kernels = false;
    request.scan.on_image = [&](const ImageKernels& image) { while_reading->add(image); };
  }

  const ScanResult result = scan_binaries(request.files, request.scan);
  // Otherwise the kernels to show are chosen, measured and sorted now.
  const KernelRows rows =
      while_reading ? KernelRows{} : select_kernels(result, request, architectures);
  const ScanProblems problems = report_problems(result);

  switch (request.format) {
    case Format::json:
      print_kernels_json(result, rows, request, while_reading ? &*while_reading : nullptr);
      break;
    case Format::csv:
    case Format::csv_noheader:
      print_kernels_csv(result, rows, request);
      break;
    default:  // text
      print_kernels_text(result, rows, request, problems.any_cuda);
      break;
  }
  if (!problems.any_cuda) return ExitStatus::usage;
  if (problems.bad_entry) return ExitStatus::unreadable_entry;
  return ExitStatus::success;
}

}  // namespace

Command add_kernels(CLI::App& root, GlobalOptions& global) {
  auto o = std::make_shared<KernelsOptions>();
  CLI::App* sub = root.add_subcommand(
      "kernels", "Every kernel in compiled CUDA binaries, its resources and occupancy (no GPU)");
  sub->add_option("FILE", o->files,
                  "CUBIN, fatbin, object (.o, -dc too), archive (.a), executable or shared library")
      ->required();
  // One value per --arch (a list is comma-separated), so that `kernels --arch sm_90 FILE`
  // takes FILE as a file, not as a second architecture.
  sub->add_option("--arch", o->arch_lists,
                  "Keep these architectures (sm_90 also keeps sm_90a; comma-separated)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(completion_choices(architecture_names()));
  sub->add_option("--kernel", o->kernel,
                  "Keep kernels whose mangled or demangled name matches this regular expression "
                  "(RE2 syntax, anywhere in the name)");
  sub->add_option("--threads", o->threads,
                  "Add each kernel's occupancy at N threads per block (1 to 1024)");
  sub->add_option(
         "--sort", o->sort,
         "Sort by a column: name, regs, shared, local, const, threads, barriers, occupancy")
      ->check(completion_choices(kernel_sort_columns()));
  sub->add_flag("--wide", o->wide,
                "Print whole kernel names on a terminal too (they are cut to 60 characters only "
                "where standard output is a terminal)");
  sub->add_flag("--relocatable", o->relocatable,
                "Also list the relocatable leftovers (__nv_relfatbin) of executables and shared "
                "libraries, apart from the linked kernels");
  sub->add_option("--jobs", o->jobs,
                  "Worker threads, 1 to 1024 (default: one per CPU this process may use)");
  sub->add_option("--baseline", o->baseline,
                  "Compare FILE... with this build: a binary, or a saved `kernels --json` "
                  "(kernels matched by name and architecture)");
  sub->add_option("--fail-on", o->fail_on,
                  "With --baseline: exit 11 on these regressions (comma-separated: registers, "
                  "spills, local, shared, barriers, occupancy, code_size, size, removed; each "
                  "optionally =N or =N%)")
      ->check(completion_choices(fail_on_names()));
  sub->add_flag("--sizes", o->sizes,
                "Where the bytes go: per file, architecture and kernel, template families, "
                "duplicates");
  sub->add_flag("--markdown", o->markdown,
                "Print --baseline's or --sizes' report as Markdown (for a pull-request comment)");
  sub->add_option("--top", o->top,
                  "Rows of --sizes' lists and of --markdown's comparison (default 20; 0 for all)");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar on stderr");
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  return {sub, [o, &global] { return run_kernels(*o, global); }};
}

}  // namespace cudatool::app
