// libFuzzer harness: the one architecture grammar (Arch::parse, lib/src/base/arch.cpp) that
// every flag taking an architecture uses (occupancy/kernels/compile --arch, --min-cc), and
// the table lookup on top of it (DeviceData(Arch), lib/src/occupancy/device_data.cpp).
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
  if (!parsed) return 0;
  try {
    // A name the table accepts gives a DeviceData with the table's limits: its row's.
    const cudatool::DeviceData devdata(*parsed, "--arch", text);
    const cudatool::DeviceProperties* row = cudatool::find_architecture(parsed->cc);
    if (row == nullptr || devdata.properties().compute_capability != row->compute_capability)
      std::abort();
  } catch (const cudatool::UsageError&) {
    if (cudatool::find_architecture(parsed->cc) != nullptr) std::abort();
  }
  return 0;
}
