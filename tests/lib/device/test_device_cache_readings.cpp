// The device cache's rules over NVML's live readings (lib/src/device/device_cache_readings.hpp):
// which reading an answer depends on, MIG mode, and when two sets of readings are the same.
#include "device/device_cache_readings.hpp"

#include <cuda.h>
#include <gtest/gtest.h>

namespace cudatool::detail {
namespace {

DeviceAttribute attribute(CUdevice_attribute a) {
  return static_cast<DeviceAttribute>(a);
}

NvmlGpu gpu(const std::string& bus, std::map<std::string, NvmlReading> readings) {
  return {bus, "GPU-" + bus, std::move(readings)};
}

TEST(DeviceCacheReadings, EachSettingThatCanChangeNamesItsReading) {
  EXPECT_EQ(reading_for(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE)), "compute_mode");
  EXPECT_EQ(reading_for(attribute(CU_DEVICE_ATTRIBUTE_ECC_ENABLED)), "ecc");
  EXPECT_EQ(reading_for(attribute(CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT)), "display");
  EXPECT_EQ(reading_for(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)), std::nullopt);
  EXPECT_EQ(reading_for(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)), std::nullopt);
}

TEST(DeviceCacheReadings, MigModeIsTheCurrentModeOfASuccessfulQuery) {
  EXPECT_TRUE(mig_enabled(gpu("a", {{"mig", "0:1,1"}})));
  EXPECT_TRUE(mig_enabled(gpu("a", {{"mig", "0:1,0"}})));
  EXPECT_FALSE(mig_enabled(gpu("a", {{"mig", "0:0,1"}})));  // pending only
  EXPECT_FALSE(mig_enabled(gpu("a", {{"mig", "3:"}})));     // not supported
  EXPECT_FALSE(mig_enabled(gpu("a", {})));
}

TEST(DeviceCacheReadings, SameReadingsNeedTheSameGpusInTheSameOrder) {
  const std::vector<NvmlGpu> before = {gpu("a", {{"ecc", "0:1,1"}, {"mig", "3:"}}),
                                       gpu("b", {{"ecc", "0:0,0"}, {"mig", "3:"}})};
  EXPECT_TRUE(same_readings(before, before, "ecc"));
  auto changed = before;
  changed[1].readings["ecc"] = "0:1,1";
  EXPECT_FALSE(same_readings(before, changed, "ecc"));
  EXPECT_TRUE(same_readings(before, changed, "mig"));  // another reading
  // A reading missing on either side is not the same.
  EXPECT_FALSE(same_readings(before, before, "display"));
  // Another GPU, another order, one GPU fewer.
  auto other = before;
  other[0].uuid = "GPU-other";
  EXPECT_FALSE(same_readings(before, other, "ecc"));
  EXPECT_FALSE(same_readings(before, {before[1], before[0]}, "mig"));
  EXPECT_FALSE(same_readings(before, {before[0]}, "mig"));
  EXPECT_TRUE(same_readings({}, {}, "ecc"));
}

TEST(DeviceCacheReadings, ASettingNoGpuHasCannotChange) {
  const NvmlReading unsupported = "3:";
  EXPECT_TRUE(unsupported_everywhere(
      {gpu("a", {{"mig", unsupported}}), gpu("b", {{"mig", unsupported}})}, "mig"));
  EXPECT_FALSE(unsupported_everywhere(
      {gpu("a", {{"mig", unsupported}}), gpu("b", {{"mig", "0:0,0"}})}, "mig"));
  EXPECT_FALSE(unsupported_everywhere({gpu("a", {})}, "mig"));  // not read: unknown
  EXPECT_TRUE(unsupported_everywhere({}, "mig"));
}

}  // namespace
}  // namespace cudatool::detail
