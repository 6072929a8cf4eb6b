// The device layer against the real driver (GpuTest skips without one).
#include <gtest/gtest.h>

#include <set>

#include "cudatool/base/error.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "cudatool/device/device_info.hpp"
#include "cudatool/device/selection.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"
#include "gpu_test.hpp"

using namespace cudatool;

namespace {

bool primary_context_active(const Device& device) {
  unsigned int flags = 0;
  int active = 0;
  CUDATOOL_CU(cuDevicePrimaryCtxGetState, device.handle(), &flags, &active);
  return active != 0;
}

}  // namespace

class DeviceGpu : public cudatool::testing::GpuTest {};

TEST_F(DeviceGpu, ListingAndAttributesCreateNoContext) {
  const DeviceListing listing = list_devices(true);
  for (const Device& device : Device::all()) {
    device.get_attributes();
    EXPECT_FALSE(primary_context_active(device)) << "device " << device.ordinal();
  }
  EXPECT_EQ(listing.devices.size(), static_cast<std::size_t>(Device::count()));
}

TEST_F(DeviceGpu, LookupByPciBusIdAndUuidRoundTrips) {
  for (const Device& device : devices()) {
    EXPECT_EQ(Device::from_pci_bus_id(device.pci_bus_id()), device);
    EXPECT_EQ(Device::from_uuid(device.uuid()), device);
    EXPECT_EQ(Device::from_uuid(device.uuid().substr(0, 13)), device);  // "GPU-" + 9 chars
    // The driver's own lookup agrees with ours.
    CUdevice by_driver = -1;
    CUDATOOL_CU(cuDeviceGetByPCIBusId, &by_driver, device.pci_bus_id().c_str());
    EXPECT_EQ(by_driver, device.handle());
  }
  EXPECT_THROW(Device::from_pci_bus_id("0000:ff:1f.7"), DeviceNotFoundError);
  EXPECT_THROW(Device{Device::count()}, DeviceNotFoundError);
}

TEST_F(DeviceGpu, AttributesAreTheDriversAndNamedAsInTheTable) {
  const Device& d = device();
  const auto values = d.get_attributes();
  EXPECT_GT(values.size(), 120u);
  std::set<std::string> names;
  for (const auto& [name, value] : values) {
    const AttributeInfo* info = find_attribute(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(value, d.get_attribute(info->attribute)) << name;
    names.insert(name);
  }
  EXPECT_TRUE(names.count("multiprocessor_count"));
  EXPECT_EQ(d.compute_capability().major,
            d.get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)));
  EXPECT_GT(d.total_memory(), 1ull << 30);
  EXPECT_TRUE(d.uuid().starts_with("GPU-"));
  EXPECT_EQ(d.uuid().size(), 40u);
}

TEST_F(DeviceGpu, ContextIsRetainedAndReleased) {
  const Device& d = device();
  {
    Context context(d);
    EXPECT_TRUE(primary_context_active(d));
    context.synchronize();
    Context moved = std::move(context);
    EXPECT_NE(moved.handle(), nullptr);
  }
  // Our retain was the only one: releasing it deactivates the primary context.
  EXPECT_FALSE(primary_context_active(d));
}

TEST_F(DeviceGpu, DefaultContextFollowsSelection) {
  Context context = make_default_context(std::to_string(device().ordinal()), "--device");
  EXPECT_EQ(context.device(), device());
  EXPECT_THROW(make_default_context(std::string("99"), "--device"), DeviceNotFoundError);
}

TEST_F(DeviceGpu, PeerAccessMatrixOnSeveralDevices) {
  CUDATOOL_REQUIRE_DEVICES(2);
  const DeviceListing listing = list_devices(false);
  ASSERT_EQ(listing.peer_access.size(), listing.devices.size());
  const auto all = Device::all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(listing.peer_access[i][i]);
    for (std::size_t j = 0; j < all.size(); ++j) {
      if (i == j) continue;
      int can = 0;
      CUDATOOL_CU(cuDeviceCanAccessPeer, &can, all[i].handle(), all[j].handle());
      EXPECT_EQ(listing.peer_access[i][j], can != 0) << i << "->" << j;
    }
  }
  // A second device is found by each of its names.
  const Device& second = all[1];
  EXPECT_EQ(resolve_device({parse_device_spec(second.pci_bus_id(), "t"), "t"}), second);
  EXPECT_EQ(resolve_device({parse_device_spec(second.uuid(), "t"), "t"}), second);
  EXPECT_NE(second.uuid(), all[0].uuid());
}
