// `cudatool kernels`' offline answer against the driver, for any binaries: every image
// that a device of the current context's architecture can load (sm_90 and sm_90a on an
// H100) is handed to the driver (cuModuleLoadData), every function the module enumerates
// is loaded (cuFuncLoad: under lazy loading enumerated functions are not loaded yet) and
// compared with the offline reading: the five cuFuncGetAttribute values and
// cuOccupancyMaxActiveBlocksPerMultiprocessor at several block sizes against the offline
// table's occupancy. Zero differences is the bar. Used by tools/kernels_vs_driver (any
// files) and by the GPU test KernelsGpu.* (several toolkit libraries).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "cudatool/device/context.hpp"

namespace cudatool::tools {

struct ComparisonCounts {
  std::size_t images = 0;               // loaded and compared
  std::size_t relocatable_images = 0;   // -dc code: not loadable as it is, not compared
  std::size_t not_loadable_images = 0;  // the driver refused the image (printed)
  std::size_t unreadable_images = 0;    // cudatool could not read the image (printed)
  std::size_t kernels = 0;              // compared
  std::size_t by_enumeration = 0;       // of those, compared through the enumerated handle
  std::size_t not_comparable = 0;       // enumerated, but the driver cannot load them
  std::size_t occupancy_checks = 0;
  std::size_t differences = 0;
  std::size_t shared_reserve_rule = 0;  // kernels whose shared size had the reserve taken off
  ComparisonCounts& operator+=(const ComparisonCounts& o);
};

// Compares every loadable image of `path` for the architecture of `context`'s device.
// Prints each difference (up to `max_printed` per file) and a summary line to `log`.
// Throws for a file that cannot be read at all.
ComparisonCounts compare_file_with_driver(const std::string& path, const Context& context,
                                          std::ostream& log, std::size_t max_printed = 30);

}  // namespace cudatool::tools
