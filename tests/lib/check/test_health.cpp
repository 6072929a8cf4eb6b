// `cudatool check`: NVML's health readings judged (lib/src/check/health.cpp), from plain structs
// (no GPU).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

namespace {

NvmlHealth healthy_h100() {
  NvmlHealth h;
  h.found = true;
  h.ecc_enabled = true;
  h.ecc_pending = true;
  h.ecc_uncorrected_volatile = 0;
  h.remapped_rows_correctable = 0;
  h.remapped_rows_uncorrectable = 0;
  h.remap_pending = false;
  h.remap_failed = false;
  h.throttle_reasons = 0x1;  // idle only
  h.pcie_max_generation = 5;
  h.pcie_max_width = 16;
  return h;
}

const CheckResult& find(const std::vector<CheckResult>& results, std::string_view name) {
  return cudatool::testing::find_result(results, name);
}

}  // namespace

TEST(CheckHealth, HealthyH100Passes) {
  const auto results = health_results(healthy_h100(), PcieLink{5, 16});
  for (const char* name : {"ecc_mode", "ecc_uncorrected", "row_remap", "throttle", "pcie_link"})
    EXPECT_EQ(find(results, name).verdict, Verdict::pass)
        << name << ": " << find(results, name).reason;
  EXPECT_EQ(find(results, "retired_pages").verdict, Verdict::skipped);  // Hopper remaps rows
  EXPECT_EQ(find(results, "nvlink").verdict, Verdict::skipped);
}

TEST(CheckHealth, DcgmThresholdsFail) {
  NvmlHealth h = healthy_h100();
  h.ecc_uncorrected_volatile = 1;
  h.remapped_rows_uncorrectable = 512;
  h.retired_pages = 63;
  h.retired_pages_pending = false;
  auto results = health_results(h, PcieLink{5, 16});
  EXPECT_EQ(find(results, "ecc_uncorrected").verdict, Verdict::fail);
  EXPECT_EQ(find(results, "row_remap").verdict, Verdict::fail);
  EXPECT_EQ(find(results, "retired_pages").verdict, Verdict::fail);

  h = healthy_h100();
  h.remapped_rows_uncorrectable = 511;
  h.retired_pages = 62;
  h.retired_pages_pending = true;
  results = health_results(h, PcieLink{5, 16});
  EXPECT_EQ(find(results, "row_remap").verdict, Verdict::pass);
  EXPECT_EQ(find(results, "retired_pages").verdict, Verdict::fail);  // pending

  h = healthy_h100();
  h.remap_pending = true;
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "row_remap").verdict, Verdict::fail);
  h = healthy_h100();
  h.remap_failed = true;
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "row_remap").verdict, Verdict::fail);
}

TEST(CheckHealth, LinkBelowMaximumFailsAndThermalThrottleFails) {
  NvmlHealth h = healthy_h100();
  h.throttle_reasons = 0x1 | 0x4 | 0x40;
  auto results = health_results(h, PcieLink{5, 4});
  EXPECT_EQ(find(results, "pcie_link").verdict, Verdict::fail);
  EXPECT_NE(find(results, "pcie_link").reason.find("Gen5 x4 while busy, maximum Gen5 x16"),
            std::string::npos);
  EXPECT_EQ(find(results, "throttle").verdict, Verdict::fail);
  EXPECT_EQ(find(results, "throttle").reason,
            "clocks held down by hw_thermal_slowdown (fail); normal: gpu_idle, sw_power_cap");
  EXPECT_EQ(find(health_results(h, PcieLink{3, 16}), "pcie_link").verdict, Verdict::fail);
  // Not read while busy: skipped, not passed.
  EXPECT_EQ(find(health_results(h, std::nullopt), "pcie_link").verdict, Verdict::skipped);
}

TEST(CheckHealth, NvlinkDownFailsAndMissingReadingsSkip) {
  NvmlHealth h = healthy_h100();
  for (unsigned i = 0; i < 18; ++i) h.nvlinks.push_back({i, i != 7, 4, "0000:00:07.0"});
  auto nvlink = find(health_results(h, PcieLink{5, 16}), "nvlink");
  EXPECT_EQ(nvlink.verdict, Verdict::fail);
  EXPECT_NE(nvlink.reason.find("NVLinks down: 7 (17 of 18 up)"), std::string::npos)
      << nvlink.reason;
  h.nvlinks[7].active = true;
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "nvlink").verdict, Verdict::pass);

  NvmlHealth bare;
  bare.found = true;
  for (const auto& r : health_results(bare, std::nullopt))
    EXPECT_EQ(r.verdict, Verdict::skipped) << r.name;
  NvmlHealth ecc_off = healthy_h100();
  ecc_off.ecc_enabled = false;
  ecc_off.ecc_pending = false;
  ecc_off.ecc_uncorrected_volatile.reset();
  const auto off = health_results(ecc_off, PcieLink{5, 16});
  EXPECT_EQ(find(off, "ecc_mode").verdict, Verdict::warn);
  EXPECT_EQ(find(off, "ecc_uncorrected").reason, "ECC is disabled");
}
