// Cluster occupancy against the driver on a real GPU (skipped without one): the driver's
// own answers through the stand-in kernel (compile/driver_clusters.hpp) for every per-SM
// figure 1..32 and every cluster size 1..16, against the measured GPCs of the device's
// product where cudatool's table has it (H200, H100 SXM); where it does not, the driver's
// answers must still obey the rule's bounds (no more clusters than blocks allow).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "cudatool/compile/driver_clusters.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

class ClusterOccupancyGpu : public testing::GpuTest {};

TEST_F(ClusterOccupancyGpu, TheDriverAgreesWithTheMeasuredGpcs) {
  CUDATOOL_REQUIRE_DEVICES(1);
  const DeviceData live(device());
  if (live.properties().compute_capability.major < 9)
    GTEST_SKIP() << "no thread-block clusters before compute capability 9.0";
  std::string reason;
  const ClusterTopology* topology = cluster_topology_for(live, reason);
  const Context context(device());
  int compared = 0;
  for (int blocks = 1; blocks <= 32; ++blocks) {
    const auto d = driver_cluster_occupancy(context, blocks, 2, 2, 1, true, 16);
    ASSERT_EQ(d.stand_in_blocks_per_sm, blocks);
    ASSERT_EQ(d.by_size.size(), 16u);
    for (int size = 1; size <= 16; ++size) {
      const int driver = d.by_size[static_cast<std::size_t>(size - 1)];
      const int sms = *live.properties().sm_count;
      EXPECT_LE(driver * size, sms * blocks) << size << " at " << blocks;
      if (!topology) continue;
      EXPECT_EQ(driver,
                cluster_occupancy(*topology, blocks, {size, 1, 1}, true).max_active_clusters)
          << "clusters of " << size << " at " << blocks << " blocks per SM on "
          << topology->product;
      ++compared;
    }
    if (topology) {
      EXPECT_EQ(d.max_active_clusters,
                cluster_occupancy(*topology, blocks, {2, 2, 1}, true).max_active_clusters);
      EXPECT_EQ(d.max_potential_cluster_size, max_potential_cluster_size(*topology, blocks, true));
    }
  }
  if (!topology) std::cout << "no measured GPCs for this device: " << reason << '\n';
  std::cout << compared << " driver cluster answers compared with the measured GPCs\n";
}

}  // namespace
}  // namespace cudatool
