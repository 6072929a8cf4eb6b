// What `cudatool devices` reports: plain structs filled from the driver (and NVML for
// free/used memory) and a requirements check for CI smoke tests; their JSON is the app's
// (apps/cudatool/devices_json.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/device/device.hpp"
#include "cudatool/driver/nvml.hpp"

namespace cudatool {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  ComputeCapability compute_capability;
  std::uint64_t total_memory = 0;  // bytes
  int multiprocessor_count = 0;
  std::string pci_bus_id;  // "0000:07:00.0"
  std::string uuid;        // "GPU-..."
  int max_threads_per_block = 0;
  int max_shared_memory_per_block_optin = 0;  // bytes
  int l2_cache_size = 0;                      // bytes
  int clock_rate_khz = 0;
  int memory_clock_rate_khz = 0;
  int global_memory_bus_width = 0;          // bits
  std::optional<MemoryUsage> memory_usage;  // from NVML, when present
  // Set where the driver did not answer a query for this device (a GPU that answers NVML
  // but not CUDA): its error; the fields it could read (bus id, UUID) are filled, the others
  // are zero and `name` is "".
  std::string error;

  // Throws where any query fails.
  static DeviceInfo from_device(const Device& device);
  // Never throws for a failed query of this device: whatever the driver answered, and
  // `error` (a driver too old for an entry point still throws LibraryNotFoundError).
  static DeviceInfo describe(const Device& device);
};

struct DeviceListing {
  int cuda_version = 0;  // cuDriverGetVersion, 13000 for CUDA 13.0
  // The driver's own version, "580.159.04" (driver_release.hpp); absent where unknown.
  std::optional<std::string> driver_version;
  std::vector<DeviceInfo> devices;
  // peer_access[i][j]: device i can access device j's memory (false on the diagonal);
  // only filled where there is more than one device.
  std::vector<std::vector<bool>> peer_access;
};

// Every visible device. Creates no context. `with_memory_usage` asks NVML for free/used
// (and then NVML first for the driver's version).
DeviceListing list_devices(bool with_memory_usage = true);

struct DeviceRequirements {
  std::optional<int> min_count;
  std::optional<ComputeCapability> min_compute_capability;
  std::optional<std::uint64_t> min_memory;  // bytes of total memory
  bool any() const { return min_count || min_compute_capability || min_memory; }
};

struct RequirementReport {
  bool met = true;
  int qualifying = 0;                 // devices meeting the per-device requirements
  std::vector<std::string> problems;  // one sentence per failing check
};

// A device qualifies when it meets the compute capability and memory minimums; the set
// passes when at least min_count (default 1) devices qualify.
RequirementReport check_requirements(const std::vector<DeviceInfo>& devices,
                                     const DeviceRequirements& requirements);

// The compute capability an architecture names (Arch's grammar: "9.0", "sm_90", "sm_90a",
// "compute_90" -> {9, 0}); UsageError naming `source` otherwise.
ComputeCapability parse_compute_capability(std::string_view text, std::string_view source);

}  // namespace cudatool
