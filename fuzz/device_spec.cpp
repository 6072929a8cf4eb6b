// libFuzzer harness: the device specs of --device, CUDA_DEVICE and ~/.cuda-device
// (parse_device_spec, lib/src/device/selection.cpp).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const cudatool::DeviceSpec spec = cudatool::parse_device_spec(text, "--device");
    if (spec.kind == cudatool::DeviceSpec::Kind::ordinal && spec.ordinal < 0) std::abort();
    if (spec.text.empty()) std::abort();
  } catch (const cudatool::UsageError& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
