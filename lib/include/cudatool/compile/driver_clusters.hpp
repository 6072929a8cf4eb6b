// The driver's own cluster answers on a live device (cuOccupancyMaxActiveClusters,
// cuOccupancyMaxPotentialClusterSize), for `occupancy --device --cluster`.
//
// The driver answers for a loaded kernel. A launch given as numbers (threads, registers,
// shared memory) has no kernel, so the question is put for a stand-in: an empty PTX kernel
// (JIT-compiled by the driver, no NVRTC), one warp per block, with the dynamic shared memory
// that makes the driver's own per-SM figure for it equal the launch's. The driver's cluster
// answers depend on the kernel only through that figure: 52,060 answers recorded on two H200 boards
// over 13 kernels (8 to 252 registers, static and dynamic shared memory, compile-time
// cluster dimensions) agree with it (tests/data/clusters, tools/clusters_vs_driver).
#pragma once

#include <vector>

#include "cudatool/device/context.hpp"

namespace cudatool {

struct DriverClusterAnswer {
  int stand_in_blocks_per_sm = 0;      // the driver's per-SM figure for the stand-in
  int stand_in_shared_memory = 0;      // its dynamic shared memory, bytes
  int max_active_clusters = 0;         // cuOccupancyMaxActiveClusters
  int max_potential_cluster_size = 0;  // cuOccupancyMaxPotentialClusterSize
  std::vector<int> by_size;  // max_active_clusters for clusters of 1..sizes blocks (X only)
};

// For a launch of `blocks_per_sm` blocks per SM (1..32) and clusters of x*y*z blocks, on
// `context`'s device, and for every size 1..`sizes`; `non_portable`: sizes above 8 allowed. Throws
// the driver's error (RequirementError where the driver lacks the entry points, CUDA 11.8 and
// earlier) and RuntimeError where no shared-memory size gives the stand-in that figure.
DriverClusterAnswer driver_cluster_occupancy(const Context& context, int blocks_per_sm, int x,
                                             int y, int z, bool non_portable, int sizes);

}  // namespace cudatool
