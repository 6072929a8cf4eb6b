// Pieces of the text tables for people (kernels, kernels --baseline, kernels --sizes): names
// as a terminal gets them and right-aligned numbers.
#pragma once

#include <string>

#include "cudatool/base/text.hpp"

namespace cudatool::app {

// Text from the file or the command line (kernel and member names, paths) as the terminal
// gets it: control characters and bytes that are not UTF-8 escaped (base/text.hpp), not cut.
inline std::string for_terminal(const std::string& text) {
  return printable(text, text.size());
}

// A name longer than `width` cut to `width` characters in the middle, keeping its last
// `tail`: the start (namespace, template) and the end (the parameter list) both stay
// readable.
inline std::string cut_middle(const std::string& name, std::size_t width, std::size_t tail) {
  if (name.size() <= width || width < tail + 3) return name;
  return name.substr(0, width - tail - 3) + "..." + name.substr(name.size() - tail);
}

// Right-aligned in `width`, always with a space before it (a number wider than its column
// pushes the row right rather than running into the column before).
inline std::string right_aligned(const std::string& text, std::size_t width) {
  return text.size() >= width ? " " + text : std::string(width - text.size(), ' ') + text;
}

}  // namespace cudatool::app
