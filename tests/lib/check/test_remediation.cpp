// Remediations (lib/src/check/remediation.cpp): the table of cudatool(1) for every check,
// the health readings that know better (a pending row remap needs a reboot, a failed one the
// hardware inspected), and a device's and a node's worst. Plain structs, no GPU.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

namespace {

CheckResult result(Kind kind, std::string name, Verdict verdict) {
  CheckResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.verdict = verdict;
  return r;
}

NvmlHealth healthy() {
  NvmlHealth h;
  h.found = true;
  h.ecc_enabled = true;
  h.ecc_uncorrected_volatile = 0;
  h.remapped_rows_correctable = 0;
  h.remapped_rows_uncorrectable = 0;
  h.remap_pending = false;
  h.remap_failed = false;
  h.throttle_reasons = 0x1;
  h.pcie_max_generation = 5;
  h.pcie_max_width = 16;
  return h;
}

CheckResult find(const std::vector<CheckResult>& results, const std::string& name) {
  for (const auto& r : results)
    if (r.name == name) return r;
  throw std::runtime_error("no result " + name);
}

}  // namespace

TEST(Remediation, NamesAndOrder) {
  std::vector<std::string> names;
  for (Remediation r : all_remediations()) names.emplace_back(remediation_name(r));
  EXPECT_EQ(names, (std::vector<std::string>{"none", "monitor", "restart_job", "reset_gpu",
                                             "reboot_node", "drain_inspect"}));
  EXPECT_EQ(worse(Remediation::reset_gpu, Remediation::monitor), Remediation::reset_gpu);
  EXPECT_EQ(worse(Remediation::reset_gpu, Remediation::drain_inspect), Remediation::drain_inspect);
  EXPECT_EQ(remediation_text(Remediation::reboot_node), "reboot the node");
}

TEST(Remediation, TheTableForEveryCheck) {
  // Pass and skipped: nothing; a warning: monitor, whatever the check.
  for (Kind k : all_kinds()) {
    EXPECT_EQ(remediation_of(result(k, "x", Verdict::pass)), Remediation::none);
    EXPECT_EQ(remediation_of(result(k, "x", Verdict::skipped)), Remediation::none);
    EXPECT_EQ(remediation_of(result(k, "x", Verdict::warn)), Remediation::monitor);
  }
  struct Case {
    Kind kind;
    const char* name;
    Remediation remediation;
  };
  for (const Case& c : {Case{Kind::identity, "count", Remediation::drain_inspect},
                        Case{Kind::identity, "identity", Remediation::drain_inspect},
                        Case{Kind::identity, "device", Remediation::reset_gpu},
                        Case{Kind::occupancy, "processes", Remediation::restart_job},
                        Case{Kind::occupancy, "used_memory", Remediation::restart_job},
                        Case{Kind::health, "ecc_uncorrected", Remediation::reset_gpu},
                        Case{Kind::health, "nvlink", Remediation::reset_gpu},
                        Case{Kind::health, "nvml", Remediation::reset_gpu},
                        Case{Kind::health, "row_remap", Remediation::reboot_node},
                        Case{Kind::health, "nvlink_fabric", Remediation::reboot_node},
                        Case{Kind::health, "throttle", Remediation::drain_inspect},
                        Case{Kind::health, "pcie_link", Remediation::drain_inspect},
                        Case{Kind::xid, "xid", Remediation::reset_gpu},
                        Case{Kind::compute, "compute", Remediation::drain_inspect},
                        Case{Kind::memory, "d2d", Remediation::drain_inspect},
                        Case{Kind::hostlink, "h2d", Remediation::drain_inspect},
                        Case{Kind::peer, "peer", Remediation::drain_inspect}})
    EXPECT_EQ(remediation_of(result(c.kind, c.name, Verdict::fail)), c.remediation) << c.name;
  // A check's own remediation wins over the table.
  CheckResult own = result(Kind::compute, "compute", Verdict::fail);
  own.remediation = Remediation::reset_gpu;
  EXPECT_EQ(remediation_of(own), Remediation::reset_gpu);
}

