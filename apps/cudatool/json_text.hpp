// A JSON string's text as nlohmann writes it (quotes included, bytes that are not UTF-8
// replaced by U+FFFD), with the common case (a plain name) made fast: the one escaping of
// every document's strings (json_writer.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cudatool::app {

// True where the text is written as it is between quotes: no control character, quote,
// backslash, DEL or byte above 0x7f (bytes that nlohmann escapes or checks as UTF-8).
// Eight bytes at a time (the kernels' names are most of a kernels document): a byte
// below 0x20, or equal to '"', '\\' or 0x7f, is a zero byte of w - 0x20.., w ^ '"'..,
// w ^ '\\'.. or w ^ 0x7f.. (the exact test for a zero byte), and one above 0x7f has
// its top bit set.
inline bool json_plain(std::string_view text) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const auto has_zero = [](std::uint64_t w) { return (w - kOnes) & ~w & kHigh; };
  const char* p = text.data();
  std::size_t left = text.size();
  for (; left >= 8; p += 8, left -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    if (((w - 0x20 * kOnes) & ~w & kHigh) | (w & kHigh) | has_zero(w ^ ('"' * kOnes)) |
        has_zero(w ^ ('\\' * kOnes)) | has_zero(w ^ (0x7f * kOnes)))
      return false;
  }
  for (; left > 0; ++p, --left) {
    const auto u = static_cast<unsigned char>(*p);
    if (u < 0x20 || u >= 0x7f || u == '"' || u == '\\') return false;
  }
  return true;
}

// A JSON string's text, quotes included, as nlohmann writes it.
inline void append_json_string(std::string& out, std::string_view text) {
  if (json_plain(text)) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += nlohmann::json(std::string(text))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace cudatool::app
