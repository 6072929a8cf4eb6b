#include "cudatool/device/device_info.hpp"

#include <charconv>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/driver/driver_release.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool {

DeviceInfo DeviceInfo::from_device(const Device& device) {
  DeviceInfo info;
  info.ordinal = device.ordinal();
  info.name = device.name();
  info.compute_capability = device.compute_capability();
  info.total_memory = device.total_memory();
  info.multiprocessor_count =
      device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  info.pci_bus_id = device.pci_bus_id();
  info.uuid = device.uuid();
  info.max_threads_per_block =
      device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  info.max_shared_memory_per_block_optin =
      device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  info.l2_cache_size = device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  info.clock_rate_khz = device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  info.memory_clock_rate_khz =
      device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
  info.global_memory_bus_width =
      device.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
  return info;
}

DeviceInfo DeviceInfo::describe(const Device& device) {
  try {
    return from_device(device);
  } catch (const LibraryNotFoundError&) {
    throw;  // the driver is too old for every device, not this one broken
  } catch (const Error& e) {
    DeviceInfo info;
    info.ordinal = device.ordinal();
    info.error = e.what();
    // Where it is: the bus id and UUID, which a broken GPU often still answers.
    try {
      info.pci_bus_id = device.pci_bus_id();
    } catch (const Error&) {
    }
    try {
      info.uuid = device.uuid();
    } catch (const Error&) {
    }
    return info;
  }
}

DeviceListing list_devices(bool with_memory_usage) {
  // NVML's initialisation overlaps cuInit's instead of following it.
  if (with_memory_usage) nvml_preload();
  DeviceListing listing;
  const auto devices = Device::all();
  const DeviceSnapshot* cached = cached_devices();
  listing.cuda_version = cached ? cached->cuda_version : driver::api().driver_version;
  listing.driver_version = driver_release(with_memory_usage);
  for (const Device& device : devices) {
    // A device the driver does not answer for is listed with its error, the others as ever.
    listing.devices.push_back(DeviceInfo::describe(device));
    if (with_memory_usage)
      listing.devices.back().memory_usage = nvml_memory_usage(listing.devices.back().pci_bus_id);
  }
  if (devices.size() > 1) {
    listing.peer_access.assign(devices.size(), std::vector<bool>(devices.size(), false));
    for (std::size_t i = 0; i < devices.size(); ++i)
      for (std::size_t j = 0; j < devices.size(); ++j)
        if (i != j && listing.devices[i].error.empty() && listing.devices[j].error.empty())
          listing.peer_access[i][j] = devices[i].can_access_peer(devices[j]);
  }
  return listing;
}

RequirementReport check_requirements(const std::vector<DeviceInfo>& devices,
                                     const DeviceRequirements& requirements) {
  RequirementReport report;
  for (const DeviceInfo& d : devices) {
    bool ok = true;
    if (requirements.min_compute_capability &&
        d.compute_capability < *requirements.min_compute_capability) {
      ok = false;
      report.problems.push_back("device " + std::to_string(d.ordinal) + " (" + d.name +
                                ") has compute capability " + d.compute_capability.str() +
                                ", need " + requirements.min_compute_capability->str());
    }
    if (requirements.min_memory && d.total_memory < *requirements.min_memory) {
      ok = false;
      report.problems.push_back("device " + std::to_string(d.ordinal) + " (" + d.name + ") has " +
                                format_bytes_beside(d.total_memory, *requirements.min_memory) +
                                ", need " +
                                format_bytes_beside(*requirements.min_memory, d.total_memory));
    }
    if (ok) ++report.qualifying;
  }
  const int needed = requirements.min_count.value_or(1);
  if (report.qualifying < needed) {
    report.met = false;
    const bool per_device = requirements.min_compute_capability || requirements.min_memory;
    report.problems.insert(report.problems.begin(),
                           "found " + std::to_string(report.qualifying) +
                               (per_device ? " qualifying" : "") + " device" +
                               (report.qualifying == 1 ? "" : "s") + ", need at least " +
                               std::to_string(needed));
  } else {
    // Devices that miss a per-device minimum do not fail the set when enough others pass.
    report.problems.clear();
  }
  return report;
}

ComputeCapability parse_compute_capability(std::string_view text, std::string_view source) {
  return Arch::parse(text, source).cc;
}

}  // namespace cudatool
