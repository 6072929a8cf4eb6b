#include "binary/ptx_header.hpp"

#include <cctype>
#include <string>

namespace cudatool {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// "9.0" -> {9, 0}: one or two digits, a dot, one or two digits.
std::optional<PtxVersion> parse_version(std::string_view s) {
  const auto digits = [](std::string_view d) -> std::optional<int> {
    if (d.empty() || d.size() > 2) return std::nullopt;
    int v = 0;
    for (char c : d) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = digits(s.substr(0, dot)), minor = digits(s.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  return PtxVersion{*major, *minor};
}

}  // namespace

PtxHeader read_ptx_header(std::string_view text) {
  PtxHeader header;
  bool in_block_comment = false;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (in_block_comment) {
      const auto close = line.find("*/");
      if (close == std::string_view::npos) continue;
      in_block_comment = false;
      line = line.substr(close + 2);
    }
    if (const auto slash = line.find("//"); slash != std::string_view::npos)
      line = line.substr(0, slash);
    if (const auto open = line.find("/*"); open != std::string_view::npos) {
      in_block_comment = line.find("*/", open + 2) == std::string_view::npos;
      line = line.substr(0, open);
    }
    line = trim(line);
    if (line.empty()) continue;
    if (line.starts_with(".version") && line.size() > 8 && is_space(line[8])) {
      header.version = parse_version(trim(line.substr(8)));
      continue;
    }
    if (line.starts_with(".target") && line.size() > 7 && is_space(line[7])) {
      std::string_view first = trim(line.substr(7));
      first = trim(first.substr(0, first.find(',')));
      if (auto arch = Arch::try_parse(first); arch && arch->real()) {
        arch->code = Arch::Code::ptx;
        header.target = arch;
      }
      continue;
    }
    if (line.starts_with(".address_size")) continue;
    break;  // code, or anything else: the header is over
  }
  return header;
}

}  // namespace cudatool
