// The verdicts of `cudatool check`: their names, and the worst of a device's and a run's.
#include "cudatool/check/check.hpp"

namespace cudatool::check {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::warn:
      return "warn";
    case Verdict::fail:
      return "fail";
    case Verdict::skipped:
      return "skipped";
  }
  return "skipped";
}

namespace {

int severity(Verdict v) {
  switch (v) {
    case Verdict::skipped:
      return 0;
    case Verdict::pass:
      return 1;
    case Verdict::warn:
      return 2;
    case Verdict::fail:
      return 3;
  }
  return 0;
}

}  // namespace

Verdict worse(Verdict a, Verdict b) {
  return severity(a) >= severity(b) ? a : b;
}

Verdict DeviceReport::verdict() const {
  Verdict v = Verdict::skipped;
  for (const auto& c : checks) v = worse(v, c.verdict);
  return v;
}

Verdict Report::verdict() const {
  Verdict v = Verdict::skipped;
  for (const auto& c : node_checks) v = worse(v, c.verdict);
  for (const auto& d : devices) v = worse(v, d.verdict());
  return v;
}

}  // namespace cudatool::check
