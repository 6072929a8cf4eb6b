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

#include "cudatool/base/error.hpp"
#include "error_json.hpp"
#include "kernels_command.hpp"
#include "kernels_compare.hpp"
#include "kernels_json.hpp"
#include "kernels_render.hpp"
#include "kernels_selection.hpp"
#include "progress.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

ExitStatus listing_status(const ScanProblems& problems) {
  if (!problems.any_cuda) return ExitStatus::usage;
  if (problems.bad_entry) return ExitStatus::unreadable_entry;
  return ExitStatus::success;
}

ExitStatus run_kernels(const KernelsOptions& options, const GlobalOptions& global) {
  KernelsRequest request = make_request(options, global);
  if (options.baseline || options.sizes)
    return run_report(options, request, command_out(), print_message);
  if (options.fail_on) throw UsageError("--fail-on needs --baseline OLD");
  if (options.markdown) throw UsageError("--markdown needs --baseline or --sizes");
  if (options.top) throw UsageError("--top needs --baseline or --sizes");
  if (request.format == Format::json)
    return write_kernels_json(request, command_out(), print_message);
  ScanProgress progress("reading", "images");
  if (request.progress) request.scan.progress = std::ref(progress);
  ArchitectureTable architectures;
  const ScanResult result = scan_binaries(request.files, request.scan);
  const KernelRows rows = select_kernels(result, request, architectures);
  const ScanProblems problems = report_problems(result, print_message);
  if (request.format == Format::text)
    print_kernels_text(result, rows, request, problems.any_cuda);
  else
    print_kernels_csv(result, rows, request);
  return listing_status(problems);
}

}  // namespace

ExitStatus write_kernels_json(KernelsRequest& request, std::ostream& out, const Messages& message) {
  ScanProgress progress("reading", "images");
  if (request.progress) request.scan.progress = std::ref(progress);
  ArchitectureTable architectures;
  // In image order (no --sort): each image's kernels are filtered, measured and rendered on
  // the thread that read the image, while the other images are still being read; the
  // kernels array is then their text in image order.
  std::optional<KernelsJsonWhileReading> while_reading;
  if (!request.sort) {
    while_reading.emplace(request, architectures);
    request.scan.keep_kernels = false;
    request.scan.on_image = [&](const ImageKernels& image) { while_reading->add(image); };
  }
  const ScanResult result = scan_binaries(request.files, request.scan);
  // Otherwise the kernels to show are chosen, measured and sorted now.
  const KernelRows rows =
      while_reading ? KernelRows{} : select_kernels(result, request, architectures);
  const ScanProblems problems = report_problems(result, message);
  // No file holds CUDA code: a usage error, whose answer is the error document (as every
  // error's is), not a document of no kernels.
  if (!problems.any_cuda) {
    print_error_document(ExitStatus::usage, one_line(problems.notes), nullptr, out);
    return ExitStatus::usage;
  }
  print_kernels_json(result, rows, request, while_reading ? &*while_reading : nullptr, out);
  return listing_status(problems);
}

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
