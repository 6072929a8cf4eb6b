// The one fixture for tests that need a real GPU (the analogue of PyCUDA's
// mark_cuda_test). SetUp skips, with the reason, where no driver or no device is found;
// where one is, the test runs for real.
//
// CUDATOOL_TEST_DEVICES picks the devices (like PYOPENCL_TEST): unset or "all" for
// every visible device, a comma-separated list of ordinals, PCI bus ids or UUIDs, or
// "none" to skip every GPU test.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudatool/device/device.hpp"

namespace cudatool::testing {

// The devices tests run on, or the reason there are none (empty devices, reason set).
struct GpuTestDevices {
  std::vector<Device> devices;
  std::string skip_reason;
};
const GpuTestDevices& gpu_test_devices();

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // The selected devices (at least one once SetUp passed).
  static const std::vector<Device>& devices() { return gpu_test_devices().devices; }
  static const Device& device() { return devices().front(); }
  // Why a test that needs `n` devices cannot run, or "" when it can. Use through
  // CUDATOOL_REQUIRE_DEVICES, which returns from the test itself.
  static std::string missing_devices(std::size_t n);
};

// Skips the calling test unless `n` devices are selected (GTEST_SKIP must be in the test
// body: inside a helper it would only leave the helper).
#define CUDATOOL_REQUIRE_DEVICES(n)                                                           \
  if (const std::string why = ::cudatool::testing::GpuTest::missing_devices(n); !why.empty()) \
  GTEST_SKIP() << why

}  // namespace cudatool::testing
