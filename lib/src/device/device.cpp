#include "cudatool/device/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "cudatool/base/error.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/device_cache.hpp"
#include "device/cached_answers.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"

namespace cudatool {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string range_text(int count) {
  return count == 1 ? "the only device is 0" : "valid: 0.." + std::to_string(count - 1);
}

}  // namespace

int Device::count() {
  if (const DeviceSnapshot* cached = cached_devices())
    return static_cast<int>(cached->devices.size());
  int n = 0;
  CUDATOOL_CU(cuDeviceGetCount, &n);
  if (n < 0)  // a misbehaving driver: no vector is sized by it
    throw RuntimeError("cuDeviceGetCount reported " + std::to_string(n) +
                       " devices: the driver misbehaves (a count is never negative)");
  if (n == 0) throw DeviceNotFoundError("no CUDA device visible");
  return n;
}

Device::Device(int ordinal) {
  const int n = count();
  if (ordinal < 0 || ordinal >= n) {
    throw DeviceNotFoundError("no device " + std::to_string(ordinal) + " (" + std::to_string(n) +
                              " visible; " + range_text(n) + ")");
  }
  ordinal_ = ordinal;
  if (cached_devices()) {
    handle_ = ordinal;
    cached_ = true;
    return;
  }
  CUDATOOL_CU(cuDeviceGet, &handle_, ordinal);
}

CUdevice Device::handle() const {
  if (!cached_) return handle_;
  CUdevice handle = 0;
  CUDATOOL_CU(cuDeviceGet, &handle, ordinal_);
  return handle;
}

std::vector<Device> Device::all() {
  std::vector<Device> devices;
  const int n = count();
  devices.reserve(static_cast<std::size_t>(n));
  if (cached_devices()) {
    for (int i = 0; i < n; ++i) devices.push_back(Device(i, i, true));
    return devices;
  }
  for (int i = 0; i < n; ++i) {
    CUdevice handle = 0;
    CUDATOOL_CU(cuDeviceGet, &handle, i);
    devices.push_back(Device(i, handle));
  }
  return devices;
}

Device Device::from_pci_bus_id(std::string_view pci_bus_id) {
  // Compare normalised ids rather than trusting cuDeviceGetByPCIBusId's parser, so a
  // missing domain or upper-case hex means the same device.
  auto normalise = [](std::string_view id) {
    std::string s = lower(id);
    if (std::count(s.begin(), s.end(), ':') == 1) s = "0000:" + s;
    // The driver prints a 4-digit domain; NVML an 8-digit one.
    if (auto colon = s.find(':');
        colon > 4 && s.compare(0, colon - 4, std::string(colon - 4, '0')) == 0)
      s.erase(0, colon - 4);
    return s;
  };
  const std::string wanted = normalise(pci_bus_id);
  for (const Device& device : all())
    if (normalise(device.pci_bus_id()) == wanted) return device;
  throw DeviceNotFoundError("no device with PCI bus id " + std::string(pci_bus_id));
}

Device Device::from_uuid(std::string_view uuid) {
  std::string wanted = lower(uuid);
  if (!wanted.starts_with("gpu-")) wanted = "gpu-" + wanted;
  std::vector<Device> matches;
  for (const Device& device : all())
    if (lower(device.uuid()).starts_with(wanted)) matches.push_back(device);
  if (matches.empty()) throw DeviceNotFoundError("no device with UUID " + std::string(uuid));
  if (matches.size() > 1)
    throw DeviceNotFoundError("UUID prefix " + std::string(uuid) + " matches " +
                              std::to_string(matches.size()) + " devices");
  return matches.front();
}

namespace {

// The text a driver wrote into `buffer`: up to its NUL, or the whole buffer where the
// driver left none (a misbehaving driver must not make the reader run past it).
template <std::size_t N>
std::string driver_text(const char (&buffer)[N]) {
  return std::string(buffer, ::strnlen(buffer, N));
}

}  // namespace

std::string Device::name() const {
  if (cached_) return cached_devices()->devices[static_cast<std::size_t>(ordinal_)].name;
  char buffer[256] = {};
  CUDATOOL_CU(cuDeviceGetName, buffer, static_cast<int>(sizeof buffer), handle_);
  return driver_text(buffer);
}

std::string Device::pci_bus_id() const {
  if (cached_) return cached_devices()->devices[static_cast<std::size_t>(ordinal_)].pci_bus_id;
  char buffer[32] = {};
  CUDATOOL_CU(cuDeviceGetPCIBusId, buffer, static_cast<int>(sizeof buffer), handle_);
  return lower(driver_text(buffer));
}

std::string Device::uuid() const {
  if (cached_) return cached_devices()->devices[static_cast<std::size_t>(ordinal_)].uuid;
  CUuuid id{};
  CUDATOOL_CU(cuDeviceGetUuid, &id, handle_);
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(id.bytes[i]);
  return format_uuid(bytes);
}

ComputeCapability Device::compute_capability() const {
  return {get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)),
          get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))};
}

std::uint64_t Device::total_memory() const {
  if (cached_)
    if (const auto bytes = detail::cached_total_memory(ordinal_)) return *bytes;
  size_t bytes = 0;
  CUDATOOL_CU(cuDeviceTotalMem, &bytes, handle());
  return bytes;
}

int Device::get_attribute(DeviceAttribute attribute) const {
  // A rejected attribute is asked again, for the driver's own error.
  if (cached_)
    if (const auto kept = detail::cached_attribute(ordinal_, attribute); kept && !kept->rejected)
      return kept->value;
  int value = 0;
  CUDATOOL_CU(cuDeviceGetAttribute, &value, to_cu(attribute), handle());
  return value;
}

std::vector<std::pair<std::string, int>> Device::get_attributes() const {
  std::vector<std::pair<std::string, int>> values;
  const auto table = device_attributes();
  values.reserve(table.size());
  for (const AttributeInfo& info : table) {
    if (cached_) {
      if (const auto kept = detail::cached_attribute(ordinal_, info.attribute)) {
        if (!kept->rejected) values.emplace_back(std::string(info.name), kept->value);
        continue;
      }
    }
    int value = 0;
    // An attribute this driver does not know is left out, never reported as 0.
    if (CUDATOOL_CU_RESULT(cuDeviceGetAttribute, &value, to_cu(info.attribute), handle()) ==
        CUDA_SUCCESS)
      values.emplace_back(std::string(info.name), value);
  }
  return values;
}

bool Device::can_access_peer(const Device& other) const {
  if (other.handle_ == handle_) return false;
  if (cached_ && other.cached_)
    return cached_devices()
        ->peer_access[static_cast<std::size_t>(ordinal_)][static_cast<std::size_t>(other.ordinal_)];
  int can = 0;
  CUDATOOL_CU(cuDeviceCanAccessPeer, &can, handle(), other.handle());
  return can != 0;
}

std::string format_uuid(const unsigned char (&b)[16]) {
  char text[48];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

}  // namespace cudatool
