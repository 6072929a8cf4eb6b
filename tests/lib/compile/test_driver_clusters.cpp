// The driver's own cluster answers for a stand-in kernel (lib/src/compile/driver_clusters.cpp).
// Without the entry points (the fake driver, as a driver of CUDA 11.8 and earlier) it is a
// requirement unmet; on a GPU of compute capability 9.0 and later (DriverClustersGpu, skipped
// elsewhere) the stand-in has the blocks per SM asked for, and the driver's answers keep its
// own rules: a cluster of one block is one block, sizes above 8 only where non-portable sizes
// are allowed, and the answer for the launch's clusters is the answer for that size.
// tests/lib/occupancy/test_cluster_occupancy_gpu.cpp compares the answers with the model.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/compile/driver_clusters.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "device/cuda_attribute.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

TEST(DriverClusters, ADriverWithoutTheClusterQueriesIsARequirementUnmet) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const Context context(Device(0));
    try {
      driver_cluster_occupancy(context, 1, 2, 1, 1, false, 8);
      c.expect(false, "the fake driver has no cuOccupancyMaxActiveClusters");
    } catch (const RequirementError& e) {
      c.expect(std::string(e.what()).find("cuOccupancyMaxActiveClusters") != std::string::npos,
               e.what());
    }
  });
}

class DriverClustersGpu : public testing::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (device().compute_capability().major < 9)
      GTEST_SKIP() << "no thread-block clusters before compute capability 9.0";
  }
  int sms() const {
    return device().get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  }
};

TEST_F(DriverClustersGpu, TheStandInHasTheBlocksAskedForAndOneBlockClustersFillEverySm) {
  const Context context(device());
  for (const int blocks : {1, 2, 3, 8}) {
    const auto d = driver_cluster_occupancy(context, blocks, 2, 1, 1, false, 8);
    EXPECT_EQ(d.stand_in_blocks_per_sm, blocks);
    ASSERT_EQ(d.by_size.size(), 8u);
    // A cluster of one block is a block: every SM holds `blocks` of them.
    EXPECT_EQ(d.by_size[0], sms() * blocks) << blocks << " blocks per SM";
    for (std::size_t size = 1; size <= d.by_size.size(); ++size)
      EXPECT_LE(d.by_size[size - 1] * static_cast<int>(size), sms() * blocks)
          << "clusters of " << size << " at " << blocks << " blocks per SM";
    // The launch's own clusters (2 x 1 x 1) are answered as clusters of size 2.
    EXPECT_EQ(d.max_active_clusters, d.by_size[1]) << blocks;
    EXPECT_GE(d.max_potential_cluster_size, 1);
    EXPECT_LE(d.max_potential_cluster_size, 8) << "portable sizes only";
  }
}

TEST_F(DriverClustersGpu, SizesAboveEightOnlyWhereNonPortableSizesAreAllowed) {
  const Context context(device());
  const auto portable = driver_cluster_occupancy(context, 1, 16, 1, 1, false, 16);
  EXPECT_EQ(portable.max_active_clusters, 0) << "16 is not a portable size";
  for (std::size_t size = 9; size <= 16; ++size) EXPECT_EQ(portable.by_size[size - 1], 0) << size;
  const auto any = driver_cluster_occupancy(context, 1, 16, 1, 1, true, 16);
  EXPECT_EQ(any.max_active_clusters, any.by_size[15]);
  EXPECT_GE(any.max_potential_cluster_size, portable.max_potential_cluster_size);
  EXPECT_LE(any.max_potential_cluster_size, 16);
  // The answers for sizes up to 8 do not depend on the permission.
  for (std::size_t size = 1; size <= 8; ++size)
    EXPECT_EQ(any.by_size[size - 1], portable.by_size[size - 1]) << size;
}

TEST_F(DriverClustersGpu, BlocksAndDimensionsOutOfRangeAreUsageErrors) {
  const Context context(device());
  EXPECT_THROW(driver_cluster_occupancy(context, 0, 2, 1, 1, false, 1), UsageError);
  EXPECT_THROW(driver_cluster_occupancy(context, 33, 2, 1, 1, false, 1), UsageError);
  EXPECT_THROW(driver_cluster_occupancy(context, 1, 0, 1, 1, false, 1), UsageError);
  EXPECT_THROW(driver_cluster_occupancy(context, 1, 2, 1, -1, false, 1), UsageError);
}

}  // namespace
}  // namespace cudatool
