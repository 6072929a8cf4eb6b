// What `cudatool kernels` was asked (its flags, checked) and which kernels it shows: those
// the --kernel pattern keeps, each with its occupancy under --threads, in --sort order.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/binary/kernel_filter.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"

namespace cudatool::app {

struct KernelsRequest {
  std::vector<std::string> files;
  ScanOptions scan;  // --arch, --relocatable, --jobs
  std::optional<KernelNameFilter> pattern;
  std::optional<int> threads;       // --threads: add each kernel's occupancy
  std::optional<std::string> sort;  // a column of kernel_sort_columns()
  unsigned jobs = 0;                // worker threads; 0 for one per CPU
  Format format = Format::text;
  bool wide = false;      // whole names on a terminal too
  bool progress = false;  // a progress bar on stderr

  // Whether --kernel keeps this kernel (safe to call from several threads).
  bool keeps(const KernelResources& kernel) const { return !pattern || pattern->matches(kernel); }
};

// The one choice every output of `kernels` makes (the JSON streamed while the scan reads,
// select_kernels for --sort, text and CSV): each(i, occupancy) for every kernels[i] that
// --kernel keeps, with its occupancy on its image's architecture under --threads (nullptr
// otherwise). `image_of(kernel)` is the kernel's image. Safe to call from several threads.
template <class ImageOf, class Each>
void for_each_selected_kernel(const KernelsRequest& request, ArchitectureTable& architectures,
                              std::span<const ScannedKernel> kernels, ImageOf&& image_of,
                              Each&& each) {
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const ScannedKernel& k = kernels[i];
    if (!request.keeps(k.resources)) continue;
    if (!request.threads) {
      each(i, static_cast<const KernelOccupancy*>(nullptr));
      continue;
    }
    const ScannedImage& image = image_of(k);
    // An image with kernels is a CUBIN, which always has an architecture.
    const KernelOccupancy occupancy =
        occupancy_for_kernel(architectures, image.arch.value_or(Arch{}), k.resources, k.bounds,
                             image.relocatable, *request.threads);
    each(i, &occupancy);
  }
}

// The columns --sort takes: numeric ones largest first, the name alphabetically.
const std::vector<std::string>& kernel_sort_columns();

// The kernels to show, chosen, measured and sorted on all threads (not under --json in image
// order, which renders each image's kernels as they are read: kernels_json.hpp).
struct KernelRows {
  std::vector<std::size_t> shown;          // indices into ScanResult::kernels, in order
  std::vector<KernelOccupancy> occupancy;  // by kernel index, under --threads
};
KernelRows select_kernels(const ScanResult& result, const KernelsRequest& request,
                          ArchitectureTable& architectures);

}  // namespace cudatool::app
