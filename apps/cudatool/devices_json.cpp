// devices --json (share/schemas/devices.schema.json).
#include "devices_json.hpp"

#include "cudatool/driver/driver.hpp"
#include "cudatool/driver/nvml.hpp"
#include "devices_report.hpp"

namespace cudatool::app {

JsonObject device_info_object(const DeviceInfo& d) {
  JsonObject j;
  j.set("ordinal", d.ordinal)
      .set("name", d.name)
      .set("compute_capability", d.compute_capability.str())
      .set("compute_capability_major", d.compute_capability.major)
      .set("compute_capability_minor", d.compute_capability.minor)
      .set("arch", d.compute_capability.sm())
      .set("total_memory_bytes", d.total_memory)
      .set("multiprocessor_count", d.multiprocessor_count)
      .set("pci_bus_id", d.pci_bus_id)
      .set("uuid", d.uuid)
      .set("max_threads_per_block", d.max_threads_per_block)
      .set("max_shared_memory_per_block_optin", d.max_shared_memory_per_block_optin)
      .set("l2_cache_size_bytes", d.l2_cache_size)
      .set("clock_rate_khz", d.clock_rate_khz)
      .set("memory_clock_rate_khz", d.memory_clock_rate_khz)
      .set("global_memory_bus_width_bits", d.global_memory_bus_width);
  // The bus id as nvidia-smi and DCGM write it, to join with their data (pci_bus_id stays
  // CUDA's form, which --device and cuDeviceGetByPCIBusId take).
  if (auto nvml_form = nvml_pci_bus_id(d.pci_bus_id)) j.set("pci_bus_id_nvml", *nvml_form);
  if (!d.error.empty()) j.set("error", d.error);
  if (d.memory_usage)
    j.set("free_memory_bytes", d.memory_usage->free).set("used_memory_bytes", d.memory_usage->used);
  return j;
}

JsonObject devices_json(const DevicesReport& report) {
  JsonObject j;
  if (report.none_visible) return j.set("device_count", 0).set("devices", std::vector<int>());
  const DeviceListing& listing = report.listing;
  std::vector<JsonObject> devices;
  for (const DeviceInfo& d : listing.devices) devices.push_back(device_info_object(d));
  j.set("cuda_version", driver::format_cuda_version(listing.cuda_version))
      .set("device_count", listing.devices.size())
      .set("devices", devices);
  if (listing.driver_version) j.set("driver_version", *listing.driver_version);
  if (!listing.peer_access.empty()) j.set("peer_access", listing.peer_access);
  if (report.requirements_asked)
    j.set("requirements", JsonObject()
                              .set("met", report.requirements.met)
                              .set("qualifying_devices", report.requirements.qualifying)
                              .set("problems", report.requirements.problems));
  return j;
}

void print_devices_json(const DevicesReport& report) {
  print_json(devices_json(report));
}

}  // namespace cudatool::app
