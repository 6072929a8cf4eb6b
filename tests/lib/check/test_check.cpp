// The threshold logic of `cudatool check`, from plain structs (no GPU); its renderers are
// tested in tests/apps/test_render_check.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "check_samples.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

namespace {

DeviceInfo h100(int ordinal = 0) {
  return cudatool::testing::sample_h100(ordinal);
}

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

const CheckResult& find(const std::vector<CheckResult>& results, const std::string& name) {
  for (const auto& r : results)
    if (r.name == name) return r;
  throw std::runtime_error("no result " + name);
}

}  // namespace

TEST(CheckKinds, ParsesListsAndRejectsUnknownNames) {
  EXPECT_EQ(parse_kind_list("compute,memory", "--only"),
            (std::set<Kind>{Kind::compute, Kind::memory}));
  EXPECT_EQ(select_kinds(std::nullopt, std::nullopt).size(), 7u);
  EXPECT_EQ(select_kinds(std::nullopt, std::string("peer,health")),
            (std::set<Kind>{Kind::identity, Kind::occupancy, Kind::compute, Kind::memory,
                            Kind::hostlink}));
  EXPECT_EQ(parse_kind_list("occupancy", "--only"), (std::set<Kind>{Kind::occupancy}));
  try {
    parse_kind_list("compute,gpu-burn", "--only");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown check \"gpu-burn\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("hostlink"), std::string::npos);
  }
  EXPECT_THROW(parse_kind_list("", "--only"), UsageError);
  EXPECT_THROW(parse_kind_list("compute,", "--only"), UsageError);
  EXPECT_THROW(select_kinds(std::string("compute"), std::string("peer")), UsageError);
}

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

TEST(CheckCompute, MismatchFailsAndMissingSmsWarn) {
  EXPECT_EQ(compute_result(0, 16777216, 132, 132, "SASS sm_90", "").verdict, Verdict::pass);
  const auto bad = compute_result(1, 16777216, 132, 132, "SASS sm_90", "element 8 is 0x1");
  EXPECT_EQ(bad.verdict, Verdict::fail);
  EXPECT_NE(bad.reason.find("first: element 8 is 0x1"), std::string::npos);
  EXPECT_EQ(compute_result(0, 16777216, 100, 132, "SASS sm_90", "").verdict, Verdict::warn);
}

TEST(CheckCompute, KernelFormFollowsTheDriversChoice) {
  const int sass[] = {75, 80, 86, 89, 90, 100, 120};
  EXPECT_EQ(kernel_form({9, 0}, sass, 75), "SASS sm_90");
  EXPECT_EQ(kernel_form({8, 7}, sass, 75), "SASS sm_86");  // Orin runs 8.6 code
  EXPECT_EQ(kernel_form({12, 1}, sass, 75), "SASS sm_120");
  EXPECT_EQ(kernel_form({11, 0}, sass, 75), "PTX compute_75 (JIT)");
  EXPECT_EQ(kernel_form({7, 0}, sass, 75).rfind("none", 0), 0u);
}

TEST(CheckCompute, PatternIsTheKernelsFunction) {
  // Fixed values: a change on one side only (host or check_kernels.cu) shows here and on the GPU.
  EXPECT_EQ(pattern(0, 0), 0u);
  EXPECT_NE(pattern(1, 0x9e3779b9u), pattern(2, 0x9e3779b9u));
  EXPECT_NE(pattern(1ull << 32, 0), pattern(0, 0));
}

TEST(CheckIdentity, RequirementsNameAndHeterogeneity) {
  DeviceRequirements req;
  req.min_compute_capability = ComputeCapability{10, 0};
  auto r = identity_result(h100(), req, std::nullopt);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(r.reason, "compute capability 9.0, need 10.0");
  EXPECT_EQ(identity_result(h100(), {}, std::string("H100")).verdict, Verdict::pass);
  EXPECT_EQ(identity_result(h100(), {}, std::string("H200")).verdict, Verdict::fail);

  DeviceInfo other = h100(1);
  other.name = "NVIDIA A100-SXM4-80GB";
  auto node = node_identity_results({h100(0), other}, {}, std::nullopt);
  EXPECT_EQ(find(node, "count").verdict, Verdict::pass);
  EXPECT_EQ(find(node, "homogeneous").verdict, Verdict::warn);
  node = node_identity_results({h100(0)}, {}, 2);
  EXPECT_EQ(find(node, "count").verdict, Verdict::fail);
  DeviceRequirements two;
  two.min_count = 2;
  EXPECT_EQ(find(node_identity_results({h100(0), h100(1)}, two, std::nullopt), "count").verdict,
            Verdict::pass);
  EXPECT_EQ(find(node_identity_results({h100(0)}, {}, std::nullopt), "homogeneous").verdict,
            Verdict::skipped);
}

TEST(CheckVerdicts, WorstWinsAndMedianIsMiddle) {
  EXPECT_EQ(worse(Verdict::pass, Verdict::skipped), Verdict::pass);
  EXPECT_EQ(worse(Verdict::warn, Verdict::fail), Verdict::fail);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(median({}), 0);
}
