// `cudatool compat`: the library's report and what the command makes of it: each file's
// verdict over the targets, the fix where there is one, the exit status. Its text and JSON
// renderings (compat_text.cpp, compat_json.cpp) print these and compute nothing else.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compat/compat.hpp"
#include "exit_status.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

struct CompatAnswer {
  CompatReport report;
  bool require_native = false;
  bool all_files = false;  // --all: list files without CUDA code too
};

// The worst verdict of a file over the targets (unreadable files are cannot_run's peers:
// ranked first).
CompatVerdict worst_verdict(const CompatFile& file);
std::string_view verdict_name(CompatVerdict v);  // "cannot_run", "jit", "native", "no_cuda_code"
std::string_view gap_name(CompatGap gap);        // "predates", ...; "" for none
std::string_view outcome_name(LoadOutcome o);    // "native", "jit", "no_binary", ...
std::string_view jit_policy_name(JitPolicy p);   // "normal", "force_ptx_jit", "disable_ptx_jit"
std::string ptx_version_text(PtxVersion v);      // "9.0"
// What a file's verdict on one target means, in one clause: "2 of 38 containers by JIT from
// compute_86 PTX (1.2 MiB ...)", and the fix where it cannot run.
std::string verdict_detail(const CompatAnswer& a, const CompatFile& file, std::size_t target);
std::string verdict_fix(const CompatAnswer& a, const CompatFile& file, std::size_t target);
// The files shown, worst first, then in the order reached.
std::vector<const CompatFile*> shown_files(const CompatAnswer& a);
ExitStatus compat_exit_status(const CompatAnswer& a);

void print_compat_text(const CompatAnswer& a);
// The --json document without schema_version (print_json adds it).
JsonObject compat_json(const CompatAnswer& a);
void print_compat_json(const CompatAnswer& a);

// The flags, as given.
struct CompatOptions {
  std::vector<std::string> paths;
  std::vector<std::string> arch;  // each --arch as given: comma-separated
  std::optional<std::string> driver, cuda, require, ptx_jit, jobs;
  bool python = false, all = false, containers = false, fresh = false;
};

// What the flags ask, answered: the request (checked before any file is read), the targets
// (--arch, or the visible GPUs through the device cache), the driver, and the library's
// report. The executable's `compat` and the Python module's compat().
CompatAnswer compat_answer(const CompatOptions& o);

}  // namespace cudatool::app
