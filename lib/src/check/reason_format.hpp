// Internal: the pieces of the reasons of check's results: numbers with a fixed count of
// decimals ("12.5 GB/s"), lists joined with commas.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace cudatool::check::detail {

inline std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace cudatool::check::detail
