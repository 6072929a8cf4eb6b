// check's renderings (apps/cudatool/render_check.hpp: check_text.cpp, check_json.cpp,
// check_prometheus.cpp) from plain structs: text, the --json document and the Prometheus
// textfile (no GPU, no driver). The textfile as a Prometheus parser reads it, from the real
// binary, is tests/apps/prometheus_textfile.sh.
#include "render_check.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "check_samples.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;
using cudatool::app::check_json;
using cudatool::app::check_prometheus;
using cudatool::app::check_text;

namespace {

DeviceInfo h100(int ordinal = 0) {
  return cudatool::testing::sample_h100(ordinal);
}

Report sample_report() {
  Report report;
  report.hostname = "gpu-node-17";
  report.cuda_version = 13000;
  report.driver_version = "580.159.04";
  report.kernel_form = "SASS sm_90 + PTX compute_75";
  report.seconds = 0.53;
  report.node_checks = node_identity_results({h100(0)}, {}, std::nullopt);
  DeviceReport device{h100(0), {}, std::nullopt};
  device.nvml_index = 3;  // nvidia-smi's GPU 3 is CUDA's device 0 (CUDA_VISIBLE_DEVICES=3)
  device.checks.push_back(identity_result(device.identity, {}, std::nullopt));
  device.checks.push_back(compute_result(0, 16777216, 132, 132, "SASS sm_90", ""));
  device.checks.push_back(
      rate_result(Kind::hostlink, "h2d", 55.0, 63.0, 10000.0, 0.75, "host to \"device\""));
  CheckResult peer = rate_result(Kind::peer, "peer", 391.0, 478.1, std::nullopt, 0.75, "0 to 1");
  peer.peer = 1;
  device.checks.push_back(peer);
  report.devices.push_back(device);
  return report;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kLabels =
    "gpu=\"3\",UUID=\"GPU-7d8a1b0c-1111-2222-3333-444455556666\",pci_bus_id=\"00000000:00:06.0\","
    "modelName=\"NVIDIA H100 80GB HBM3\",cuda_device=\"0\"";

// The exposition format's structure: each family's HELP and TYPE once, before its samples,
// which are contiguous; valid metric and label names; no `unit` label (issue 22).
void expect_well_formed(const std::string& text) {
  std::istringstream lines(text);
  std::string line, current;
  std::set<std::string> families;
  std::map<std::string, std::string> label_names;  // family -> its first sample's names
  const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+))");
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(current).second) << "family written twice: " << current;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line, "# TYPE " + current + " gauge");
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    // Every sample of a family has the same label names (node_exporter and the Pushgateway
    // refuse "inconsistent label dimensions").
    std::string names;
    const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*")");
    for (std::sregex_iterator it(line.begin(), line.end(), label), end; it != end; ++it)
      names += (*it)[1].str() + ",";
    EXPECT_EQ(label_names.emplace(current, names).first->second, names) << line;
    EXPECT_TRUE(line.rfind(current + "{", 0) == 0 || line.rfind(current + " ", 0) == 0) << line;
    EXPECT_FALSE(has(line, "unit=")) << line;
  }
  EXPECT_EQ(valid_utf8(text), text);
}

}  // namespace

TEST(RenderCheck, TextHasABlockPerDeviceAndASummary) {
  const std::string text = check_text(sample_report());
  EXPECT_TRUE(has(text, "cudatool check on gpu-node-17 (CUDA driver 13.0; kernels: SASS sm_90"))
      << text;
  EXPECT_TRUE(has(text, "device 0  NVIDIA H100 80GB HBM3  sm_90")) << text;
  EXPECT_TRUE(has(text, "-> fail")) << text;
  EXPECT_TRUE(has(text, "fail    h2d              55 GB/s (>= 10000)")) << text;
  EXPECT_TRUE(has(text, "pass    peer->1          391 GB/s (>= 358.6)")) << text;
  EXPECT_TRUE(has(text, "summary: 1 device, 4 pass, 0 warn, 1 fail, 1 skipped in 0.53 s: fail"))
      << text;
}

