// The kinds of check (identity, occupancy, health, ...): their names and the selection
// of --only/--skip lists.
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds = {Kind::identity, Kind::occupancy, Kind::health,
                                          Kind::xid,      Kind::compute,   Kind::memory,
                                          Kind::hostlink, Kind::peer};
  return kinds;
}

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::identity:
      return "identity";
    case Kind::occupancy:
      return "occupancy";
    case Kind::health:
      return "health";
    case Kind::xid:
      return "xid";
    case Kind::compute:
      return "compute";
    case Kind::memory:
      return "memory";
    case Kind::hostlink:
      return "hostlink";
    case Kind::peer:
      return "peer";
  }
  return "identity";
}

std::set<Kind> parse_kind_list(std::string_view list, std::string_view source) {
  std::set<Kind> kinds;
  for (const std::string& item : split_list(list, source, "compute,memory")) {
    bool found = false;
    for (Kind k : all_kinds())
      if (item == kind_name(k)) {
        kinds.insert(k);
        found = true;
      }
    if (!found) {
      std::string names;
      for (Kind k : all_kinds()) names += (names.empty() ? "" : ", ") + std::string(kind_name(k));
      throw UsageError(std::string(source) + " " + quote_input(list) + ": unknown check " +
                       quote_input(item) + " (checks: " + names + ")");
    }
  }
  return kinds;
}

std::set<Kind> select_kinds(const std::optional<std::string>& only, std::string_view only_source,
                            const std::optional<std::string>& skip, std::string_view skip_source) {
  if (only && skip)
    throw UsageError(std::string(only_source) + " and " + std::string(skip_source) +
                     " exclude each other");
  if (only) return parse_kind_list(*only, only_source);
  std::set<Kind> kinds(all_kinds().begin(), all_kinds().end());
  if (skip)
    for (Kind k : parse_kind_list(*skip, skip_source)) kinds.erase(k);
  return kinds;
}

}  // namespace cudatool::check
