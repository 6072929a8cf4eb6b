// Cluster occupancy without a GPU: the rule over the measured products, against the driver's
// answers recorded on an H200 (tests/data/clusters, made by
// tools/clusters_vs_driver/record_clusters.cu), the figures issue 36 quotes, the limits and
// the products without a measurement.
#include "cudatool/occupancy/cluster_occupancy.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>

#include "cluster_comparison.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "cudatool/occupancy/occupancy.hpp"

namespace cudatool {
namespace {

const ClusterTopology& h200() {
  const ClusterTopology* t = find_cluster_topology("H200");
  EXPECT_NE(t, nullptr);
  return *t;
}

TEST(ClusterOccupancy, TheTableIsWholeAndFoundByAnyOfItsNames) {
  ASSERT_GE(known_cluster_topologies().size(), 2u);
  for (const auto& t : known_cluster_topologies()) {
    EXPECT_EQ(std::accumulate(t.gpc_sms.begin(), t.gpc_sms.end(), 0), t.sm_count) << t.product;
    EXPECT_TRUE(std::is_sorted(t.gpc_sms.rbegin(), t.gpc_sms.rend())) << t.product;
    EXPECT_FALSE(t.measured.empty()) << t.product;
    EXPECT_EQ(find_cluster_topology(t.product), &t);
    for (const auto& name : t.device_names) EXPECT_EQ(find_cluster_topology(name), &t);
  }
  EXPECT_EQ(find_cluster_topology("nvidia h200"), &h200());
  EXPECT_EQ(find_cluster_topology("h100-sxm"), find_cluster_topology("H100 SXM"));
  EXPECT_EQ(find_cluster_topology("H100 PCIe"), nullptr);
  EXPECT_EQ(find_cluster_topology(""), nullptr);
}

// Issue 36: 8 registers, 256 threads, no shared memory (8 blocks per SM on 132 SMs).
TEST(ClusterOccupancy, TheIssuesFiguresAtEightBlocksPerSm) {
  const OccupancyRecord record(DeviceData(Arch::parse("sm_90", "test")), 256, 0, 8);
  ASSERT_EQ(record.tb_per_mp, 8);
  for (const auto& [size, clusters] :
       {std::pair{1, 1056}, std::pair{2, 528}, std::pair{3, 327}, std::pair{16, 58}}) {
    const auto c = cluster_occupancy(h200(), record.tb_per_mp, {size, 1, 1}, true);
    EXPECT_EQ(c.max_active_clusters, clusters) << size;
    EXPECT_EQ(c.active_blocks, clusters * size) << size;
  }
  // 16: only the GPCs of 16 and 18 SMs hold one (8 x 16 / 16 and 8 x 18 / 16).
  EXPECT_EQ(cluster_occupancy(h200(), 8, {16, 1, 1}, true).gpcs_used, 7);
  // Shapes count by their product.
  EXPECT_EQ(cluster_occupancy(h200(), 8, {2, 2, 1}, false).max_active_clusters,
            cluster_occupancy(h200(), 8, {4, 1, 1}, false).max_active_clusters);
}

TEST(ClusterOccupancy, ACapOfEightBlocksPerSmInAClusterLaunch) {
  const auto at8 = cluster_occupancy(h200(), 8, {1, 1, 1}, false);
  const auto at32 = cluster_occupancy(h200(), 32, {1, 1, 1}, false);
  EXPECT_EQ(at32.max_active_clusters, at8.max_active_clusters);
  EXPECT_EQ(at32.cluster_blocks_per_sm, 8);
  EXPECT_EQ(at32.limited_by, "cluster_blocks_per_sm");
  EXPECT_EQ(at8.limited_by, "occupancy");
  // One block per SM: one cluster of c per c SMs of a GPC.
  EXPECT_EQ(cluster_occupancy(h200(), 1, {9, 1, 1}, true).max_active_clusters, 9);
  EXPECT_EQ(cluster_occupancy(h200(), 1, {16, 1, 1}, true).max_active_clusters, 7);
}

TEST(ClusterOccupancy, WhatLimitsAndTheLargestSize) {
  const auto above = cluster_occupancy(h200(), 8, {9, 1, 1}, false);
  EXPECT_EQ(above.max_active_clusters, 0);
  EXPECT_EQ(above.limited_by, "cluster_size");
  EXPECT_EQ(cluster_occupancy(h200(), 8, {17, 1, 1}, true).limited_by, "cluster_size");
  EXPECT_EQ(cluster_occupancy(h200(), 0, {2, 1, 1}, false).limited_by, "blocks");
  EXPECT_THROW(cluster_occupancy(h200(), 8, {0, 1, 1}, false), UsageError);
  EXPECT_EQ(max_potential_cluster_size(h200(), 8, false), 8);
  EXPECT_EQ(max_potential_cluster_size(h200(), 1, true), 16);
  EXPECT_EQ(max_potential_cluster_size(h200(), 0, true), 0);
  // A product whose largest GPC is smaller than the size asked: "gpc".
  ClusterTopology small = h200();
  small.gpc_sms = {10, 10};
  small.sm_count = 20;
  const auto none = cluster_occupancy(small, 4, {12, 1, 1}, true);
  EXPECT_EQ(none.max_active_clusters, 0);
  EXPECT_EQ(none.limited_by, "gpc");
  EXPECT_EQ(max_potential_cluster_size(small, 4, true), 10);
  const auto sweep = sweep_cluster_sizes(h200(), 8, true);
  ASSERT_EQ(sweep.size(), 16u);
  EXPECT_EQ(sweep[2].max_active_clusters, 327);
}

TEST(ClusterOccupancy, WhichProductAnswersAndWhereNoneIsMeasured) {
  std::string reason;
  EXPECT_EQ(cluster_topology_for(DeviceData(Arch::parse("sm_90a", "test")), reason), &h200());
  EXPECT_EQ(cluster_topology_for(DeviceData(Arch::parse("sm_100", "test")), reason), nullptr);
  EXPECT_NE(reason.find("unknown"), std::string::npos) << reason;
  EXPECT_EQ(cluster_topology_for(DeviceData(Arch::parse("sm_80", "test")), reason), nullptr);
  EXPECT_NE(reason.find("no thread-block clusters"), std::string::npos) << reason;
  // Another SM count is another product, whose GPCs nobody measured.
  DeviceData other(Arch::parse("sm_90", "test"));
  other.set_sm_count(114);
  EXPECT_EQ(cluster_topology_for(other, reason), nullptr);
  EXPECT_NE(reason.find("114 SMs"), std::string::npos) << reason;
}

// Step 6 of the one kernel-occupancy function: compile-time cluster dimensions.
TEST(ClusterOccupancy, KernelsWithCompileTimeClusterDims) {
  KernelResources kernel;
  kernel.num_regs = 8;
  kernel.max_threads_per_block = 1024;
  kernel.num_barriers = 1;
  KernelBounds bounds;
  bounds.cluster = std::array<int, 3>{3, 1, 1};
  ArchitectureTable table;
  const auto o =
      occupancy_for_kernel(table, *Arch::try_parse("sm_90a"), kernel, bounds, false, 256);
  ASSERT_TRUE(o.record);
  ASSERT_TRUE(o.clusters);
  EXPECT_EQ(o.clusters->max_active_clusters, 327);
  const auto b =
      occupancy_for_kernel(table, *Arch::try_parse("sm_100a"), kernel, bounds, false, 256);
  ASSERT_TRUE(b.record);
  EXPECT_FALSE(b.clusters);
  EXPECT_NE(b.cluster_reason.find("unknown"), std::string::npos);
  bounds.cluster.reset();
  const auto plain =
      occupancy_for_kernel(table, *Arch::try_parse("sm_90"), kernel, bounds, false, 256);
  EXPECT_FALSE(plain.clusters);
  EXPECT_TRUE(plain.cluster_reason.empty());
}

// Every record of the driver's answers kept in tests/data/clusters: 0 differences.
TEST(ClusterComparison, TheRecordedDriverAnswersAllAgree) {
  const std::filesystem::path dir =
      std::filesystem::path(CUDATOOL_SOURCE_DIR) / "tests/data/clusters";
  std::size_t records = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++records;
    std::ostringstream log;
    const auto counts = tools::compare_cluster_record(read_input_file(entry.path(), "record"),
                                                      entry.path().filename().string(), log);
    EXPECT_EQ(counts.differences, 0u) << log.str();
    EXPECT_GT(counts.active_clusters, 50000u) << log.str();
    EXPECT_GT(counts.per_sm, 3000u) << log.str();
    EXPECT_GT(counts.placements, 0u) << log.str();
  }
  EXPECT_GE(records, 1u);
}

// The comparison can fail: a record whose answer is changed shows the difference.
TEST(ClusterComparison, AChangedAnswerIsADifference) {
  const auto path =
      std::filesystem::path(CUDATOOL_SOURCE_DIR) / "tests/data/clusters/h200-driver-580.json";
  std::string text = read_input_file(path, "record");
  const auto at = text.find(", 327, 248,") + 2;
  ASSERT_NE(at, std::string::npos + 2);
  text.replace(at, 3, "352");
  std::ostringstream log;
  const auto counts = tools::compare_cluster_record(text, "changed", log);
  EXPECT_GE(counts.differences, 1u);
  EXPECT_NE(log.str().find("driver 352, offline 327"), std::string::npos) << log.str();
  EXPECT_THROW(tools::compare_cluster_record("{}", "empty", log), Error);
  EXPECT_THROW(tools::compare_cluster_record("not json", "bad", log), Error);
}

}  // namespace
}  // namespace cudatool
