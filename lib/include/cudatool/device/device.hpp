// CUDA devices through the driver API. Nothing here creates a context: listing devices
// and reading attributes costs no GPU memory (a context costs ~157 ms and memory on every
// device). Context (context.hpp) is the separate, explicit step for work that needs one.
#pragma once

#include "cudatool/base/arch.hpp"
#include "cudatool/driver/handles.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudatool {

class Device {
 public:
  // Number of devices the driver sees (after CUDA_VISIBLE_DEVICES). Throws
  // DeviceNotFoundError when cuInit finds none.
  static int count();
  // Throws DeviceNotFoundError naming the valid range when `ordinal` is out of range.
  explicit Device(int ordinal);
  // "0000:07:00.0" (domain optional, case-insensitive); DeviceNotFoundError if absent.
  static Device from_pci_bus_id(std::string_view pci_bus_id);
  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it ("GPU-" optional,
  // a unique prefix is enough); DeviceNotFoundError if no device matches.
  static Device from_uuid(std::string_view uuid);
  static std::vector<Device> all();

  int ordinal() const { return ordinal_; }
  // The driver's handle (for a device answered from the device cache, device_cache.hpp, this
  // first initialises the driver).
  DeviceHandle handle() const;  // CUdevice
  std::string name() const;
  std::string pci_bus_id() const;  // "0000:07:00.0"
  std::string uuid() const;        // "GPU-..." as nvidia-smi prints it
  ComputeCapability compute_capability() const;
  std::uint64_t total_memory() const;  // bytes

  // Throws for an attribute the driver rejects.
  int get_attribute(DeviceAttribute attribute) const;
  // Every attribute of the table (attributes.hpp) the driver answers, keyed by its
  // PyCUDA-style name, in enumerator order; rejected ones are left out, never shown as 0.
  std::vector<std::pair<std::string, int>> get_attributes() const;
  bool can_access_peer(const Device& other) const;

  friend bool operator==(const Device& a, const Device& b) { return a.handle_ == b.handle_; }

 private:
  Device(int ordinal, DeviceHandle handle, bool cached = false)
      : ordinal_(ordinal), handle_(handle), cached_(cached) {}
  int ordinal_ = 0;
  DeviceHandle handle_ = 0;
  bool cached_ = false;  // answered from the device cache; handle_ is not the driver's
};

// "GPU-" + 8-4-4-4-12 lower-case hex of the 16 UUID bytes, as nvidia-smi prints it.
std::string format_uuid(const unsigned char (&bytes)[16]);

}  // namespace cudatool
