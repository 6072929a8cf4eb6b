// What device_info.cpp answers without a device: compute capabilities as --min-cc gives
// them, and which devices meet a set of requirements (count, compute capability, memory).
#include <gtest/gtest.h>

#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/device/device_info.hpp"

using namespace cudatool;

TEST(ComputeCapabilityText, Parses) {
  EXPECT_EQ(parse_compute_capability("9.0", "--min-cc"), (ComputeCapability{9, 0}));
  EXPECT_EQ(parse_compute_capability("compute_90a", "--min-cc"), (ComputeCapability{9, 0}));
  EXPECT_EQ(parse_compute_capability("sm_90", "--min-cc"), (ComputeCapability{9, 0}));
  EXPECT_EQ(parse_compute_capability("sm_121", "--min-cc"), (ComputeCapability{12, 1}));
  for (const char* bad : {"", "abc", "9.", "sm_", "sm_9", "-1", "9.10", "0.0", "8", "sm_1234"})
    EXPECT_THROW(parse_compute_capability(bad, "--min-cc"), UsageError) << bad;
}

TEST(Requirements, CountsQualifyingDevices) {
  DeviceInfo h100;
  h100.ordinal = 0;
  h100.name = "H100";
  h100.compute_capability = {9, 0};
  h100.total_memory = 80ull << 30;
  DeviceInfo a10 = h100;
  a10.ordinal = 1;
  a10.name = "A10";
  a10.compute_capability = {8, 6};
  a10.total_memory = 24ull << 30;

  DeviceRequirements need_two;
  need_two.min_count = 2;
  EXPECT_TRUE(check_requirements({h100, a10}, need_two).met);
  EXPECT_FALSE(check_requirements({h100}, need_two).met);
  EXPECT_EQ(check_requirements({h100}, need_two).problems.front(),
            "found 1 device, need at least 2");

  DeviceRequirements hopper;
  hopper.min_compute_capability = ComputeCapability{9, 0};
  EXPECT_TRUE(check_requirements({h100, a10}, hopper).met);  // one qualifying device is enough
  EXPECT_FALSE(check_requirements({a10}, hopper).met);
  const auto report = check_requirements({a10}, hopper);
  ASSERT_EQ(report.problems.size(), 2u);
  EXPECT_NE(report.problems[1].find("compute capability 8.6, need 9.0"), std::string::npos);

  hopper.min_count = 2;
  hopper.min_memory = 40ull << 30;
  const auto both = check_requirements({h100, a10}, hopper);
  EXPECT_FALSE(both.met);
  EXPECT_EQ(both.qualifying, 1);
}
