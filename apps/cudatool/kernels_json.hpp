// `kernels --json` (share/schemas/kernels.schema.json): the files, the images and the
// kernels, streamed (json_stream.hpp) rather than built as a tree, so that a library of
// 45,000 kernels costs no more than its text. In image order (no --sort) the kernels array
// is rendered while the scan reads: each image's kernels on the thread that read it.
#pragma once

#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "kernels_selection.hpp"

namespace cudatool::app {

// The kernels array, made image by image as the scan reads them (ScanOptions::on_image).
class KernelsJsonWhileReading {
 public:
  KernelsJsonWhileReading(const KernelsRequest& request, ArchitectureTable& architectures)
      : request_(request), architectures_(architectures) {}

  // One image's kernels, filtered, measured and rendered; called on the scan's threads.
  void add(const ImageKernels& image);
  // The array, in image order, each image's text freed once written.
  void write(std::ostream& out);

 private:
  const KernelsRequest& request_;
  ArchitectureTable& architectures_;
  std::mutex mutex_;
  std::vector<std::pair<std::size_t, std::string>> rendered_;  // (image, its kernels' text)
};

// The whole document. `while_reading` holds the kernels array where it was made during the
// scan; otherwise the kernels are `rows` (select_kernels), rendered on all threads.
void print_kernels_json(const ScanResult& result, const KernelRows& rows,
                        const KernelsRequest& request, KernelsJsonWhileReading* while_reading,
                        std::ostream& out);

}  // namespace cudatool::app
