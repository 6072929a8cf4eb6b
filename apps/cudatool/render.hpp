// Small helpers the subcommands' renderers share.
#pragma once

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

namespace cudatool::app {

inline void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2) << '\n';
}

// Pads `text` with spaces to `width` characters (left-aligned).
inline std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace cudatool::app
