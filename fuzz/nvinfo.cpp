// libFuzzer target: the .nv.info (EIATTR) record reader, on a section's bytes as they
// come. Malformed input must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <span>

#include "binary/cubin_reader.hpp"
#include "cudatool/base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const cudatool::ByteReader r(std::span<const std::uint8_t>(data, size), "fuzz");
  std::uint64_t sum = 0;
  try {
    cudatool::for_each_nv_info_attribute(
        r, [&](std::uint8_t attribute, std::uint8_t format, std::uint16_t value,
               std::span<const std::uint8_t> payload) {
          sum += attribute + format + value + payload.size();
          if (!payload.empty()) sum += payload.front() + payload.back();
        });
  } catch (const cudatool::UsageError&) {
  }
  return sum == 1 ? 1 : 0;
}
