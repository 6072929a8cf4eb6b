// The one strict parser for numbers from outside (flags, environment variables, files):
// integers, decimals and durations. Strict means: decimal digits only (a leading '-' for a
// negative value, where the range allows one), no sign '+', no blanks, no empty value, and
// the value inside the range, or UsageError naming the source, the value (quoted, see
// text.hpp) and the range:  --seed "-1": expected a whole number 0..18446744073709551615
// Sizes ("48K", "1.5GiB") are parse_size (units.hpp), which reports the same way.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace cudatool {

std::int64_t parse_integer(std::string_view text, std::string_view source, std::int64_t minimum,
                           std::int64_t maximum);

std::uint64_t parse_unsigned(std::string_view text, std::string_view source,
                             std::uint64_t minimum = 0,
                             std::uint64_t maximum = std::numeric_limits<std::uint64_t>::max());

// parse_integer into an int: [minimum, maximum] must lie in int's range.
int parse_int(std::string_view text, std::string_view source, int minimum,
              int maximum = std::numeric_limits<int>::max());

// A decimal number ("0.75", "12", "12.5"): digits with at most one '.', a leading '-'
// only where the range allows negative values, no exponent, no "inf" or "nan", inside
// [minimum, maximum].
double parse_decimal(std::string_view text, std::string_view source, double minimum,
                     double maximum);

// A duration in seconds: "2", "0.5", "1.5s", "500ms", "2m". Finite, inside [minimum_s,
// maximum_s]; a bare number is seconds.
double parse_duration(std::string_view text, std::string_view source, double minimum_s,
                      double maximum_s);

}  // namespace cudatool
