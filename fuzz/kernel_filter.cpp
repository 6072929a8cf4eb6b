// libFuzzer harness: the kernel-name filter (lib/src/binary/kernel_filter.cpp, RE2) of
// `kernels --kernel` and `occupancy --kernel-from ... --kernel`. The input is a pattern, a
// NUL byte and a kernel name; a first byte with its high bit set repeats the name up to
// 16 KiB (a hostile binary's names are that long, and std::regex overflowed the stack on
// them; RE2's time is linear in the name times the pattern's program, so the name is kept
// to what a 10 s timeout allows with the largest program RE2 accepts). A pattern is either
// accepted or a UsageError of one printable line; an accepted one matches without
// crashing; a name of at most 1 KiB always matches itself as a quoted literal.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_filter.hpp"

namespace {

// `text` as an RE2 pattern matching it literally: what is not a word character or a byte
// of a multi-byte character is escaped (the rule of RE2::QuoteMeta).
std::string literal_pattern(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b == 0) {
      out += "\\x00";
      continue;
    }
    const bool word = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                      b == '_' || b >= 0x80;
    if (!word) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool repeat = data[0] & 0x80;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t nul = input.find('\0');
  const std::string_view pattern = input.substr(0, nul);
  std::string name(nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1));
  if (repeat && !name.empty())
    while (name.size() < (16u << 10)) name += name;
  try {
    const cudatool::KernelNameFilter filter(pattern, "--kernel");
    (void)filter.matches(name);
  } catch (const cudatool::UsageError& e) {
    for (const char c : std::string_view(e.what()))
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
  }
  // A literal always finds itself (where RE2 takes the name's bytes: valid UTF-8).
  std::optional<cudatool::KernelNameFilter> literal;
  try {
    if (name.size() <= 1024) literal.emplace(literal_pattern(name), "--kernel");
  } catch (const cudatool::UsageError&) {
  }
  if (literal && !literal->matches(name)) std::abort();
  return 0;
}
