// libFuzzer harness: the size parser (parse_size, lib/src/base/units.cpp) and the size
// formatter. A value is either a UsageError or a size; formatting any size works.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::uint64_t bytes = cudatool::parse_size(text, "--size");
    if (cudatool::format_bytes(bytes).empty()) std::abort();
  } catch (const cudatool::UsageError& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
