#include "cudatool/base/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0 || std::fmod(value, 1.0) == 0.0)
    std::snprintf(text, sizeof text, "%.0f %s", value, kUnits[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string format_bytes_beside(std::uint64_t bytes, std::uint64_t other) {
  // What a reader sees: the number to one decimal, and the unit.
  const auto shown = [](std::uint64_t b) {
    const std::string text = format_bytes(b);
    const std::size_t space = text.find(' ');
    return std::pair{std::round(std::stod(text.substr(0, space)) * 10), text.substr(space)};
  };
  std::string text = format_bytes(bytes);
  if (bytes != other && shown(bytes) == shown(other))
    text += " (" + std::to_string(bytes) + " bytes)";
  return text;
}

std::uint64_t parse_size(std::string_view text, std::string_view source) {
  auto fail = [&](const std::string& why) -> std::uint64_t {
    throw UsageError(std::string(source) + " " + quote_input(text) + ": " + why);
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (!text.empty() && text[0] == '-') return fail("a size cannot be negative");
  const std::string number(text.substr(0, i));
  std::string suffix(text.substr(i));
  if (number.empty() || number == "." || number.find('.') != number.rfind('.'))
    return fail("expected a size such as 49152, 48K, 48KiB or 1.5GiB");
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double multiplier = 1;
  if (!suffix.empty()) {
    static constexpr const char* kLetters = "KMGT";
    const char* found = suffix.size() <= 3 ? std::strchr(kLetters, suffix[0]) : nullptr;
    if (suffix == "B") {
      multiplier = 1;
    } else if (found && suffix[0] != '\0') {
      const int power = static_cast<int>(found - kLetters) + 1;
      const std::string rest = suffix.substr(1);
      if (rest.empty() || rest == "I" || rest == "IB")
        multiplier = std::pow(1024.0, power);
      else if (rest == "B")
        multiplier = std::pow(1000.0, power);
      else
        return fail("unknown unit " + quote_input(text.substr(i)) +
                    " (use K, M, G, T, KiB, MB, ...)");
    } else {
      return fail("unknown unit " + quote_input(text.substr(i)) +
                  " (use K, M, G, T, KiB, MB, ...)");
    }
  }
  const double value = std::strtod(number.c_str(), nullptr) * multiplier;
  if (!(value < 18446744073709551615.0)) return fail("too large");
  if (value != std::floor(value)) return fail("not a whole number of bytes");
  return static_cast<std::uint64_t>(value);
}

}  // namespace cudatool
