#include "cudatool/base/text.hpp"

#include <algorithm>

#include "cudatool/base/error.hpp"

#include <cstdint>

namespace cudatool {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the byte there does
// not start one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t low = 0x80, high = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

void append_escape(std::string& out, std::uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (b) {
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
  }
}

// The code point of the valid UTF-8 sequence of `length` bytes at text[i].
char32_t decode(std::string_view text, std::size_t i, std::size_t length) {
  const auto byte = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<std::uint8_t>(text[k]));
  };
  static constexpr char32_t kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t c = byte(i) & kLeadMask[length];
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (byte(i + k) & 0x3F);
  return c;
}

// Characters that show nothing, or reorder or break what follows, on a terminal: format
// characters (zero-width spaces and joiners, the byte order mark, bidirectional embeddings,
// overrides and isolates, invisible operators, tags), the line and paragraph separators,
// and the fillers that render as blanks. A name holding one would look like another name.
bool invisible(char32_t c) {
  return c == 0xAD || c == 0x34F || c == 0x61C || c == 0x115F || c == 0x1160 || c == 0x17B4 ||
         c == 0x17B5 || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0x3164 ||
         c == 0xFEFF || c == 0xFFA0 || (c >= 0xFFF9 && c <= 0xFFFB) ||
         (c >= 0xE0000 && c <= 0xE0FFF);
}

// "\u200b", or "\U000e0001" beyond the Basic Multilingual Plane.
void append_code_point_escape(std::string& out, char32_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const int digits = c > 0xFFFF ? 8 : 4;
  out += c > 0xFFFF ? "\\U" : "\\u";
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(c >> shift) & 15];
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) {
      out += "...";
      break;
    }
    const auto b = static_cast<std::uint8_t>(text[i]);
    const std::size_t length = utf8_sequence(text, i);
    if (length == 0 || b < 0x20 || b == 0x7f) {
      append_escape(out, b);
      ++i;
      continue;
    }
    // C1 control characters (U+0080..U+009F) act on terminals too.
    if (length == 2 && b == 0xC2 && static_cast<std::uint8_t>(text[i + 1]) < 0xA0) {
      append_escape(out, b);
      append_escape(out, static_cast<std::uint8_t>(text[i + 1]));
      i += 2;
      continue;
    }
    if (length >= 2) {
      const char32_t c = decode(text, i, length);
      if (invisible(c)) {
        append_code_point_escape(out, c);
        i += length;
        continue;
      }
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence(text, i);
    if (length == 0) {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string quote_input(std::string_view text, std::size_t max_bytes) {
  // Appended, not "\"" + std::string: GCC 12's -O3 warns (-Wrestrict) about the
  // literal-plus-temporary operator+ inlined here (a false positive).
  std::string quoted = "\"";
  quoted += printable(text, max_bytes);
  quoted += '"';
  return quoted;
}

std::vector<std::string> split_list(std::string_view text, std::string_view source,
                                    std::string_view example) {
  std::vector<std::string> entries;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end == start)
      throw UsageError(std::string(source) + " " + quote_input(text) +
                       ": an empty entry in the list (expected e.g. " + std::string(example) + ")");
    entries.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return entries;
}

}  // namespace cudatool
