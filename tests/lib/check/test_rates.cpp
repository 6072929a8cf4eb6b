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
  CheckResult r = rate_result(Quantity::host_to_device, 55.0, 63.0, std::nullopt, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::pass);
  // Judged in GB/s, held in bytes per second.
  EXPECT_EQ(r.kind, Kind::hostlink);
  EXPECT_EQ(r.name, "h2d");
  EXPECT_EQ(r.quantity, Quantity::host_to_device);
  EXPECT_EQ(r.comparison, Comparison::at_least);
  EXPECT_EQ(*r.value, 55e9);
  EXPECT_NEAR(*r.threshold, 47.25e9, 1);
  // An x4 link's rate fails.
  r = rate_result(Quantity::host_to_device, 13.0, 63.0, std::nullopt, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::fail);
  // A given minimum wins over the fraction.
  r = rate_result(Quantity::host_to_device, 55.0, 63.0, 10000.0, 0.75, "h2d");
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(*r.threshold, 10000e9);
  EXPECT_NE(r.reason.find("minimum 10000.0 GB/s given"), std::string::npos) << r.reason;
  // No theory and no minimum: skipped with the value, never a pass.
  r = rate_result(Quantity::peer_copy, 391.0, std::nullopt, std::nullopt, 0.75, "peer");
  EXPECT_EQ(r.verdict, Verdict::skipped);
  EXPECT_EQ(*r.value, 391e9);
  EXPECT_FALSE(r.threshold);
  EXPECT_EQ(r.comparison, Comparison::at_least);  // what a threshold would be
  r = rate_result(Quantity::peer_copy, 391.0, std::nullopt, 335.0, 0.75, "peer");
  EXPECT_EQ(r.verdict, Verdict::pass);  // Azure's peer minimum, given by hand
}

TEST(CheckThresholds, EachRateNamesItsResult) {
  const auto d2d = rate_result(Quantity::device_to_device, 1, 2.0, std::nullopt, 0.75, "d2d");
  EXPECT_EQ(d2d.kind, Kind::memory);
  EXPECT_EQ(d2d.name, "d2d");
  const auto d2h = rate_result(Quantity::device_to_host, 1, 2.0, std::nullopt, 0.75, "d2h");
  EXPECT_EQ(d2h.kind, Kind::hostlink);
  EXPECT_EQ(d2h.name, "d2h");
  const auto peer = rate_result(Quantity::peer_copy, 1, 2.0, std::nullopt, 0.75, "peer");
  EXPECT_EQ(peer.kind, Kind::peer);
  EXPECT_EQ(peer.name, "peer");
  // Not a rate: a mistake of the caller's.
  EXPECT_THROW(rate_result(Quantity::pcie_link, 1, 2.0, std::nullopt, 0.75, "x"),
               std::invalid_argument);
}
