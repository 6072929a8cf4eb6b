// NVML's queries (libnvidia-ml.so.1, opened at run time on first use; CUDATOOL_LIBNVML names
// another file, CUDATOOL_NO_NVML turns it off). Everything here is best effort: when NVML is
// missing or fails, the answer is simply absent. The readings the public API returns are in
// cudatool/driver/nvml.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/driver/nvml.hpp"

namespace cudatool {

// Memory of the device at `pci_bus_id` ("0000:07:00.0"), or nullopt. Loads NVML once.
std::optional<MemoryUsage> nvml_memory_usage(const std::string& pci_bus_id);

// The driver's own version as nvidia-smi shows it ("580.159.04"), from
// nvmlSystemGetDriverVersion, or nullopt. Loads NVML once.
std::optional<std::string> nvml_driver_version();

// Whether NVML is loaded and initialised; when not, `why` says why ("CUDATOOL_NO_NVML is
// set", "libnvidia-ml.so.1 not found", "nvmlInit_v2 failed: 9"). CUDATOOL_LIBNVML names
// another file to open instead of libnvidia-ml.so.1 (tests use a fake NVML).
bool nvml_available(std::string* why = nullptr);

// Begins loading and initialising NVML on a thread of its own and returns at once: a caller
// that will need NVML soon overlaps NVML's start (10-20 ms on an H100 host) with its own
// work. Every NVML call here waits for that start; calling this again does nothing.
void start_nvml();

// The readings of the device at `pci_bus_id`; nullopt where NVML is unavailable.
std::optional<NvmlHealth> nvml_health(const std::string& pci_bus_id);

// Every GPU NVML knows of, in its index order, with the error its handle query answered
// (0 where it answered; 15, NVML_ERROR_GPU_IS_LOST, for a GPU off the bus), and its PCI bus
// id (NVML's form) and UUID where they could be read. nullopt where NVML is unavailable.
struct NvmlDeviceState {
  unsigned index = 0;
  int error = 0;
  std::string pci_bus_id;  // "00000000:01:00.0"; "" where unknown
  std::string uuid;        // "GPU-..."; "" where unknown
};
std::optional<std::vector<NvmlDeviceState>> nvml_devices();

// The PCIe link's current generation and width (sampled by the caller while the link is
// busy: an idle link down-trains); nullopt where NVML cannot say.
std::optional<PcieLink> nvml_current_pcie_link(const std::string& pci_bus_id);

// Who else uses the device, as NVML sees it without a CUDA context: the processes with a
// compute or graphics context on it, its memory and compute mode. Read by `check` before
// it creates its own context.
struct NvmlProcess {
  unsigned pid = 0;
  // Absent where NVML cannot say (NVML_VALUE_NOT_AVAILABLE: Windows WDDM, some containers).
  std::optional<std::uint64_t> used_memory;
  bool compute = false;
  bool graphics = false;
};
struct NvmlOccupancy {
  bool found = false;  // the device was found in NVML by its PCI bus id
  // Absent where NVML cannot list them (`processes_why_not` says why).
  std::optional<std::vector<NvmlProcess>> processes;
  std::string processes_why_not;
  // `used` excludes the driver's own reservation where NVML has nvmlDeviceGetMemoryInfo_v2
  // (`used_excludes_reserved`); the older call counts it as used.
  std::optional<MemoryUsage> memory;
  bool used_excludes_reserved = false;
  std::optional<unsigned>
      compute_mode;  // nvmlComputeMode_t: 0 default, 2 prohibited, 3 exclusive process
};
std::optional<NvmlOccupancy> nvml_occupancy(const std::string& pci_bus_id);

// nvmlDeviceGetUtilizationRates: the percentage of the driver's last sample period (1/6 s to
// 1 s, by product) in which a kernel ran, and in which device memory was read or written.
struct NvmlUtilization {
  unsigned gpu = 0;
  unsigned memory = 0;
};
std::optional<NvmlUtilization> nvml_utilization(const std::string& pci_bus_id);

// NVML's index of the device at `pci_bus_id` (nvmlDeviceGetIndex): what nvidia-smi and
// dcgm-exporter (its `gpu` label) call the GPU, in NVML's order over every GPU it sees,
// whatever CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER say (the CUDA ordinal may differ);
// nullopt where NVML is unavailable or does not know the device.
std::optional<unsigned> nvml_device_index(const std::string& pci_bus_id);

// Starts loading and initialising NVML on a background thread, so its cost overlaps
// cuInit's; nvml_memory_usage waits for it.
void nvml_preload();

}  // namespace cudatool
