// Sample inputs of the check's pure logic and renderers, shared by their tests
// (tests/lib/check/, tests/apps/test_check_{text,json,prometheus}.cpp): an H100's identity as
// the driver gives it, an idle GPU's occupancy as NVML reads it, and two reports.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/check/check.hpp"
#include "cudatool/device/device_info.hpp"

namespace cudatool::testing {

inline DeviceInfo sample_h100(int ordinal = 0) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_capability = {9, 0};
  d.total_memory = 85029158912ull;
  d.multiprocessor_count = 132;
  d.pci_bus_id = "0000:00:06.0";
  d.uuid = "GPU-7d8a1b0c-1111-2222-3333-444455556666";
  d.memory_clock_rate_khz = 2619000;
  d.global_memory_bus_width = 5120;
  return d;
}

// No other process, no memory used by others, 0% over five readings in 0.1 s, default mode.
inline check::Occupancy idle_occupancy() {
  check::Occupancy o;
  o.processes = std::vector<check::GpuProcess>{};
  o.used_memory = 0;
  o.total_memory = 85029158912ull;
  o.used_excludes_reserved = true;
  o.gpu_utilization = 0;
  o.memory_utilization = 0;
  o.utilization_readings = 5;
  o.window_s = 0.1;
  o.compute_mode = 0;
  return o;
}

// A node with one H100 (NVML's GPU 3): its identity, compute, a failed host-to-device copy
// and a passed peer copy; the driver 580.159.04 of CUDA 13.0.
inline check::Report sample_report() {
  check::Report report;
  report.hostname = "gpu-node-17";
  report.cuda_version = 13000;
  report.driver_version = "580.159.04";
  report.kernel_form = "SASS sm_90 + PTX compute_75";
  report.seconds = 0.53;
  report.node_checks = check::node_identity_results({sample_h100(0)}, {}, std::nullopt);
  check::DeviceReport device{sample_h100(0), {}, std::nullopt};
  device.nvml_index = 3;  // nvidia-smi's GPU 3 is CUDA's device 0 (CUDA_VISIBLE_DEVICES=3)
  device.checks.push_back(check::identity_result(device.identity, {}, std::nullopt));
  device.checks.push_back(check::compute_result(0, 16777216, 132, 132, "SASS sm_90", ""));
  device.checks.push_back(check::rate_result(check::Quantity::host_to_device, 55.0, 63.0, 10000.0,
                                             0.75, "host to \"device\""));
  check::CheckResult peer =
      check::rate_result(check::Quantity::peer_copy, 391.0, 478.1, std::nullopt, 0.75, "0 to 1");
  peer.peer = 1;
  device.checks.push_back(peer);
  report.devices.push_back(device);
  return report;
}

// A device others use: python3 holding 77.7 GiB and Xorg, read by NVML without an index,
// and a host-to-device copy marked as shared with them.
inline check::Report occupancy_sample_report() {
  check::Report report;
  report.hostname = "gpu-node-17";
  report.cuda_version = 13000;
  check::DeviceReport device;
  device.identity.name = "NVIDIA H100 80GB HBM3";
  device.identity.uuid = "GPU-1";
  device.identity.pci_bus_id = "0000:1a:00.0";
  check::Occupancy o = idle_occupancy();
  o.processes = std::vector<check::GpuProcess>{{4242, "python3", 83429425152ull, true, false},
                                               {77, "Xorg", std::nullopt, false, true}};
  o.used_memory = 83429425152ull;
  device.occupancy = o;
  device.checks = check::occupancy_results(o, {});
  check::CheckResult h2d =
      check::rate_result(check::Quantity::host_to_device, 24.0, 63.0, std::nullopt, 0.75, "h2d");
  check::mark_shared(h2d, check::sharers(o, {}), {});
  device.checks.push_back(h2d);
  report.devices.push_back(device);
  return report;
}

// The result named `name`, or nullptr where there is none.
inline const check::CheckResult* result_named(const std::vector<check::CheckResult>& results,
                                              std::string_view name) {
  for (const auto& r : results)
    if (r.name == name) return &r;
  return nullptr;
}

// The result named `name` (string_view: a reference into `results`, never into the name).
inline const check::CheckResult& find_result(const std::vector<check::CheckResult>& results,
                                             std::string_view name) {
  if (const check::CheckResult* r = result_named(results, name)) return *r;
  throw std::runtime_error("no result " + std::string(name));
}

// "name=verdict " for each result, for a failure message.
inline std::string result_names(const std::vector<check::CheckResult>& results) {
  std::string out;
  for (const auto& r : results)
    out += r.name + "=" + std::string(check::verdict_name(r.verdict)) + " ";
  return out;
}

}  // namespace cudatool::testing
