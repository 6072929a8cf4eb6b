// Strict reads of numbers from JSON that came from a file (the caches' entries): only an
// integer that fits the target type is taken. nlohmann's get<int>() also converts floats and
// booleans, and a float out of the target's range is undefined behaviour in that cast.
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudatool::detail {

template <class Int>
Int json_integer(const nlohmann::json& j) {
  static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>);
  if (j.is_number_unsigned()) {
    const auto v = j.get<nlohmann::json::number_unsigned_t>();
    if (v > static_cast<std::make_unsigned_t<Int>>(std::numeric_limits<Int>::max()))
      throw std::out_of_range("integer out of range");
    return static_cast<Int>(v);
  }
  if (j.is_number_integer()) {
    const auto v = j.get<nlohmann::json::number_integer_t>();
    if constexpr (std::is_unsigned_v<Int>) {
      if (v < 0) throw std::out_of_range("negative integer");
      if (static_cast<std::uint64_t>(v) > std::numeric_limits<Int>::max())
        throw std::out_of_range("integer out of range");
    } else {
      if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max())
        throw std::out_of_range("integer out of range");
    }
    return static_cast<Int>(v);
  }
  throw std::invalid_argument("not an integer");
}

// [[a, b], ...] of integers.
inline std::vector<std::pair<int, int>> json_int_pairs(const nlohmann::json& j) {
  std::vector<std::pair<int, int>> out;
  for (const auto& p : j) {
    if (!p.is_array() || p.size() != 2) throw std::invalid_argument("not a pair");
    out.emplace_back(json_integer<int>(p[0]), json_integer<int>(p[1]));
  }
  return out;
}

}  // namespace cudatool::detail
