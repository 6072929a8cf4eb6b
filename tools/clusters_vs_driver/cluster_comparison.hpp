// The offline cluster answer (occupancy/cluster_occupancy.hpp, on the architecture table's
// per-SM figure) against a record of the driver's own answers (record_clusters.cu's JSON:
// cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveClusters and
// cuOccupancyMaxPotentialClusterSize over kernels, block sizes, shared memory, cluster sizes
// and shapes, and where co-resident clusters ran). Zero differences is the bar. Used by
// tools/clusters_vs_driver (on a GPU, right after recording) and by the unit test
// ClusterComparison.* over the records in tests/data/clusters (no GPU).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace cudatool::tools {

struct ClusterComparisonCounts {
  std::size_t kernels = 0;
  std::size_t per_sm = 0;           // per-SM figures compared
  std::size_t active_clusters = 0;  // cuOccupancyMaxActiveClusters answers compared
  std::size_t potential_sizes = 0;  // cuOccupancyMaxPotentialClusterSize answers compared
  std::size_t placements = 0;       // launches whose placement was checked
  std::size_t differences = 0;
  std::string device;   // the record's device name
  std::string product;  // the product whose GPCs answered
};

// Compares the record in `text` (its name `source` for messages). Prints each difference (up
// to `max_printed`) and a summary line to `log`. Throws Error for a document that is not a
// record, or a device no product of the table matches.
ClusterComparisonCounts compare_cluster_record(const std::string& text, const std::string& source,
                                               std::ostream& log, std::size_t max_printed = 30);

}  // namespace cudatool::tools
