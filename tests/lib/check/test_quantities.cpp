// The quantities of check's results and their base units (lib/src/check/quantities.cpp),
// and that every result with a value says what it measures.
#include <gtest/gtest.h>

#include <set>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

TEST(CheckQuantities, EveryQuantityOnceAndNoneLeftOut) {
  const auto& all = all_quantities();
  const std::set<Quantity> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size());
  EXPECT_EQ(unique.count(Quantity::none), 0u);
  // The enumerators run from none to kernel_log_lines: every one but none is listed.
  EXPECT_EQ(all.size(), static_cast<std::size_t>(Quantity::kernel_log_lines));
}

TEST(CheckQuantities, BaseUnits) {
  EXPECT_EQ(base_unit(Quantity::memory_used_by_others), BaseUnit::bytes);
  EXPECT_EQ(base_unit(Quantity::gpu_utilization), BaseUnit::ratio);
  for (Quantity rate : {Quantity::device_to_device, Quantity::host_to_device,
                        Quantity::device_to_host, Quantity::peer_copy, Quantity::pcie_link})
    EXPECT_EQ(base_unit(rate), BaseUnit::bytes_per_second);
  for (Quantity count :
       {Quantity::qualifying_devices, Quantity::other_processes, Quantity::ecc_uncorrected_errors,
        Quantity::clock_event_reasons, Quantity::kernel_log_lines})
    EXPECT_EQ(base_unit(count), BaseUnit::number);
}

// A value always comes with its quantity, and a threshold with a comparison.
TEST(CheckQuantities, ResultsWithAValueSayWhatItMeasures) {
  const Report report = cudatool::testing::sample_report();
  const Report occupied = cudatool::testing::occupancy_sample_report();
  std::vector<CheckResult> results = report.devices[0].checks;
  for (const auto& r : occupied.devices[0].checks) results.push_back(r);
  for (const auto& r : report.node_checks) results.push_back(r);
  ASSERT_GT(results.size(), 8u);
  for (const auto& r : results) {
    EXPECT_EQ(r.value.has_value(), r.quantity != Quantity::none) << r.name;
    if (r.threshold) {
      EXPECT_NE(r.comparison, Comparison::none) << r.name;
    }
  }
}

TEST(CheckQuantities, UtilizationIsARatio) {
  Occupancy o = cudatool::testing::idle_occupancy();
  o.gpu_utilization = 35;
  for (const auto& r : occupancy_results(o, {}))
    if (r.name == "utilization") {
      EXPECT_EQ(r.quantity, Quantity::gpu_utilization);
      EXPECT_EQ(*r.value, 0.35);  // the double nearest 0.35, not 35 x 0.01
      EXPECT_EQ(*r.threshold, 0);
    }
}
