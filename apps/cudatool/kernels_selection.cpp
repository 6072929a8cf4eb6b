#include "kernels_selection.hpp"

#include <algorithm>
#include <numeric>

#include "cudatool/base/parallel.hpp"

namespace cudatool::app {

const std::vector<std::string>& kernel_sort_columns() {
  static const std::vector<std::string> columns = {"name",  "regs",    "shared",   "local",
                                                   "const", "threads", "barriers", "occupancy"};
  return columns;
}

namespace {

// The names are matched in blocks on all threads, each block writing its own flags.
std::vector<std::size_t> kept_kernels(const ScanResult& result, const KernelsRequest& request) {
  std::vector<std::size_t> shown;
  if (!request.pattern) {
    shown.resize(result.kernels.size());
    std::iota(shown.begin(), shown.end(), std::size_t{0});
    return shown;
  }
  std::vector<char> keep(result.kernels.size());
  parallel_for_blocks(keep.size(), 256, request.jobs,
                      [&](std::size_t, std::size_t begin, std::size_t end) {
                        for (std::size_t i = begin; i < end; ++i)
                          keep[i] = request.keeps(result.kernels[i].resources);
                      });
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) shown.push_back(i);
  return shown;
}

void sort_rows(const ScanResult& result, const std::string& column, KernelRows& rows) {
  const auto key = [&](std::size_t i) -> long long {
    const auto& k = result.kernels[i].resources;
    if (column == "regs") return k.num_regs;
    if (column == "shared") return k.shared_size_bytes;
    if (column == "local") return k.local_size_bytes;
    if (column == "const") return k.const_size_bytes;
    if (column == "threads") return k.max_threads_per_block;
    if (column == "barriers") return k.num_barriers;
    const auto& r = rows.occupancy[i].record;
    return r ? static_cast<long long>(r->occupancy * 1e6) : -1;
  };
  std::stable_sort(rows.shown.begin(), rows.shown.end(), [&](std::size_t a, std::size_t b) {
    if (column == "name")
      return result.kernels[a].resources.demangled < result.kernels[b].resources.demangled;
    return key(a) > key(b);
  });
}

}  // namespace

KernelRows select_kernels(const ScanResult& result, const KernelsRequest& request,
                          ArchitectureTable& architectures) {
  KernelRows rows;
  rows.shown = kept_kernels(result, request);
  rows.occupancy.resize(result.kernels.size());
  if (request.threads)
    parallel_for_blocks(
        rows.shown.size(), 512, request.jobs, [&](std::size_t, std::size_t begin, std::size_t end) {
          for (std::size_t n = begin; n < end; ++n) {
            const std::size_t i = rows.shown[n];
            const ScannedKernel& k = result.kernels[i];
            const ScannedImage& image = result.images[k.image];
            rows.occupancy[i] =
                occupancy_for_kernel(architectures, image.arch.value_or(Arch{}), k.resources,
                                     k.bounds, image.relocatable, *request.threads);
          }
        });
  if (request.sort) sort_rows(result, *request.sort, rows);
  return rows;
}

}  // namespace cudatool::app
