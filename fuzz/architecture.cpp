// libFuzzer harness: the one architecture grammar (Arch::parse, lib/src/base/arch.cpp) that
// every flag taking an architecture uses (occupancy/kernels/compile --arch, --min-cc), and
// the table lookup on top of it (parse_architecture, lib/src/occupancy/device_data.cpp).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/base/arch.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/occupancy/device_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = cudatool::Arch::try_parse(text);
  try {
    const cudatool::Arch arch = cudatool::Arch::parse(text, "--arch");
    // parse and try_parse agree; the canonical spelling round-trips to the same value.
    if (!parsed || !(*parsed == arch)) std::abort();
    if (!(cudatool::Arch::parse(arch.str(), "--arch") == arch)) std::abort();
    if (arch.cc.major < 1 || arch.cc.minor < 0 || arch.cc.minor > 9) std::abort();
  } catch (const cudatool::UsageError&) {
    if (parsed) std::abort();
  }
  try {
    const cudatool::ComputeCapability cc = cudatool::parse_architecture(text, "--arch");
    // A name the table accepts gives a DeviceData with the table's limits.
    const cudatool::DeviceData devdata(cc.str(), "--arch");
    if (devdata.properties().compute_capability != cc) std::abort();
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
