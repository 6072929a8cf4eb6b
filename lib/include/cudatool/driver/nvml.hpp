// What the library reads from NVML (libnvidia-ml.so.1, opened at run time), which answers
// without creating a CUDA context, as the plain structs the public API returns (free and used
// memory, the health check's readings), and NVML's form of a PCI bus id. NVML ignores
// CUDA_VISIBLE_DEVICES and orders devices by PCI bus, so callers join by PCI bus id. The
// queries themselves are internal (lib/src/driver/nvml_queries.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

struct MemoryUsage {
  std::uint64_t total = 0;  // bytes
  std::uint64_t free = 0;   // bytes
  std::uint64_t used = 0;   // bytes
};

// A PCI bus id in NVML's form, as nvidia-smi (pci.bus_id) and dcgm-exporter (its pci_bus_id
// label) write it: "00000000:1A:00.0", the domain in 8 hex digits, hex digits upper-case.
// From CUDA's form ("0000:1a:00.0", cuDeviceGetPCIBusId) or NVML's own; nullopt where `id`
// is not DOMAIN:BUS:DEVICE.FUNCTION in hex (at most 8, 2, 2 and 1 digits).
std::optional<std::string> nvml_pci_bus_id(std::string_view id);

// What the health check reads from NVML, one optional per reading: absent where NVML
// answers "not supported" (or fails) for the device.
struct NvmlHealth {
  bool found = false;  // the device was found in NVML by its PCI bus id
  std::optional<bool> ecc_enabled, ecc_pending;
  std::optional<unsigned long long> ecc_uncorrected_volatile;
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> retired_pages;  // single-bit and double-bit causes together
  std::optional<unsigned> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<unsigned long long> throttle_reasons;  // nvmlClocksEventReasons bits
  std::optional<unsigned> pcie_max_generation, pcie_max_width;
  std::optional<bool> mig_enabled;
  // NVLink: one entry per link NVML knows of (link number, active, version, the remote
  // end's PCI bus id where NVML says).
  struct NvLink {
    unsigned link = 0;
    bool active = false;
    unsigned version = 0;
    std::string remote_pci_bus_id;
  };
  std::vector<NvLink> nvlinks;
  // The NVLink fabric (nvmlDeviceGetGpuFabricInfo): state 0 not supported, 1 not started,
  // 2 in progress, 3 completed; status, the registration's nvmlReturn_t once completed.
  std::optional<unsigned> fabric_state, fabric_status;
  // Why NVML could not find the device (found false): nvmlDeviceGetHandleByPciBusId_v2's
  // nvmlReturn_t (15: the GPU is lost; 6: not found).
  std::optional<int> lookup_error;
};

// nvmlReturn_t's name for the errors a broken GPU answers ("NVML_ERROR_GPU_IS_LOST"), else
// "nvmlReturn_t N".
std::string nvml_error_name(int result);

// A PCIe link's current generation and width (sampled while the link is busy: an idle
// link down-trains).
struct PcieLink {
  unsigned generation = 0;
  unsigned width = 0;
};

}  // namespace cudatool
