// Small helpers the subcommands' renderers share.
#pragma once

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

namespace cudatool::app {

// The one sink of every --json document. Strings from outside (paths, arguments, logs,
// file contents) may hold bytes that are not UTF-8: each such byte is written as U+FFFD,
// the replacement character (nlohmann's error_handler_t::replace), never an abort.
inline void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

// Pads `text` with spaces to `width` characters (left-aligned).
inline std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace cudatool::app
