// kernels' request, made from its flags, and the steps its outputs share.
#include <unistd.h>

#include <algorithm>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "kernels_command.hpp"
#include "render.hpp"

namespace cudatool::app {

KernelsRequest make_request(const KernelsOptions& o, const GlobalOptions& global) {
  KernelsRequest request;
  request.format = global.format;
  request.files = o.files;
  // Split here, not by CLI11 (which drops empty entries): "sm_90," is an error, as in
  // compile --arch.
  for (const std::string& list : o.arch_lists)
    for (const std::string& item : split_list(list, "--arch", "sm_80,sm_90"))
      request.scan.arch.push_back(Arch::parse(item, "--arch"));
  if (o.threads) request.threads = parse_block_size(*o.threads, "--threads");
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

ScanProblems report_problems(const ScanResult& result, const Messages& message) {
  ScanProblems problems;
  for (const auto& image : result.images)
    if (!image.error.empty()) {
      message(image.error);
      problems.bad_entry = true;
    }
  for (const auto& f : result.files) {
    if (f.has_cuda_code)
      problems.any_cuda = true;
    else {
      message(f.path + ": " + f.note);
      problems.notes += (problems.notes.empty() ? "" : "; ") + f.path + ": " + f.note;
    }
  }
  return problems;
}

void keep_matching(ScanResult& scan, const KernelsRequest& request) {
  if (!request.pattern) return;
  std::erase_if(scan.kernels, [&](const ScannedKernel& k) { return !request.keeps(k.resources); });
  for (ScannedImage& image : scan.images) image.kernel_count = 0;
  for (const ScannedKernel& k : scan.kernels) ++scan.images[k.image].kernel_count;
}

}  // namespace cudatool::app
