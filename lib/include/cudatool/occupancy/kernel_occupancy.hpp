// The occupancy of one compiled kernel at a block size: the one answer `compile --threads`,
// `kernels --threads` and `occupancy --kernel-from` give.
//
// In this order, the first that applies decides:
//   1. relocatable code (-dc, ET_REL): no occupancy, its resources are final only after the
//      device link;
//   2. a required block size (EIATTR_REQNTID, PTX's .reqntid): only exactly that many
//      threads;
//   3. more threads than the kernel allows (EIATTR_MAX_THREADS from __launch_bounds__, or
//      its registers);
//   4. an architecture cudatool's table does not have, or has with gaps (occupancy_unknown):
//      no occupancy, the reason says which;
//   5. otherwise the OccupancyRecord for the kernel's registers, static shared memory and
//      barriers. The min-blocks of __launch_bounds__ only bounded the registers the
//      compiler chose, which the record reads. The per-SM count is the one
//      cuOccupancyMaxActiveBlocksPerMultiprocessor gives;
//   6. a kernel with compile-time cluster dimensions (__cluster_dims__, .reqnctapercluster)
//      also gets the clusters the whole GPU holds (cluster_occupancy.hpp), or the reason
//      there is no such answer (a product whose GPCs nobody measured).
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "cudatool/binary/cubin.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"

namespace cudatool {

struct KernelOccupancy {
  int threads = 0;
  std::optional<OccupancyRecord> record;
  std::string reason;  // why record is empty
  // Step 6, for a kernel with compile-time cluster dimensions and a record: the clusters,
  // or the reason they are unknown.
  std::optional<ClusterOccupancy> clusters;
  std::string cluster_reason;
};

// Step 6 alone: fills `o.clusters` or `o.cluster_reason` from `o.record` for a kernel
// compiled with `cluster` dimensions (compile-time dimensions above the portable size are
// taken as allowed, as the compiler accepted them).
void apply_cluster_dims(KernelOccupancy& o, const DeviceData& devdata,
                        const std::optional<std::array<int, 3>>& cluster);

// Steps 1-3: why `threads` per block cannot run this kernel on any GPU, or nullopt.
std::optional<std::string> block_size_problem(const KernelResources& kernel,
                                              const KernelBounds& bounds, bool relocatable,
                                              int threads);

// Steps 1-5 on `devdata` (a table row or a live device).
KernelOccupancy occupancy_for_kernel(const DeviceData& devdata, const KernelResources& kernel,
                                     const KernelBounds& bounds, bool relocatable, int threads);

// The architecture table's DeviceData per architecture, made once each; safe to use from
// several threads (kernels renders images as they are read).
class ArchitectureTable {
 public:
  // nullptr and `reason` where the table has no row for `arch`.
  const DeviceData* find(const Arch& arch, std::string& reason);

 private:
  struct Entry {
    std::optional<DeviceData> data;
    std::string reason;
  };
  std::mutex mutex_;
  std::map<Arch, Entry> entries_;  // entries never move once made
};

// Steps 1-5 for an image of architecture `arch` (sm_90a), from the table.
KernelOccupancy occupancy_for_kernel(ArchitectureTable& table, const Arch& arch,
                                     const KernelResources& kernel, const KernelBounds& bounds,
                                     bool relocatable, int threads);

}  // namespace cudatool
