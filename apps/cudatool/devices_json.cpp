#include "devices_json.hpp"

#include "cudatool/driver/driver.hpp"
#include "cudatool/driver/nvml.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const ComputeCapability& cc) {
  j = cc.str();
}

void to_json(nlohmann::json& j, const MemoryUsage& usage) {
  j = {{"total_bytes", usage.total}, {"free_bytes", usage.free}, {"used_bytes", usage.used}};
}

void to_json(nlohmann::json& j, const DeviceInfo& d) {
  j = {{"ordinal", d.ordinal},
       {"name", d.name},
       {"compute_capability", d.compute_capability},
       {"compute_capability_major", d.compute_capability.major},
       {"compute_capability_minor", d.compute_capability.minor},
       {"arch", d.compute_capability.sm()},
       {"total_memory_bytes", d.total_memory},
       {"multiprocessor_count", d.multiprocessor_count},
       {"pci_bus_id", d.pci_bus_id},
       {"uuid", d.uuid},
       {"max_threads_per_block", d.max_threads_per_block},
       {"max_shared_memory_per_block_optin", d.max_shared_memory_per_block_optin},
       {"l2_cache_size_bytes", d.l2_cache_size},
       {"clock_rate_khz", d.clock_rate_khz},
       {"memory_clock_rate_khz", d.memory_clock_rate_khz},
       {"global_memory_bus_width_bits", d.global_memory_bus_width}};
  // The bus id as nvidia-smi and DCGM write it, to join with their data (pci_bus_id stays
  // CUDA's form, which --device and cuDeviceGetByPCIBusId take).
  if (auto nvml_form = nvml_pci_bus_id(d.pci_bus_id)) j["pci_bus_id_nvml"] = *nvml_form;
  if (!d.error.empty()) j["error"] = d.error;
  if (d.memory_usage) {
    j["free_memory_bytes"] = d.memory_usage->free;
    j["used_memory_bytes"] = d.memory_usage->used;
  }
}

void to_json(nlohmann::json& j, const DeviceListing& listing) {
  j = {{"cuda_version", driver::format_cuda_version(listing.cuda_version)},
       {"device_count", listing.devices.size()},
       {"devices", listing.devices}};
  if (listing.driver_version) j["driver_version"] = *listing.driver_version;
  if (!listing.peer_access.empty()) j["peer_access"] = listing.peer_access;
}

void to_json(nlohmann::json& j, const RequirementReport& report) {
  j = {{"met", report.met},
       {"qualifying_devices", report.qualifying},
       {"problems", report.problems}};
}

}  // namespace cudatool
