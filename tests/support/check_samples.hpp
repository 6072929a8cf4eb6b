// Sample inputs of the check's pure logic and renderers, shared by their tests
// (tests/lib/check/, tests/apps/test_render_check.cpp): an H100's identity as the driver
// gives it, and an idle GPU's occupancy as NVML reads it.
#pragma once

#include <cstdint>
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

}  // namespace cudatool::testing
