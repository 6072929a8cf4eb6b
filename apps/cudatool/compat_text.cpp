// compat's text: the targets and driver, one verdict line per file (worst first), a summary.
#include <iostream>

#include "compat_report.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string_view verdict_word(const CompatFile& f) {
  if (!f.error.empty()) return "UNREADABLE";
  switch (worst_verdict(f)) {
    case CompatVerdict::cannot_run:
      return "CANNOT RUN";
    case CompatVerdict::jit:
      return "JIT";
    case CompatVerdict::native:
      return "native";
    case CompatVerdict::no_cuda_code:
      break;
  }
  return "no code";
}

}  // namespace

void print_compat_text(const CompatAnswer& a) {
  const CompatReport& r = a.report;
  std::string targets;
  for (const CompatTarget& t : r.targets)
    targets += (targets.empty() ? "" : "; ") + printable(t.name) + " (" + t.cc.sm() + ", " +
               t.source + ")";
  std::string driver = "driver " +
                       (r.driver.release.empty() ? std::string() : r.driver.release + " ") +
                       "(CUDA " + r.driver.cuda.str() + ", PTX ISA up to " +
                       ptx_version_text(r.driver.cuda.ptx) + "; " + r.driver.source + ")";
  command_out() << "targets: " << targets << "\n" << driver;
  if (r.policy != JitPolicy::normal)
    command_out() << (r.policy == JitPolicy::force_ptx_jit ? ", CUDA_FORCE_PTX_JIT=1"
                                                           : ", CUDA_DISABLE_PTX_JIT=1");
  command_out() << "\n";
  std::size_t counts[4] = {0, 0, 0, 0}, unreadable = 0;
  for (const CompatFile* f : shown_files(a)) {
    std::string line = std::string(verdict_word(*f));
    line.resize(std::max<std::size_t>(line.size(), 10), ' ');
    line += "  " + printable(f->path, 4096);
    if (f->package != SIZE_MAX) {
      const CompatPackage& p = r.packages[f->package];
      line +=
          "  [" + printable(p.name) + (p.version.empty() ? "" : " " + printable(p.version)) + "]";
    }
    if (!f->error.empty()) {
      line += ": " + one_line(f->error);
    } else {
      for (std::size_t t = 0; t < r.targets.size(); ++t) {
        line += (t == 0 ? ": " : " | ") + verdict_detail(a, *f, t);
        if (const std::string fix = verdict_fix(a, *f, t); !fix.empty()) line += ". Fix: " + fix;
      }
      if (f->unreadable_entries > 0)
        line += " (" + std::to_string(f->unreadable_entries) + " entries could not be read)";
    }
    command_out() << line << "\n";
  }
  for (const CompatFile& f : r.files) {
    if (!f.error.empty()) {
      ++unreadable;
      continue;
    }
    ++counts[static_cast<int>(worst_verdict(f))];
  }
  const std::size_t with_code = counts[0] + counts[1] + counts[2];
  command_out() << with_code << (with_code == 1 ? " file" : " files")
                << " with CUDA code: " << counts[0] << " cannot run, " << counts[1] << " by JIT, "
                << counts[2] << " native";
  if (unreadable > 0) command_out() << ", " << unreadable << " unreadable";
  command_out() << " (" << r.files_examined << " files examined)";
  if (a.require_native && counts[1] > 0) command_out() << "; --require native: JIT is not enough";
  command_out() << "\n";
}

}  // namespace cudatool::app
