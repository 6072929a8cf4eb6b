// libFuzzer harness for the device cache's entry parser (device/device_cache.hpp): bytes
// from a file in the user's cache directory, which a damaged disk, a crash or another
// program may have written. The parser may not crash, hang or read out of bounds, and what
// it accepts must be a fixed point of the writer: written again and parsed, it is the same.
// The JSON payload is fuzzed on its own too, past the checksum.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/device/device_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (const auto entry = cudatool::detail::reformat_device_cache_entry(bytes))
    if (cudatool::detail::reformat_device_cache_entry(*entry) != entry) std::abort();
  if (const auto payload = cudatool::detail::reformat_device_cache_payload(bytes))
    if (cudatool::detail::reformat_device_cache_payload(*payload) != payload) std::abort();
  return 0;
}
