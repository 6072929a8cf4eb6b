// check's Prometheus textfile (apps/cudatool/check_prometheus.cpp) from plain structs: no GPU, no
// driver. The reports are tests/support/check_samples.hpp's. The textfile as a Prometheus parser
// reads it, from the real binary, is tests/apps/prometheus_textfile.sh.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "check_samples.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/check/check.hpp"
#include "prometheus_exposition.hpp"
#include "render_check.hpp"

using namespace cudatool;
using namespace cudatool::check;
using cudatool::app::check_prometheus;
using cudatool::testing::occupancy_sample_report;
using cudatool::testing::sample_report;

namespace {

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

TEST(CheckPrometheus, OneMetricPerQuantityInBaseUnits) {
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
TEST(CheckPrometheus, HasAMetricForEveryMeasuredCheck) {
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
  checks.push_back(
      rate_result(Quantity::device_to_device, 2971.5, 3352.3, std::nullopt, 0.75, "d2d"));
  checks.push_back(rate_result(Quantity::device_to_host, 55.3, 63.0, std::nullopt, 0.75, "d2h"));
  const std::string text = check_prometheus(&report, {9, 0});
  expect_well_formed(text);
  std::size_t values = 0, thresholds = 0;
  for (const auto& c : report.node_checks) values += c.value ? 1 : 0;
  for (const auto& c : checks) {
    values += c.value ? 1 : 0;
    thresholds += c.value && c.threshold ? 1 : 0;
  }
  for (const auto& c : report.node_checks) thresholds += c.value && c.threshold ? 1 : 0;
  // The quantities' samples: every line that is not a comment, the node-level metrics, a
  // verdict or a remediation.
  std::size_t samples = 0;
  std::istringstream lines(text);
  std::string line;
  const std::regex threshold(R"(^cudatool_check_\w+_(min|max|limit|expected)(_[a-z_]+)?[{ ].*)");
  std::size_t threshold_samples = 0;
  for (std::string name; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    name = line.substr(0, line.find_first_of("{ "));
    if (name.ends_with("_verdict") || name.ends_with("_remediation") ||
        name == "cudatool_build_info" || name == "cudatool_check_driver_info" ||
        name == "cudatool_check_up" || name == "cudatool_check_success" ||
        name == "cudatool_check_exit_code" || name == "cudatool_check_devices" ||
        name == "cudatool_check_timestamp_seconds" || name == "cudatool_check_duration_seconds")
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
  // In base units as the library holds them, never multiplied back: 35% is 0.35 (it was
  // 35 x 0.01, 0.35000000000000003); a rate is bytes per second, a size bytes.
  Occupancy busy = o;
  busy.gpu_utilization = 35;
  for (auto& r : checks)
    if (r.name == "utilization") r = occupancy_results(busy, {})[2];
  const std::string again = check_prometheus(&report, {9, 0});
  EXPECT_TRUE(has(again, "cudatool_check_gpu_utilization_ratio{" + kLabels + "} 0.35\n")) << again;
  EXPECT_TRUE(has(
      text, "cudatool_check_device_to_device_bytes_per_second{" + kLabels + "} 2971500000000\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_device_to_device_min_bytes_per_second{" + kLabels + "} " +
                            cudatool::app::sample_value(0.75 * 3352.3 * 1e9) + "\n"))
      << text;
  EXPECT_TRUE(has(text, "cudatool_check_ecc_uncorrected_errors{" + kLabels + "} 2\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_ecc_enabled_expected{" + kLabels + "} 1\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_retired_pages_limit{" + kLabels + "} 63\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_clock_event_reasons{" + kLabels + "} 4\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_nvlinks_up{" + kLabels + "} 1\n")) << text;
  EXPECT_TRUE(has(text, "cudatool_check_pcie_link_bytes_per_second{" + kLabels + "} ")) << text;
}

// No driver or no device: the document is still whole (the textfile collector replaces the
// node's last file), with cudatool_check_up 0 and the exit code.
TEST(CheckPrometheus, WithoutAReportSaysTheCheckDidNotRun) {
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
TEST(CheckPrometheus, LabelsAreValidUtf8) {
  Report report = sample_report();
  report.hostname = "node\xff\xfe";
  report.devices[0].identity.name = "GPU \xc3(\"q\"\\\n";
  const std::string text = check_prometheus(&report, {9, 0});
  EXPECT_TRUE(has(text, "modelName=\"GPU \xef\xbf\xbd(\\\"q\\\"\\\\\\n\"")) << text;
  expect_well_formed(text);
}

TEST(CheckPrometheus, OccupancyAsItsOwnMetrics) {
  const Report report = occupancy_sample_report();
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
}
