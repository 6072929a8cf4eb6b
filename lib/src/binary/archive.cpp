#include "binary/archive.hpp"

#include <cstring>
#include <string_view>

namespace cudatool {
namespace {

constexpr std::uint64_t kMagicSize = 8;
constexpr std::uint64_t kHeaderSize = 60;

std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.remove_suffix(1);
  return std::string(s);
}

// The 10-character decimal size field of a member header.
std::uint64_t member_size(const ByteReader& r, std::uint64_t offset) {
  const auto b = r.bytes(offset, 10, "archive member size");
  std::uint64_t v = 0;
  bool digits = false;
  for (auto c : b) {
    if (c == ' ') break;
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10)
      r.fail(offset, "archive member size is not a decimal number");
    v = v * 10 + (c - '0');
    digits = true;
  }
  if (!digits) r.fail(offset, "archive member size is empty");
  return v;
}

}  // namespace

bool is_ar_archive(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= kMagicSize && (std::memcmp(bytes.data(), "!<arch>\n", 8) == 0 ||
                                        std::memcmp(bytes.data(), "!<thin>\n", 8) == 0);
}

std::vector<ArchiveMember> read_ar_archive(const ByteReader& r) {
  const auto magic = r.bytes(0, kMagicSize, "archive magic");
  if (std::memcmp(magic.data(), "!<thin>\n", 8) == 0)
    r.fail(0, "a thin archive (its members are separate files): name the objects instead");
  if (!is_ar_archive(magic)) r.fail(0, "not an ar archive");
  std::vector<ArchiveMember> members;
  std::string_view long_names;
  std::uint64_t p = kMagicSize;
  while (p < r.size()) {
    if (r.size() - p == 1 && r.u8(p, "padding") == '\n') break;
    const auto h = r.bytes(p, kHeaderSize, "archive member header");
    if (h[58] != '`' || h[59] != '\n') r.fail(p + 58, "archive member header has no terminator");
    std::uint64_t size = member_size(r, p + 48);
    std::string name = trim(std::string_view(reinterpret_cast<const char*>(h.data()), 16));
    std::uint64_t data = p + kHeaderSize;
    r.bytes(data, size, "archive member " + name);
    if (name.rfind("#1/", 0) == 0) {  // BSD: the name precedes the data
      std::uint64_t length = 0;
      for (char c : name.substr(3)) {
        if (c < '0' || c > '9' || length > 4096)
          r.fail(p, "archive member name length is malformed");
        length = length * 10 + std::uint64_t(c - '0');
      }
      if (length > size) r.fail(p, "archive member name is longer than the member");
      const auto n = r.bytes(data, length, "archive member name");
      name = trim(std::string_view(reinterpret_cast<const char*>(n.data()), n.size()));
      data += length;
      size -= length;
    }
    if (name == "//") {
      const auto t = r.bytes(data, size, "archive name table");
      long_names = std::string_view(reinterpret_cast<const char*>(t.data()), t.size());
    } else if (name == "/" || name == "/SYM64/" || name.rfind("__.SYMDEF", 0) == 0) {
      // symbol table
    } else {
      if (name.size() > 1 && name[0] == '/' && name[1] >= '0' && name[1] <= '9') {
        std::uint64_t at = 0;
        for (char c : name.substr(1)) {
          if (c < '0' || c > '9' || at > long_names.size())
            r.fail(p, "archive long-name offset is malformed");
          at = at * 10 + std::uint64_t(c - '0');
        }
        if (at >= long_names.size()) r.fail(p, "archive long-name offset is out of range");
        const auto end = long_names.find('\n', at);
        name = std::string(long_names.substr(at, end == std::string_view::npos ? end : end - at));
      }
      if (!name.empty() && name.back() == '/') name.pop_back();
      members.push_back({name, r.sub(data, size, "archive member " + name)});
    }
    p = data + size;
    p += p & 1;  // members are 2-byte aligned
  }
  return members;
}

}  // namespace cudatool
