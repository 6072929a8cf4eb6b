// What NVML says about every GPU of the machine without cuInit: which GPUs are there (PCI
// bus id, UUID) and the settings that can change while the machine runs and that CUDA's
// answers depend on (MIG mode, ECC mode, compute mode, display). The device cache
// (device/device_cache.hpp) keeps these readings beside the driver's answers and trusts a
// kept answer only while its readings are unchanged. NVML ignores CUDA_VISIBLE_DEVICES and
// orders GPUs by PCI bus.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

// One NVML query's outcome as text, "0:1,0" (nvmlReturn_t, then the values it returned), so
// that two readings compare as strings and an error ("3:" for not supported) is a reading too.
using NvmlReading = std::string;

struct NvmlGpu {
  std::string pci_bus_id;  // as NVML writes it: "00000000:07:00.0"
  std::string uuid;        // "GPU-..."
  // "mig" (nvmlDeviceGetMigMode: current, pending), "ecc" (nvmlDeviceGetEccMode: current,
  // pending), "compute_mode" (nvmlDeviceGetComputeMode), "display" (nvmlDeviceGetDisplayMode,
  // nvmlDeviceGetDisplayActive).
  std::map<std::string, NvmlReading> readings;
};

struct NvmlInventory {
  std::string driver_version;  // nvmlSystemGetDriverVersion
  std::vector<NvmlGpu> gpus;   // NVML's order (PCI bus)
};

// The names of the readings (NvmlGpu::readings), each one or two NVML queries per GPU.
inline constexpr std::array<std::string_view, 4> kNvmlReadings = {"mig", "ecc", "compute_mode",
                                                                  "display"};

// The inventory with the named readings only (every one by default; none names the GPUs
// only), or nullopt where NVML is unavailable or cannot count or name its GPUs. A caller that
// needs one setting asks for that one: each query is an ioctl of its own.
std::optional<NvmlInventory> nvml_inventory(
    std::span<const std::string_view> readings = kNvmlReadings);

// Whether `reading` is NVML's "not supported" (nvmlReturn_t 3): a setting the GPU does not
// have, which cannot change while the driver and the GPU stay the same.
bool nvml_not_supported(const NvmlReading& reading);

}  // namespace cudatool
