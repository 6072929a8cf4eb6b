// compat's words for a file's verdict on a target: what runs and how (verdict_detail), and
// what would make it run (verdict_fix); the text and the JSON both show them.
#include <string>
#include <vector>

#include "compat_report.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"

namespace cudatool::app {
namespace {

std::string arch_list(const std::vector<Arch>& archs) {
  std::string text;
  for (const Arch& a : archs) text += (text.empty() ? "" : ", ") + a.str();
  return text;
}

std::string containers_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " container" : " containers");
}

}  // namespace

std::string verdict_detail(const CompatAnswer& a, const CompatFile& file, std::size_t target) {
  const CompatFileTarget& v = file.targets[target];
  const std::string on = "on " + a.report.targets[target].cc.sm();
  const std::size_t total = file.containers;
  std::string text;
  switch (v.verdict) {
    case CompatVerdict::no_cuda_code:
      if (v.empty > 0)
        return "no kernel for " + a.report.targets[target].cc.sm() +
               " to run: " + containers_text(v.empty) + " for other GPUs hold no kernels";
      return file.note.empty() ? "no CUDA code" : file.note;
    case CompatVerdict::native:
      text = "native " + on + ": " + containers_text(v.native) + " from SASS";
      break;
    case CompatVerdict::jit:
      text = "JIT " + on + ": " + std::to_string(v.jit) + " of " +
             containers_text(v.native + v.jit) + " only by JIT-compiling PTX (" +
             format_bytes(v.jit_ptx_bytes) +
             " of PTX at the first launch of each process whose JIT cache lacks it; the cache "
             "holds CUDA_CACHE_MAXSIZE bytes)";
      break;
    case CompatVerdict::cannot_run: {
      text = "cannot run " + on + ": ";
      switch (v.gap) {
        case CompatGap::predates:
          text += std::to_string(v.failed) + " of " + containers_text(total) +
                  " hold only code for older GPUs (SASS " +
                  (file.sass.empty() ? "none" : arch_list(file.sass)) + "; PTX " +
                  (file.ptx.empty() ? "none" : arch_list(file.ptx)) + ")";
          break;
        case CompatGap::other_gpus_only:
          text += std::to_string(v.failed) + " of " + containers_text(total) +
                  " hold only code for other GPUs (SASS " +
                  (file.sass.empty() ? "none" : arch_list(file.sass)) + "; PTX " +
                  (file.ptx.empty() ? "none" : arch_list(file.ptx)) + ")";
          break;
        case CompatGap::ptx_too_new:
          text += std::to_string(v.failed) + " of " + containers_text(total) +
                  " have only PTX of ISA " + ptx_version_text(*v.ptx_needed) +
                  " or newer, which this driver (CUDA " + a.report.driver.cuda.str() +
                  ", PTX ISA up to " + ptx_version_text(a.report.driver.cuda.ptx) +
                  ") cannot compile";
          break;
        case CompatGap::jit_disabled:
          text += std::to_string(v.failed) + " of " + containers_text(total) +
                  " run only by JIT, which CUDA_DISABLE_PTX_JIT turns off";
          break;
        case CompatGap::not_loadable:
          text += "its " + containers_text(total) + " hold nothing the driver loads (LTO-IR " +
                  (file.lto_ir.empty() ? "none" : arch_list(file.lto_ir)) +
                  ", for a JIT link by the program itself, or damaged entries)";
          break;
        case CompatGap::runtime_too_new: {
          std::string libs;
          for (const std::string& l : file.cuda_runtimes) libs += (libs.empty() ? "" : ", ") + l;
          text +=
              "it links " + libs + ", newer than the driver's CUDA " + a.report.driver.cuda.str();
          break;
        }
        case CompatGap::none:
          text += std::to_string(v.failed) + " containers";
          break;
      }
      break;
    }
  }
  if (!v.kernels.empty()) {
    text += " (kernels: ";
    for (std::size_t k = 0; k < v.kernels.size() && k < 3; ++k)
      text += (k ? ", " : "") + printable(v.kernels[k], 80);
    if (v.kernels.size() > 3) text += " and " + std::to_string(v.kernels.size() - 3) + " more";
    text += ")";
  }
  if (v.other_gpus > 0)
    text +=
        "; " + std::to_string(v.other_gpus) + " more hold only code for other GPUs (not used here)";
  if (v.unloadable > 0 && v.gap != CompatGap::not_loadable)
    text += "; " + containers_text(v.unloadable) +
            " of LTO-IR only, for the program's own JIT link (not loaded by the driver)";
  if (v.empty > 0) text += "; " + containers_text(v.empty) + " without kernels for other GPUs only";
  return text;
}

std::string verdict_fix(const CompatAnswer& a, const CompatFile& file, std::size_t target) {
  const CompatFileTarget& v = file.targets[target];
  const ComputeCapability cc = a.report.targets[target].cc;
  if (v.verdict != CompatVerdict::cannot_run) return "";
  switch (v.gap) {
    case CompatGap::predates:
    case CompatGap::other_gpus_only:
    case CompatGap::not_loadable:
      return "needs a build with " + cc.sm() + " SASS or PTX of compute_" +
             std::to_string(cc.major * 10 + cc.minor) + " or older";
    case CompatGap::ptx_too_new:
      if (const CudaRelease* r = first_release_for_ptx(*v.ptx_needed))
        return "upgrade the driver to " + r->driver + " or newer (CUDA " + r->str() + ")";
      return "upgrade the driver to one that compiles PTX ISA " + ptx_version_text(*v.ptx_needed);
    case CompatGap::jit_disabled:
      return "unset CUDA_DISABLE_PTX_JIT, or use a build with " + cc.sm() + " SASS";
    case CompatGap::runtime_too_new:
      for (const std::string& lib : file.cuda_runtimes) {
        const std::string major = lib.substr(std::min<std::size_t>(13, lib.size()));
        for (const CudaRelease& r : cuda_releases())
          if (std::to_string(r.major) == major.substr(0, major.find('.')))
            return "upgrade the driver to " + r.driver + " or newer (CUDA " + r.str() + ")";
      }
      return "upgrade the driver";
    case CompatGap::none:
      break;
  }
  return "";
}

}  // namespace cudatool::app
