// check's --json document (apps/cudatool/check_json.cpp) from plain structs: no GPU, no driver. The
// reports are tests/support/check_samples.hpp's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"
#include "render_check.hpp"

using namespace cudatool;
using namespace cudatool::check;
using cudatool::testing::occupancy_sample_report;
using cudatool::testing::sample_report;

namespace {

// The document as its text reads back.
nlohmann::json check_json(const Report& report, int exit_code) {
  return nlohmann::json::parse(cudatool::app::check_json(report, exit_code).text());
}

}  // namespace

TEST(CheckJson, CarriesEveryField) {
  const nlohmann::json j = check_json(sample_report(), 9);
  EXPECT_EQ(j["hostname"], "gpu-node-17");
  // One meaning of driver_version everywhere: the driver's own version, as in devices.
  EXPECT_EQ(j["driver_version"], "580.159.04");
  EXPECT_EQ(j["cuda_version"], "13.0");
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["exit_code"], 9);
  EXPECT_EQ(j["summary"]["fail"], 1);
  EXPECT_EQ(j["node_checks"][1]["name"], "homogeneous");
  EXPECT_EQ(j["node_checks"][1]["value"], nullptr);
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["uuid"], "GPU-7d8a1b0c-1111-2222-3333-444455556666");
  EXPECT_EQ(d["pci_bus_id"], "0000:00:06.0");
  EXPECT_EQ(d["pci_bus_id_nvml"], "00000000:00:06.0");
  EXPECT_EQ(d["nvml_index"], 3);
  EXPECT_EQ(d["ordinal"], 0);
  EXPECT_EQ(d["multiprocessor_count"], 132);
  EXPECT_EQ(d["verdict"], "fail");
  EXPECT_EQ(d["checks"][2]["check"], "hostlink");
  EXPECT_EQ(d["checks"][2]["threshold"], 10000.0);
  EXPECT_EQ(d["checks"][3]["peer"], 1);
  EXPECT_FALSE(d["checks"][0].contains("peer"));
  // Where neither NVML nor /proc says, the driver's version is absent, as in devices.
  Report unknown = sample_report();
  unknown.driver_version.reset();
  EXPECT_FALSE(check_json(unknown, 9).contains("driver_version"));
}

TEST(CheckJson, OccupancyOfEachDeviceAndTheChecksItShares) {
  Report report = occupancy_sample_report();
  const Occupancy& o = *report.devices[0].occupancy;
  const nlohmann::json j = check_json(report, 0);
  const auto& occupancy = j["devices"][0]["occupancy"];
  EXPECT_EQ(occupancy["processes"][0]["pid"], 4242);
  EXPECT_EQ(occupancy["processes"][0]["name"], "python3");
  EXPECT_EQ(occupancy["processes"][0]["used_memory_bytes"], 83429425152ull);
  EXPECT_EQ(occupancy["processes"][1]["used_memory_bytes"], nullptr);
  EXPECT_EQ(occupancy["processes"][1]["graphics"], true);
  EXPECT_EQ(occupancy["compute_mode"], "default");
  EXPECT_EQ(occupancy["gpu_utilization_percent"], 0);
  EXPECT_EQ(occupancy["context_refused"], false);
  EXPECT_EQ(j["devices"][0]["checks"][0]["check"], "occupancy");
  EXPECT_EQ(j["devices"][0]["checks"][4]["verdict"], "warn");
  EXPECT_EQ(j["devices"][0]["checks"][4]["shared_with"], sharers(o, {}));
  EXPECT_FALSE(j["devices"][0]["checks"][0].contains("shared_with"));
  EXPECT_EQ(j["verdict"], "warn");
  // The bus id in NVML's form: 8 hex digits of domain, upper-case hex, as nvidia-smi.
  EXPECT_EQ(j["devices"][0]["pci_bus_id_nvml"], "00000000:1A:00.0");
  EXPECT_FALSE(j["devices"][0].contains("nvml_index"));

  // No NVML reading: no occupancy object.
  report.devices[0].occupancy.reset();
  EXPECT_FALSE(check_json(report, 0)["devices"][0].contains("occupancy"));
}
