// `kernels --fail-on LIST`: the regression rules a comparison fails on.
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "kernels_compare.hpp"

namespace cudatool::app {
namespace {

struct RuleName {
  const char* name;
  RegressionRule::Kind kind;
  KernelMetric metric;
};
constexpr RuleName kRules[] = {
    {"registers", RegressionRule::Kind::metric, KernelMetric::registers},
    {"spills", RegressionRule::Kind::spills, KernelMetric::spill_stores},
    {"local", RegressionRule::Kind::metric, KernelMetric::local},
    {"shared", RegressionRule::Kind::metric, KernelMetric::shared},
    {"barriers", RegressionRule::Kind::metric, KernelMetric::barriers},
    {"occupancy", RegressionRule::Kind::metric, KernelMetric::occupancy},
    {"code_size", RegressionRule::Kind::metric, KernelMetric::code_size},
    {"size", RegressionRule::Kind::total_size, KernelMetric::code_size},
    {"removed", RegressionRule::Kind::kernels_removed, KernelMetric::registers},
};

}  // namespace

const std::vector<std::string>& fail_on_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const RuleName& r : kRules) list.push_back(r.name);
    return list;
  }();
  return names;
}

std::vector<RegressionRule> parse_fail_on(const std::string& list) {
  std::vector<RegressionRule> rules;
  for (const std::string& item : split_list(list, "--fail-on", "registers,spills")) {
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const RuleName* known = nullptr;
    for (const RuleName& r : kRules)
      if (name == r.name) known = &r;
    if (!known) {
      std::string names;
      for (const std::string& n : fail_on_names()) names += (names.empty() ? "" : ", ") + n;
      throw UsageError("--fail-on " + quote_input(item) + ": unknown rule (rules: " + names +
                       "; each optionally =N or =N%)");
    }
    RegressionRule rule;
    rule.kind = known->kind;
    rule.metric = known->metric;
    rule.name = item;
    if (eq != std::string::npos) {
      std::string number = item.substr(eq + 1);
      if (!number.empty() && number.back() == '%') {
        rule.relative = true;
        number.pop_back();
      }
      if (rule.kind == RegressionRule::Kind::kernels_removed)
        throw UsageError("--fail-on " + quote_input(item) + ": removed takes no threshold");
      rule.threshold = parse_decimal(number, "--fail-on " + name, 0, 1e9);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace cudatool::app
