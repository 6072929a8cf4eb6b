// Occupancy of thread-block clusters: how many clusters of a kernel the whole GPU holds at
// once (cuOccupancyMaxActiveClusters) and the largest cluster size that fits
// (cuOccupancyMaxPotentialClusterSize), without a GPU.
//
// The answer depends on how the product's SMs group into GPCs, not on the per-SM figure
// alone: an H200 holds 1,056 blocks of a small kernel (8 per SM on 132 SMs) but only 327
// clusters of 3 and 58 of 16. The rule and each product's GPCs are measured with the driver
// and kept as data (share/cluster_topologies.json, compiled in); a product without a
// measurement has no cluster answer (cluster_topology_for() returns nullptr with the reason),
// never an estimate.
//
// The rule: a cluster's blocks run in one GPC, each on its own SM; a cluster launch holds at
// most max_cluster_blocks_per_sm blocks per SM (8 on Hopper, whatever the per-SM figure); a
// GPC of n SMs holds floor(n * min(b, cap) / c) clusters of c blocks where n >= c.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/occupancy/device_data.hpp"

namespace cudatool {

// A cluster's blocks in X, Y and Z; only their product matters to occupancy.
struct ClusterDims {
  int x = 1, y = 1, z = 1;
  int size() const { return x * y * z; }
  std::array<int, 3> array() const { return {x, y, z}; }
  friend bool operator==(const ClusterDims&, const ClusterDims&) = default;
};

// One product's structure for clusters (a row of share/cluster_topologies.json).
struct ClusterTopology {
  std::string product;                    // "H200"
  std::vector<std::string> device_names;  // cuDeviceGetName's names for it
  ComputeCapability compute_capability;
  int sm_count = 0;
  bool architecture_default = false;  // the part the architecture table's row names
  std::vector<int> gpc_sms;           // per GPC, the SMs a cluster can use
  int max_cluster_blocks_per_sm = 0;
  int max_portable_cluster_size = 0;
  int max_cluster_size = 0;  // with non-portable sizes allowed
  std::string measured;      // where and how
};

// Every product measured, in the table's order.
std::span<const ClusterTopology> known_cluster_topologies();

// The product named `name` (its product name or a device name; case, spaces, '-' and '_'
// ignored: "h100-sxm", "NVIDIA H200"), or nullptr.
const ClusterTopology* find_cluster_topology(std::string_view name);

// The structure `devdata` describes: for a table row, the architecture's default part (with
// its SM count); for a live device, the product of its name, compute capability and SM count.
// nullptr where none is measured, with `reason` saying why (for the output: "the cluster
// answer for ... is unknown: ...").
const ClusterTopology* cluster_topology_for(const DeviceData& devdata, std::string& reason);

// What limits the number of active clusters, in the order they are checked.
//   "cluster_size": the size is above what the kernel may launch (0 clusters; the driver
//                   refuses it: CUDA_ERROR_INVALID_CLUSTER_SIZE);
//   "blocks":       no block of the kernel fits on an SM (0);
//   "gpc":          no GPC has as many SMs as the cluster has blocks (0);
//   "cluster_blocks_per_sm": the cluster launch's per-SM maximum, below the per-SM figure;
//   "occupancy":    the kernel's per-SM figure.
struct ClusterOccupancy {
  ClusterDims cluster;
  int blocks_per_sm = 0;          // the kernel's per-SM figure (OccupancyRecord::tb_per_mp)
  int cluster_blocks_per_sm = 0;  // what a cluster launch holds: min(blocks_per_sm, the cap)
  int max_active_clusters = 0;    // cuOccupancyMaxActiveClusters
  int active_blocks = 0;          // max_active_clusters * cluster size
  int gpcs_used = 0;              // GPCs that hold at least one cluster
  std::string_view limited_by;
};

// The clusters of `cluster` a kernel with `blocks_per_sm` per SM holds on `topology`.
// `non_portable`: the kernel allows non-portable sizes (above max_portable_cluster_size).
// Throws UsageError for a dimension below 1.
ClusterOccupancy cluster_occupancy(const ClusterTopology& topology, int blocks_per_sm,
                                   ClusterDims cluster, bool non_portable);

// The largest cluster size with at least one active cluster (cuOccupancyMaxPotentialClusterSize);
// 0 where no block fits. The driver ignores a kernel's compile-time cluster dimensions here.
int max_potential_cluster_size(const ClusterTopology& topology, int blocks_per_sm,
                               bool non_portable);

// max_active_clusters for every size 1..max (the portable or the non-portable maximum).
std::vector<ClusterOccupancy> sweep_cluster_sizes(const ClusterTopology& topology,
                                                  int blocks_per_sm, bool non_portable);

}  // namespace cudatool
