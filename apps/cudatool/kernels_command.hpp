// `cudatool kernels`: its flags, the request they make (kernels_request.cpp), and the
// steps its plain listing (kernels.cpp) and its reports (kernels_report.cpp, --baseline and
// --sizes) share.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "kernels_selection.hpp"
#include "render.hpp"

namespace cudatool::app {

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

// Checks the flags (UsageError) before any file is read.
KernelsRequest make_request(const KernelsOptions& o, const GlobalOptions& global);

// A message for each entry or file that could not be read; whether any file held CUDA code,
// and whether an entry failed.
struct ScanProblems {
  bool any_cuda = false;
  bool bad_entry = false;
  std::string notes;  // the files without CUDA code, each with why ("; " between them)
};
ScanProblems report_problems(const ScanResult& result, const Messages& message);

// --kernel's pattern applied to a whole scan (the reports read every kernel kept).
void keep_matching(ScanResult& scan, const KernelsRequest& request);

// The plain listing as --json (share/schemas/kernels.schema.json), written to `out`, with
// the scan's messages told to `message`: the executable's `kernels --json` and the Python
// module's kernels(). Where no file holds CUDA code, the error document, and exit 2.
ExitStatus write_kernels_json(KernelsRequest& request, std::ostream& out, const Messages& message);

// --baseline and --sizes: the files scanned whole, then the comparison or the size report,
// written to `out` (the executable's and the Python module's alike).
ExitStatus run_report(const KernelsOptions& options, KernelsRequest& request, std::ostream& out,
                      const Messages& message);

}  // namespace cudatool::app
