// How check's text and JSON show numbers (apps/cudatool/check_units.cpp): each quantity's
// unit and the number in it, from the base unit the library holds it in.
#include <gtest/gtest.h>

#include <string>

#include "cudatool/check/check.hpp"
#include "render_check.hpp"

using namespace cudatool;
using check::Comparison;
using check::Quantity;
using cudatool::app::comparison_symbol;
using cudatool::app::display_unit;
using cudatool::app::display_value;

TEST(CheckUnits, EveryQuantityHasAUnit) {
  EXPECT_EQ(display_unit(Quantity::none), "");
  for (Quantity q : check::all_quantities()) EXPECT_FALSE(display_unit(q).empty());
  EXPECT_EQ(display_unit(Quantity::memory_used_by_others), "GiB");
  EXPECT_EQ(display_unit(Quantity::host_to_device), "GB/s");
  EXPECT_EQ(display_unit(Quantity::pcie_link), "GB/s");
  EXPECT_EQ(display_unit(Quantity::gpu_utilization), "%");
  EXPECT_EQ(display_unit(Quantity::compute_wrong_elements), "wrong elements");
}

TEST(CheckUnits, NumbersInTheUnitsShown) {
  EXPECT_EQ(display_value(Quantity::memory_used_by_others, 83429425152.0),
            83429425152.0 / (1 << 30));
  EXPECT_EQ(display_value(Quantity::memory_used_by_others, 1073741824.0), 1.0);
  EXPECT_EQ(display_value(Quantity::peer_copy, 391e9), 391.0);
  // PCIe Gen5 x16 as the health check holds it: the JSON shows the GB/s it always showed.
  const double gen5_x16 = check::pcie_theoretical_gbps(5, 16);
  EXPECT_EQ(display_value(Quantity::pcie_link, gen5_x16 * check::kBytesPerGB), gen5_x16);
  EXPECT_EQ(display_value(Quantity::retired_pages, 63), 63);
}

// Every whole percent NVML can read shows as itself (0.07 x 100 is 7.000000000000001).
TEST(CheckUnits, WholePercentsStayWhole) {
  for (unsigned percent = 0; percent <= 100; ++percent)
    EXPECT_EQ(display_value(Quantity::gpu_utilization, percent / 100.0), percent) << percent;
}

TEST(CheckUnits, ComparisonSymbols) {
  EXPECT_EQ(comparison_symbol(Comparison::none), "");
  EXPECT_EQ(comparison_symbol(Comparison::at_least), ">=");
  EXPECT_EQ(comparison_symbol(Comparison::at_most), "<=");
  EXPECT_EQ(comparison_symbol(Comparison::below), "<");
  EXPECT_EQ(comparison_symbol(Comparison::equal), "==");
}
