#include "kernels_selection.hpp"

#include <algorithm>

#include "cudatool/base/parallel.hpp"

namespace cudatool::app {

const std::vector<std::string>& kernel_sort_columns() {
  static const std::vector<std::string> columns = {"name",  "regs",    "shared",   "local",
                                                   "const", "threads", "barriers", "occupancy"};
  return columns;
}

namespace {

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
  rows.occupancy.resize(result.kernels.size());
  // Chosen and measured in blocks on all threads, each block writing its own flags.
  std::vector<char> keep(result.kernels.size());
  const std::span<const ScannedKernel> kernels(result.kernels);
  const auto image_of = [&](const ScannedKernel& k) -> const ScannedImage& {
    return result.images[k.image];
  };
  parallel_for_blocks(
      keep.size(), 512, request.jobs, [&](std::size_t, std::size_t begin, std::size_t end) {
        for_each_selected_kernel(request, architectures, kernels.subspan(begin, end - begin),
                                 image_of, [&](std::size_t i, const KernelOccupancy* occupancy) {
                                   keep[begin + i] = 1;
                                   if (occupancy) rows.occupancy[begin + i] = *occupancy;
                                 });
      });
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) rows.shown.push_back(i);
  if (request.sort) sort_rows(result, *request.sort, rows);
  return rows;
}

}  // namespace cudatool::app
