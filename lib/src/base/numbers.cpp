#include "cudatool/base/numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <system_error>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

bool digits_only(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

[[noreturn]] void out_of_range(std::string_view text, std::string_view source,
                               const std::string& range) {
  throw UsageError(std::string(source) + " " + quote_input(text) + ": expected a whole number " +
                   range);
}

std::string format_seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", s);
  return buffer;
}

std::string format_decimal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

}  // namespace

std::int64_t parse_integer(std::string_view text, std::string_view source, std::int64_t minimum,
                           std::int64_t maximum) {
  const std::string range = std::to_string(minimum) + ".." + std::to_string(maximum);
  const bool negative = !text.empty() && text[0] == '-';
  if (!digits_only(negative ? text.substr(1) : text)) out_of_range(text, source, range);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
      value > maximum)
    out_of_range(text, source, range);
  return value;
}

std::uint64_t parse_unsigned(std::string_view text, std::string_view source, std::uint64_t minimum,
                             std::uint64_t maximum) {
  const std::string range = std::to_string(minimum) + ".." + std::to_string(maximum);
  if (!digits_only(text)) out_of_range(text, source, range);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
      value > maximum)
    out_of_range(text, source, range);
  return value;
}

int parse_int(std::string_view text, std::string_view source, int minimum, int maximum) {
  return static_cast<int>(parse_integer(text, source, minimum, maximum));
}

double parse_decimal(std::string_view text, std::string_view source, double minimum,
                     double maximum) {
  const auto fail = [&]() -> double {
    throw UsageError(std::string(source) + " " + quote_input(text) +
                     ": expected a decimal number from " + format_decimal(minimum) + " to " +
                     format_decimal(maximum));
  };
  const bool negative = !text.empty() && text[0] == '-' && minimum < 0;
  const std::string_view number = negative ? text.substr(1) : text;
  bool digit = false, dot = false;
  for (const char c : number) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c == '.' && !dot)
      dot = true;
    else
      return fail();
  }
  if (!digit || number.size() > 40) return fail();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value < minimum || value > maximum)
    return fail();
  return value;
}

double parse_duration(std::string_view text, std::string_view source, double minimum_s,
                      double maximum_s) {
  const auto fail = [&]() -> double {
    throw UsageError(std::string(source) + " " + quote_input(text) +
                     ": expected a duration such as 2, 0.5s, 500ms or 2m, from " +
                     format_seconds(minimum_s) + " s to " + format_seconds(maximum_s) + " s");
  };
  std::size_t i = 0;
  bool digit = false, dot = false;
  for (; i < text.size(); ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      digit = true;
    } else if (text[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digit || i > 40) return fail();
  const std::string_view unit = text.substr(i);
  double scale = 1;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "ms")
    scale = 1e-3;
  else if (unit == "m" || unit == "min")
    scale = 60;
  else
    return fail();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + i, value);
  if (error != std::errc() || end != text.data() + i) return fail();
  value *= scale;
  if (!std::isfinite(value) || value < minimum_s || value > maximum_s) return fail();
  return value;
}

}  // namespace cudatool
