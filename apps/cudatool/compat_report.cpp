#include "compat_report.hpp"

#include <algorithm>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"

namespace cudatool::app {
namespace {

int rank(const CompatFile& f) {
  if (!f.error.empty()) return 1;
  switch (worst_verdict(f)) {
    case CompatVerdict::cannot_run:
      return 0;
    case CompatVerdict::jit:
      return 2;
    case CompatVerdict::native:
      return 3;
    case CompatVerdict::no_cuda_code:
      break;
  }
  return 4;
}

}  // namespace

CompatVerdict worst_verdict(const CompatFile& file) {
  CompatVerdict worst = CompatVerdict::no_cuda_code;
  for (const CompatFileTarget& t : file.targets) worst = std::min(worst, t.verdict);
  return worst;
}

std::string_view verdict_name(CompatVerdict v) {
  switch (v) {
    case CompatVerdict::cannot_run:
      return "cannot_run";
    case CompatVerdict::jit:
      return "jit";
    case CompatVerdict::native:
      return "native";
    case CompatVerdict::no_cuda_code:
      break;
  }
  return "no_cuda_code";
}

std::string_view gap_name(CompatGap gap) {
  switch (gap) {
    case CompatGap::none:
      return "";
    case CompatGap::predates:
      return "predates";
    case CompatGap::other_gpus_only:
      return "other_gpus_only";
    case CompatGap::ptx_too_new:
      return "ptx_too_new";
    case CompatGap::jit_disabled:
      return "jit_disabled";
    case CompatGap::not_loadable:
      return "not_loadable";
    case CompatGap::runtime_too_new:
      return "runtime_too_new";
  }
  return "";
}

std::string_view outcome_name(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::native:
      return "native";
    case LoadOutcome::jit:
      return "jit";
    case LoadOutcome::no_binary:
      return "no_binary";
    case LoadOutcome::ptx_too_new:
      return "ptx_too_new";
    case LoadOutcome::jit_disabled:
      return "jit_disabled";
  }
  return "no_binary";
}

std::string_view jit_policy_name(JitPolicy p) {
  switch (p) {
    case JitPolicy::normal:
      return "normal";
    case JitPolicy::force_ptx_jit:
      return "force_ptx_jit";
    case JitPolicy::disable_ptx_jit:
      return "disable_ptx_jit";
  }
  return "normal";
}

std::string ptx_version_text(PtxVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::vector<const CompatFile*> shown_files(const CompatAnswer& a) {
  std::vector<const CompatFile*> files;
  for (const CompatFile& f : a.report.files)
    if (a.all_files || f.has_cuda_code || !f.error.empty()) files.push_back(&f);
  std::stable_sort(files.begin(), files.end(),
                   [](const CompatFile* x, const CompatFile* y) { return rank(*x) < rank(*y); });
  return files;
}

ExitStatus compat_exit_status(const CompatAnswer& a) {
  bool cannot = false, unreadable = false, jit = false;
  for (const CompatFile& f : a.report.files) {
    if (!f.error.empty() || f.unreadable_entries > 0) unreadable = true;
    const CompatVerdict v = worst_verdict(f);
    cannot = cannot || v == CompatVerdict::cannot_run;
    jit = jit || v == CompatVerdict::jit;
  }
  if (cannot) return ExitStatus::incompatible;
  if (unreadable) return ExitStatus::unreadable_entry;
  if (jit && a.require_native) return ExitStatus::needs_jit;
  return ExitStatus::success;
}

}  // namespace cudatool::app
