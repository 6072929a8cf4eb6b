// `cudatool check`: the theoretical rates and the judgement of a measured rate
// (lib/src/check/rates.cpp), from plain structs (no GPU).
#include <gtest/gtest.h>

#include <string>

#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

TEST(CheckTheory, PcieRatesPerGenerationAndWidth) {
  EXPECT_NEAR(pcie_theoretical_gbps(5, 16), 63.0, 0.02);  // the 63 GB/s
  EXPECT_NEAR(pcie_theoretical_gbps(4, 16), 31.5, 0.02);
  EXPECT_NEAR(pcie_theoretical_gbps(3, 16), 15.75, 0.02);
  EXPECT_NEAR(pcie_theoretical_gbps(1, 16), 4.0, 0.02);
  EXPECT_NEAR(pcie_theoretical_gbps(5, 4), 15.75, 0.02);  // fallen to x4
  EXPECT_EQ(pcie_theoretical_gbps(9, 16), 0);
}

TEST(CheckTheory, MemoryAndNvlinkRates) {
  // H100 SXM: 5120-bit HBM3 at 2619 MHz = 3352 GB/s (NVIDIA's 3.35 TB/s).
  EXPECT_NEAR(memory_theoretical_gbps(5120, 2619000), 3352.3, 0.1);
  EXPECT_EQ(memory_theoretical_gbps(0, 2619000), 0);
  EXPECT_NEAR(18 * nvlink_link_gbps({9, 0}), 478.1, 0.1);  // NV18 on the two-H200 host
  EXPECT_EQ(12 * nvlink_link_gbps({8, 0}), 300);           // A100 SXM: 600 GB/s both ways
  EXPECT_EQ(nvlink_link_gbps({8, 6}), 0);                  // no NVLink between GA102s here
  EXPECT_EQ(nvlink_link_gbps({12, 0}), 0);
}

TEST(CheckThresholds, RateAgainstFractionOfTheory) {
  // The H100 host link: 55.0 GB/s of 63 GB/s passes 75%.
  CheckResult r = rate_result(Kind::hostlink, "h2d", 55.0, 63.0, std::nullopt, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::pass);
  EXPECT_NEAR(*r.threshold, 47.25, 1e-9);
  EXPECT_EQ(r.unit, "GB/s");
  // An x4 link's rate fails.
  r = rate_result(Kind::hostlink, "h2d", 13.0, 63.0, std::nullopt, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::fail);
  // A given minimum wins over the fraction.
  r = rate_result(Kind::hostlink, "h2d", 55.0, 63.0, 10000.0, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(*r.threshold, 10000);
  EXPECT_NE(r.reason.find("minimum 10000.0 GB/s given"), std::string::npos) << r.reason;
  // No theory and no minimum: skipped with the value, never a pass.
  r = rate_result(Kind::peer, "peer", 391.0, std::nullopt, std::nullopt, 0.75, "peer");
  EXPECT_EQ(r.verdict, Verdict::skipped);
  EXPECT_EQ(*r.value, 391.0);
  EXPECT_FALSE(r.threshold);
  r = rate_result(Kind::peer, "peer", 391.0, std::nullopt, 335.0, 0.75, "peer");
  EXPECT_EQ(r.verdict, Verdict::pass);  // Azure's peer minimum, given by hand
}
