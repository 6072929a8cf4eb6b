#include "gpu_test.hpp"

#include <cstdlib>
#include <sstream>

#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"

namespace cudatool::testing {
namespace {

GpuTestDevices find_devices() {
  GpuTestDevices result;
  const char* env = std::getenv("CUDATOOL_TEST_DEVICES");
  const std::string wanted = env ? env : "all";
  if (wanted == "none") {
    result.skip_reason = "CUDATOOL_TEST_DEVICES=none";
    return result;
  }
  try {
    if (wanted.empty() || wanted == "all") {
      result.devices = Device::all();
    } else {
      std::stringstream list(wanted);
      std::string item;
      while (std::getline(list, item, ',')) {
        DeviceChoice choice{parse_device_spec(item, "CUDATOOL_TEST_DEVICES"),
                            "CUDATOOL_TEST_DEVICES"};
        result.devices.push_back(resolve_device(choice));
      }
    }
  } catch (const std::exception& e) {
    result.devices.clear();
    result.skip_reason = std::string("no GPU for this test: ") + e.what();
  }
  if (result.devices.empty() && result.skip_reason.empty())
    result.skip_reason = "no GPU for this test: no device selected";
  return result;
}

}  // namespace

const GpuTestDevices& gpu_test_devices() {
  static const GpuTestDevices devices = find_devices();
  return devices;
}

void GpuTest::SetUp() {
  const auto& found = gpu_test_devices();
  if (found.devices.empty()) GTEST_SKIP() << found.skip_reason;
}

std::string GpuTest::missing_devices(std::size_t n) {
  if (devices().size() >= n) return "";
  return "needs " + std::to_string(n) + " GPUs, " + std::to_string(devices().size()) + " selected";
}

}  // namespace cudatool::testing
