#include "prometheus_exposition.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cudatool/base/text.hpp"

namespace cudatool::app {

std::string label_value(const std::string& text) {
  std::string out;
  for (char c : valid_utf8(text)) {
    if (c == '\\' || c == '"')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
    return buffer;
  }
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

}  // namespace cudatool::app
