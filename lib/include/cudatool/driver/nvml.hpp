// Free and used device memory from NVML (libnvidia-ml.so.1, opened at run time), which
// reads it without creating a CUDA context. NVML ignores CUDA_VISIBLE_DEVICES and orders
// devices by PCI bus, so callers join by PCI bus id. Everything here is best effort: when
// NVML is missing or fails, the answer is simply absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cudatool {

struct MemoryUsage {
  std::uint64_t total = 0;  // bytes
  std::uint64_t free = 0;   // bytes
  std::uint64_t used = 0;   // bytes
};

// Memory of the device at `pci_bus_id` ("0000:07:00.0"), or nullopt. Loads NVML once.
std::optional<MemoryUsage> nvml_memory_usage(const std::string& pci_bus_id);

// The driver's own version as nvidia-smi shows it ("580.159.04"), from
// nvmlSystemGetDriverVersion, or nullopt. Loads NVML once.
std::optional<std::string> nvml_driver_version();

// Starts loading and initialising NVML on a background thread, so its cost overlaps
// cuInit's; nvml_memory_usage waits for it.
void nvml_preload();

}  // namespace cudatool
