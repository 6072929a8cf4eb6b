#include "cudatool/device/attributes.hpp"

#include <algorithm>
#include <cctype>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "device/cuda_attribute.hpp"

namespace cudatool {
namespace {

#define CUDATOOL_ATTRIBUTE(name, enumerator, deprecated, description) \
  AttributeInfo{name, to_attribute(enumerator), #enumerator, deprecated, description},
#define CUDATOOL_ATTRIBUTE_ALIAS(name, enumerator, target)
constexpr AttributeInfo kAttributes[] = {
#include "attribute_table.inc"
};
#undef CUDATOOL_ATTRIBUTE
#undef CUDATOOL_ATTRIBUTE_ALIAS

#define CUDATOOL_ATTRIBUTE(name, enumerator, deprecated, description)
#define CUDATOOL_ATTRIBUTE_ALIAS(name, enumerator, target) AttributeAlias{name, enumerator, target},
constexpr AttributeAlias kAliases[] = {
#include "attribute_table.inc"
};
#undef CUDATOOL_ATTRIBUTE
#undef CUDATOOL_ATTRIBUTE_ALIAS

std::string normalize(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) out.push_back(c == '-' ? '_' : static_cast<char>(std::tolower(c)));
  constexpr std::string_view prefix = "cu_device_attribute_";
  if (out.starts_with(prefix)) out.erase(0, prefix.size());
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const AttributeInfo> device_attributes() {
  return kAttributes;
}
std::span<const AttributeAlias> device_attribute_aliases() {
  return kAliases;
}

const AttributeInfo* find_attribute(std::string_view name) {
  std::string wanted = normalize(name);
  for (const auto& alias : kAliases)
    if (alias.name == wanted) wanted = std::string(alias.target);
  for (const auto& info : kAttributes)
    if (info.name == wanted) return &info;
  return nullptr;
}

std::vector<std::string> suggest_attributes(std::string_view name, std::size_t limit) {
  const std::string wanted = normalize(name);
  const std::size_t cutoff = std::max<std::size_t>(3, wanted.size() / 2);
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (const auto& info : kAttributes) {
    // A name containing what was typed ranks before any edit-distance match. The distance
    // is at least the difference in length: where that is past the cutoff the name is not
    // suggested, and the quadratic distance is not computed (a 100,000-character name
    // took 4 s, 45 s under AddressSanitizer).
    const bool contains = !wanted.empty() && info.name.find(wanted) != std::string_view::npos;
    const std::size_t gap = wanted.size() > info.name.size() ? wanted.size() - info.name.size()
                                                             : info.name.size() - wanted.size();
    const std::size_t distance = gap > cutoff ? gap : edit_distance(wanted, info.name);
    scored.emplace_back(contains ? 0 : 1 + distance, info.name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [score, candidate] : scored) {
    if (out.size() == limit || (score > 0 && score - 1 > cutoff)) break;
    out.emplace_back(candidate);
  }
  return out;
}

const AttributeInfo& attribute_by_name(std::string_view name) {
  if (const AttributeInfo* info = find_attribute(name)) return *info;
  std::string message = "unknown attribute " + quote_input(name);
  const auto near = suggest_attributes(name);
  if (!near.empty()) {
    message += " (did you mean: ";
    for (std::size_t i = 0; i < near.size(); ++i) message += (i ? ", " : "") + near[i];
    message += "?)";
  }
  throw UsageError(message);
}

}  // namespace cudatool
