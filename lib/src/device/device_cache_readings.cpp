#include "device/device_cache_readings.hpp"

#include "device/cuda_attribute.hpp"

namespace cudatool::detail {

std::optional<std::string> reading_for(DeviceAttribute attribute) {
  switch (to_cu(attribute)) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
      return "compute_mode";
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
      return "ecc";
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
      return "display";
    default:
      return std::nullopt;
  }
}

bool mig_enabled(const NvmlGpu& gpu) {
  return gpu.readings.count("mig") && gpu.readings.at("mig").starts_with("0:1");
}

bool same_readings(const std::vector<NvmlGpu>& a, const std::vector<NvmlGpu>& b,
                   const std::string& reading) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].pci_bus_id != b[i].pci_bus_id || a[i].uuid != b[i].uuid) return false;
    const auto x = a[i].readings.find(reading), y = b[i].readings.find(reading);
    if (x == a[i].readings.end() || y == b[i].readings.end() || x->second != y->second)
      return false;
  }
  return true;
}

bool unsupported_everywhere(const std::vector<NvmlGpu>& gpus, const std::string& reading) {
  bool unsupported = true;
  for (const NvmlGpu& gpu : gpus)
    unsupported =
        unsupported && gpu.readings.count(reading) && nvml_not_supported(gpu.readings.at(reading));
  return unsupported;
}

}  // namespace cudatool::detail