TEST(Remediation, RowRemapPendingRebootsFailedInspects) {
  NvmlHealth h = healthy();
  h.remap_pending = true;
  CheckResult r = find(health_results(h, PcieLink{5, 16}), "row_remap");
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(remediation_of(r), Remediation::reboot_node) << r.reason;
  h.remap_failed = true;
  r = find(health_results(h, PcieLink{5, 16}), "row_remap");
  EXPECT_EQ(remediation_of(r), Remediation::drain_inspect) << r.reason;
  EXPECT_NE(r.reason.find("a row remap failed"), std::string::npos) << r.reason;
  h = healthy();
  h.remapped_rows_uncorrectable = 512;
  EXPECT_EQ(remediation_of(find(health_results(h, PcieLink{5, 16}), "row_remap")),
            Remediation::drain_inspect);
  h = healthy();
  h.retired_pages = 3;
  h.retired_pages_pending = true;
  EXPECT_EQ(remediation_of(find(health_results(h, PcieLink{5, 16}), "retired_pages")),
            Remediation::reboot_node);
  h.retired_pages = 63;
  EXPECT_EQ(remediation_of(find(health_results(h, PcieLink{5, 16}), "retired_pages")),
            Remediation::drain_inspect);
}

TEST(Remediation, PcieDowntrainingNamesWhatTrainedDown) {
  const NvmlHealth h = healthy();
  CheckResult r = find(health_results(h, PcieLink{4, 16}), "pcie_link");
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(remediation_of(r), Remediation::drain_inspect);
  EXPECT_NE(r.reason.find("below its maximum generation under load"), std::string::npos)
      << r.reason;
  r = find(health_results(h, PcieLink{5, 8}), "pcie_link");
  EXPECT_NE(r.reason.find("below its maximum width under load"), std::string::npos) << r.reason;
  r = find(health_results(h, PcieLink{3, 4}), "pcie_link");
  EXPECT_NE(r.reason.find("generation, width"), std::string::npos) << r.reason;
  EXPECT_DOUBLE_EQ(r.value.value_or(0), pcie_theoretical_gbps(3, 4) * kBytesPerGB);
  EXPECT_EQ(r.quantity, Quantity::pcie_link);
}

TEST(Remediation, NvlinkFabricState) {
  NvmlHealth h = healthy();
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "nvlink_fabric").verdict, Verdict::skipped);
  h.fabric_state = 0;  // not supported
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "nvlink_fabric").verdict, Verdict::skipped);
  h.fabric_state = 2;  // in progress
  CheckResult r = find(health_results(h, PcieLink{5, 16}), "nvlink_fabric");
  EXPECT_EQ(r.verdict, Verdict::warn);
  EXPECT_NE(r.reason.find("not finished"), std::string::npos);
  h.fabric_state = 3;
  h.fabric_status = 0;
  EXPECT_EQ(find(health_results(h, PcieLink{5, 16}), "nvlink_fabric").verdict, Verdict::pass);
  h.fabric_status = 999;
  r = find(health_results(h, PcieLink{5, 16}), "nvlink_fabric");
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(remediation_of(r), Remediation::reboot_node);
}

TEST(Remediation, ALostGpuFailsInsteadOfSkipping) {
  NvmlHealth h;
  h.lookup_error = 6;  // NVML does not list it: skipped, as before
  ASSERT_EQ(health_results(h, std::nullopt).size(), 1u);
  EXPECT_EQ(health_results(h, std::nullopt)[0].verdict, Verdict::skipped);
  h.lookup_error = 15;
  CheckResult r = health_results(h, std::nullopt)[0];
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(remediation_of(r), Remediation::reboot_node);
  EXPECT_NE(r.reason.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << r.reason;
  h.lookup_error = 999;
  EXPECT_EQ(remediation_of(health_results(h, std::nullopt)[0]), Remediation::reset_gpu);
}

TEST(Remediation, TheWorstOfADeviceAndOfTheNode) {
  Report report;
  DeviceReport a, b;
  a.checks = {result(Kind::compute, "compute", Verdict::pass),
              result(Kind::health, "ecc_mode", Verdict::warn)};
  b.checks = {result(Kind::xid, "xid", Verdict::fail)};
  b.checks[0].remediation = Remediation::reboot_node;
  report.devices = {a, b};
  EXPECT_EQ(report.devices[0].remediation(), Remediation::monitor);
  EXPECT_EQ(report.devices[1].remediation(), Remediation::reboot_node);
  EXPECT_EQ(report.remediation(), Remediation::reboot_node);
  report.node_checks = {result(Kind::identity, "count", Verdict::fail)};
  EXPECT_EQ(report.remediation(), Remediation::drain_inspect);
  EXPECT_EQ(Report{}.remediation(), Remediation::none);
}
