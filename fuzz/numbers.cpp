// libFuzzer harness: the strict number parsers (lib/src/base/numbers.cpp: integers,
// decimals, durations) and the escaping of echoed values (lib/src/base/text.cpp). The
// first byte picks the range; a parsed value must lie in it; every message is one line of
// printable text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"

namespace {

void check_message(const cudatool::UsageError& e) {
  for (const char c : std::string_view(e.what()))
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::int64_t low = selector & 1 ? -1000 : 0;
  const std::int64_t high = selector & 2 ? INT64_MAX : 1 << 20;
  try {
    const std::int64_t v = cudatool::parse_integer(text, "--live", low, high);
    if (v < low || v > high) std::abort();
  } catch (const cudatool::UsageError& e) {
    check_message(e);
  }
  try {
    const std::uint64_t v = cudatool::parse_unsigned(text, "--seed", selector & 4 ? 1 : 0);
    if ((selector & 4) && v < 1) std::abort();
  } catch (const cudatool::UsageError& e) {
    check_message(e);
  }
  try {
    const double minimum = selector & 8 ? 0.0 : 0.5;
    const double v = cudatool::parse_decimal(text, "--min-fraction", minimum, 1e6);
    if (!(v >= minimum && v <= 1e6)) std::abort();  // NaN fails this too
  } catch (const cudatool::UsageError& e) {
    check_message(e);
  }
  try {
    const double s = cudatool::parse_duration(text, "--duration", 0.001, 3600);
    if (!(s >= 0.001 && s <= 3600)) std::abort();
  } catch (const cudatool::UsageError& e) {
    check_message(e);
  }
  const std::string shown = cudatool::printable(text, selector);
  for (const char c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
  // Each byte read becomes at most 4 characters; a sequence begun before the cut may run
  // 3 bytes past it.
  if (shown.size() > 4 * (static_cast<std::size_t>(selector) + 3) + 3) std::abort();
  return 0;
}
