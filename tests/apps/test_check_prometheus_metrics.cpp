// check's Prometheus metrics by quantity (apps/cudatool/check_prometheus_metrics.cpp): the
// table covers every quantity, with one metric each, named in its base unit.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "cudatool/check/check.hpp"
#include "render_check.hpp"

using namespace cudatool;
using check::BaseUnit;
using check::Quantity;
using cudatool::app::quantity_metric;

TEST(CheckPrometheusMetrics, EveryQuantityHasOneMetric) {
  EXPECT_TRUE(quantity_metric(Quantity::none).base.empty());
  std::set<std::string> names;
  const std::regex name_syntax("[a-z][a-z0-9_]*");
  for (Quantity q : check::all_quantities()) {
    const auto m = quantity_metric(q);
    const std::string base(m.base);
    EXPECT_TRUE(std::regex_match(base, name_syntax)) << base;
    EXPECT_FALSE(m.help.empty()) << base;
    EXPECT_TRUE(m.help.ends_with(".")) << base;
    const std::string name = m.unit.empty() ? base : base + "_" + std::string(m.unit);
    EXPECT_TRUE(names.insert(name).second) << "two quantities named " << name;
  }
  EXPECT_EQ(names.size(), check::all_quantities().size());
}

TEST(CheckPrometheusMetrics, UnitFollowsTheBaseUnit) {
  for (Quantity q : check::all_quantities()) {
    const auto unit = quantity_metric(q).unit;
    switch (check::base_unit(q)) {
      case BaseUnit::number:
        EXPECT_EQ(unit, "");
        break;
      case BaseUnit::bytes:
        EXPECT_EQ(unit, "bytes");
        break;
      case BaseUnit::bytes_per_second:
        EXPECT_EQ(unit, "bytes_per_second");
        break;
      case BaseUnit::ratio:
        EXPECT_EQ(unit, "ratio");
        break;
    }
  }
  EXPECT_EQ(quantity_metric(Quantity::host_to_device).base, "host_to_device");
  EXPECT_EQ(quantity_metric(Quantity::uncorrectable_remapped_rows).base,
            "uncorrectable_remapped_rows");
}
