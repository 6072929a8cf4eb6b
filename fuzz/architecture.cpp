// libFuzzer harness: the architecture names of `occupancy --arch` (parse_architecture,
// lib/src/occupancy/device_data.cpp) and the compute capabilities of `devices --min-cc`
// (parse_compute_capability, lib/src/device/device_info.cpp).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/device/device_info.hpp"
#include "cudatool/occupancy/device_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const cudatool::ComputeCapability cc = cudatool::parse_architecture(text);
    // A name the table accepts gives a DeviceData with the table's limits.
    const cudatool::DeviceData devdata(cc.str());
    if (devdata.properties().compute_capability != cc) std::abort();
  } catch (const cudatool::UsageError&) {
  }
  try {
    const cudatool::ComputeCapability cc = cudatool::parse_compute_capability(text, "--min-cc");
    if (cc.major < 0 || cc.minor < 0) std::abort();
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