TEST(RenderCheck, JsonCarriesEveryField) {
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

TEST(RenderCheck, PrometheusOneMetricPerQuantityInBaseUnits) {
  const Report report = sample_report();
  const std::string text = check_prometheus(&report, {9, 1795000000});
  expect_well_formed(text);
  EXPECT_TRUE(has(text, "# TYPE cudatool_build_info gauge\ncudatool_build_info{version=\"" +
                            std::string(CUDATOOL_VERSION) + "\",cuda_headers=\""))
      << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_up 1\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_success 0\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_exit_code 9\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_devices 1\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_timestamp_seconds 1795000000\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_duration_seconds 0.53\n")) << text;
  EXPECT_TRUE(has(text,
                  "\ncudatool_check_driver_info{driver_version=\"580.159.04\","
                  "cuda_version=\"13.0\"} 1\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_gpu_verdict{" + kLabels + ",verdict=\"fail\"} 1\n"));
  // A family's samples all carry the same label names: peer_gpu is empty where no peer is.
  EXPECT_TRUE(has(text, "cudatool_check_verdict{" + kLabels +
                            ",peer_gpu=\"\",check=\"hostlink\",name=\"h2d\",verdict=\"fail\"} 1\n"))
      << text;
  EXPECT_TRUE(
      has(text, "cudatool_check_verdict{" + kLabels +
                    ",peer_gpu=\"\",check=\"hostlink\",name=\"h2d\",verdict=\"pass\"} 0\n"));
  // Node checks carry no GPU's labels, in a family of their own.
  EXPECT_TRUE(has(
      text, "cudatool_check_node_verdict{check=\"identity\",name=\"count\",verdict=\"pass\"} 1\n"))
      << text;
  EXPECT_TRUE(has(text,
                  "# TYPE cudatool_check_host_to_device_bytes_per_second gauge\n"
                  "cudatool_check_host_to_device_bytes_per_second{" +
                      kLabels + "} 55000000000\n"))
      << text;
  EXPECT_TRUE(has(
      text, "cudatool_check_host_to_device_min_bytes_per_second{" + kLabels + "} 10000000000000\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_peer_copy_bytes_per_second{" + kLabels +
                            ",peer_gpu=\"1\"} 391000000000\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_verdict{" + kLabels +
                            ",peer_gpu=\"1\",check=\"peer\",name=\"peer\",verdict=\"pass\"} 1\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_compute_wrong_elements{" + kLabels + "} 0\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_compute_wrong_elements_max{" + kLabels + "} 0\n"));
  EXPECT_TRUE(has(text, "cudatool_check_qualifying_devices 1\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_qualifying_devices_min 1\n")) << text;
  EXPECT_FALSE(has(text, "GB/s")) << text;
  EXPECT_FALSE(has(text, "hostname")) << text;
}

// Every check that measures something has its metric (and its threshold its own): a check
// added without a row in the renderer's table would be missing from the textfile.
TEST(RenderCheck, PrometheusHasAMetricForEveryMeasuredCheck) {
  NvmlHealth h;
  h.found = true;
  h.ecc_enabled = true;
  h.ecc_uncorrected_volatile = 2;
  h.retired_pages = 3;
  h.retired_pages_pending = false;
  h.remapped_rows_uncorrectable = 1;
  h.remapped_rows_correctable = 0;
  h.throttle_reasons = 0x4;
  h.pcie_max_generation = 5;
  h.pcie_max_width = 16;
  h.nvlinks = {{0, true, 4, ""}, {1, false, 4, ""}};
  Report report = sample_report();
  auto& checks = report.devices[0].checks;
  for (auto& r : health_results(h, PcieLink{4, 16})) checks.push_back(r);
  Occupancy o;
  o.processes = std::vector<GpuProcess>{{4242, "python3", 83429425152ull, true, false}};
  o.used_memory = 83429425152ull;
  o.gpu_utilization = 37;
  o.compute_mode = 0;
  for (auto& r : occupancy_results(o, {})) checks.push_back(r);
  checks.push_back(rate_result(Kind::memory, "d2d", 2971.5, 3352.3, std::nullopt, 0.75, "d2d"));
  checks.push_back(rate_result(Kind::hostlink, "d2h", 55.3, 63.0, std::nullopt, 0.75, "d2h"));
  const std::string text = check_prometheus(&report, {9, 0});
  expect_well_formed(text);
  std::size_t values = 0, thresholds = 0;
  for (const auto& c : report.node_checks) values += c.value ? 1 : 0;
  for (const auto& c : checks) {
    values += c.value ? 1 : 0;
    thresholds += c.value && c.threshold ? 1 : 0;
  }
  for (const auto& c : report.node_checks) thresholds += c.value && c.threshold ? 1 : 0;
  // The quantities' samples: every line that is not a comment, the node-level metrics or
  // a verdict.
  std::size_t samples = 0;
  std::istringstream lines(text);
  std::string line;
  const std::regex threshold(R"(^cudatool_check_\w+_(min|max|limit|expected)(_[a-z_]+)?[{ ].*)");
  std::size_t threshold_samples = 0;
  for (std::string name; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    name = line.substr(0, line.find_first_of("{ "));
    if (name.ends_with("_verdict") || name == "cudatool_build_info" ||
        name == "cudatool_check_driver_info" || name == "cudatool_check_up" ||
        name == "cudatool_check_success" || name == "cudatool_check_exit_code" ||
        name == "cudatool_check_devices" || name == "cudatool_check_timestamp_seconds" ||
        name == "cudatool_check_duration_seconds")
      continue;
    ++samples;
    if (std::regex_match(line, threshold)) ++threshold_samples;
  }
  EXPECT_EQ(samples, values + thresholds) << text;
  EXPECT_EQ(threshold_samples, thresholds) << text;
  EXPECT_TRUE(
      has(text, "cudatool_check_memory_used_by_others_bytes{" + kLabels + "} 83429425152\n"))
      << text;
  EXPECT_TRUE(
      has(text, "cudatool_check_memory_used_by_others_max_bytes{" + kLabels + "} 1073741824\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_gpu_utilization_ratio{" + kLabels + "} 0.37\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_ecc_uncorrected_errors{" + kLabels + "} 2\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_ecc_enabled_expected{" + kLabels + "} 1\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_retired_pages_limit{" + kLabels + "} 63\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_clock_event_reasons{" + kLabels + "} 4\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_nvlinks_up{" + kLabels + "} 1\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_pcie_link_bytes_per_second{" + kLabels + "} ")) << text;
}

// No driver or no device: the document is still whole (the textfile collector replaces the
// node's last file), with cudatool_check_up 0 and the exit code.
TEST(RenderCheck, PrometheusWithoutAReportSaysTheCheckDidNotRun) {
  const std::string text = check_prometheus(nullptr, {3, 1795000000});
  expect_well_formed(text);
  EXPECT_TRUE(has(text, "\ncudatool_check_up 0\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_success 0\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_exit_code 3\n")) << text;
  EXPECT_TRUE(has(text, "\ncudatool_check_devices 0\n")) << text;
  EXPECT_TRUE(text.starts_with("# HELP cudatool_build_info ")) << text;
  EXPECT_FALSE(has(text, "cudatool_check_verdict")) << text;
}

// A device name or hostname that is not UTF-8 was written raw, and Prometheus' parser
// rejected the whole file; each bad byte is U+FFFD, as in the JSON (issue 20, item 13).
TEST(RenderCheck, PrometheusLabelsAreValidUtf8) {
  Report report = sample_report();
  report.hostname = "node\xff\xfe";
  report.devices[0].identity.name = "GPU \xc3(\"q\"\\\n";
  const std::string text = check_prometheus(&report, {9, 0});
  EXPECT_TRUE(has(text, "modelName=\"GPU \xef\xbf\xbd(\\\"q\\\"\\\\\\n\"")) << text;
  expect_well_formed(text);
}

TEST(RenderCheck, OccupancyInJsonTextAndPrometheus) {
  Report report;
  report.hostname = "gpu-node-17";
  report.cuda_version = 13000;
  DeviceReport device;
  device.identity.name = "NVIDIA H100 80GB HBM3";
  device.identity.uuid = "GPU-1";
  device.identity.pci_bus_id = "0000:1a:00.0";
  Occupancy o = cudatool::testing::idle_occupancy();
  o.processes = std::vector<GpuProcess>{{4242, "python3", 83429425152ull, true, false},
                                        {77, "Xorg", std::nullopt, false, true}};
  o.used_memory = 83429425152ull;
  device.occupancy = o;
  device.checks = occupancy_results(o, {});
  CheckResult h2d = rate_result(Kind::hostlink, "h2d", 24.0, 63.0, std::nullopt, 0.75, "h2d");
  mark_shared(h2d, sharers(o, {}), {});
  device.checks.push_back(h2d);
  report.devices.push_back(device);

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

  const std::string text = check_text(report);
  EXPECT_TRUE(has(text, "warn    processes        2 processes (<= 0)")) << text;
  EXPECT_TRUE(
      has(text, "pid 4242 (python3, 77.7 GiB), pid 77 (Xorg, graphics, memory not reported)"))
      << text;
  const std::string prom = check_prometheus(&report, {0, 0});
  // Without NVML's index, no gpu label (never the CUDA ordinal in its place).
  const std::string labels =
      "UUID=\"GPU-1\",pci_bus_id=\"00000000:1A:00.0\","
      "modelName=\"NVIDIA H100 80GB HBM3\",cuda_device=\"0\"";
  EXPECT_TRUE(has(prom, "cudatool_check_memory_used_by_others_bytes{" + labels + "} 83429425152\n"))
      << prom;
  EXPECT_TRUE(has(prom, "cudatool_check_other_processes{" + labels + "} 2\n")) << prom;
  EXPECT_TRUE(has(prom, "check=\"occupancy\",name=\"processes\",verdict=\"warn\"} 1")) << prom;
  EXPECT_TRUE(has(prom, "\ncudatool_check_success 1\n")) << prom;

  // No NVML reading: no occupancy object.
  report.devices[0].occupancy.reset();
  EXPECT_FALSE(check_json(report, 0)["devices"][0].contains("occupancy"));
}
