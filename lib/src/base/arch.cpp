#include "cudatool/base/arch.hpp"

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// The digits of `text` as a number when it is `min`-`max` digits, the first not 0.
std::optional<int> digits_of(std::string_view text, std::size_t min, std::size_t max) {
  if (text.size() < min || text.size() > max || text.front() == '0') return std::nullopt;
  int value = 0;
  for (const char c : text) {
    if (!digit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::string Arch::str() const {
  std::string text = (real() ? "sm_" : "compute_") + std::to_string(number());
  if (variant == Variant::a) text += 'a';
  if (variant == Variant::f) text += 'f';
  return text;
}

std::optional<Arch> Arch::try_parse(std::string_view text) {
  Arch arch;
  std::string_view rest;
  if (text.starts_with("sm_")) {
    rest = text.substr(3);
  } else if (text.starts_with("compute_")) {
    arch.code = Code::ptx;
    rest = text.substr(8);
  } else {
    const auto dot = text.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const auto major = digits_of(text.substr(0, dot), 1, 2);
    const std::string_view minor = text.substr(dot + 1);
    if (!major || minor.size() != 1 || !digit(minor[0])) return std::nullopt;
    arch.cc = {*major, minor[0] - '0'};
    return arch;
  }
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    arch.variant = rest.back() == 'a' ? Variant::a : Variant::f;
    rest.remove_suffix(1);
  }
  const auto number = digits_of(rest, 2, 3);
  if (!number) return std::nullopt;
  arch.cc = {*number / 10, *number % 10};
  return arch;
}

Arch Arch::parse(std::string_view text, std::string_view source) {
  if (auto arch = try_parse(text)) return *arch;
  throw UsageError(std::string(source) + " " + quote_input(text) +
                   ": expected an architecture such as sm_90, sm_90a, sm_100f, compute_90 or "
                   "9.0");
}

bool Arch::passes(const Arch& filter) const {
  if (filter.cc != cc) return false;
  if (!real() && filter.real() && filter.variant == Variant::none) return true;
  if (filter.code != code) return false;
  return filter.variant == Variant::none || filter.variant == variant;
}

}  // namespace cudatool
