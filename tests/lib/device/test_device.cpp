// Device (lib/src/device/device.cpp): the listing, the lookups by PCI bus id and UUID, the
// driver's strings and attributes. Against the fake driver in a child (fake_driver_child.hpp:
// its answers are set by FAKE_CUDA_*), and against the real driver where there is a GPU
// (DeviceGpu, skipped without one).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <set>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "cudatool/device/device_info.hpp"
#include "cudatool/device/selection.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

using namespace cudatool;

namespace {

bool primary_context_active(const Device& device) {
  unsigned int flags = 0;
  int active = 0;
  CUDATOOL_CU(cuDevicePrimaryCtxGetState, device.handle(), &flags, &active);
  return active != 0;
}

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

// The fake's UUID of its machine device `m` (tests/fake_driver: byte i is 0x10 * (m + 1) + i,
// the last byte m).
std::string fake_uuid(int m) {
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i)
    bytes[i] = static_cast<unsigned char>(i == 15 ? m : 0x10 * (m + 1) + i);
  char text[48];
  std::snprintf(
      text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
      bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
      bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  return text;
}

template <class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

TEST(Device, ListsWhatTheDriverEnumeratesWithItsAnswers) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICES", "9.0,8.0,8.6"}, {"FAKE_CUDA_MEMORY", "4096"}},
      [](FakeChecks& c) {
        c.expect(Device::count() == 3, "three devices");
        const auto all = Device::all();
        c.expect(all.size() == 3, "all() lists three");
        const int minors[] = {0, 0, 6}, majors[] = {9, 8, 8};
        for (int i = 0; i < 3 && i < static_cast<int>(all.size()); ++i) {
          const Device& d = all[static_cast<std::size_t>(i)];
          const std::string which = "device " + std::to_string(i) + ": ";
          c.expect(d.ordinal() == i, which + "ordinal");
          c.expect(d.name() == "Fake GPU " + std::to_string(i), which + "name " + d.name());
          c.expect(d.compute_capability().major == majors[i] &&
                       d.compute_capability().minor == minors[i],
                   which + "compute capability");
          c.expect(d.total_memory() == 4096, which + "memory");
          c.expect(d.uuid() == fake_uuid(i), which + "uuid " + d.uuid() + ", not " + fake_uuid(i));
          c.expect(d.pci_bus_id() == "0000:0" + std::to_string(i + 1) + ":00.0",
                   which + "bus id " + d.pci_bus_id());
          c.expect(d == Device(i), which + "equal to Device(i)");
        }
      });
}

TEST(Device, AnOrdinalOutOfRangeNamesTheValidOnes) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    c.expect_throw<DeviceNotFoundError>([] { Device{2}; }, "Device(2) of two");
    c.expect_throw<DeviceNotFoundError>([] { Device{-1}; }, "Device(-1)");
    const std::string why = message_of([] { Device{2}; });
    c.expect(why.find("no device 2 (2 visible; valid: 0..1)") != std::string::npos, why);
  });
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICES", "9.0"}}, [](FakeChecks& c) {
    const std::string why = message_of([] { Device{1}; });
    c.expect(why.find("the only device is 0") != std::string::npos, why);
  });
}

TEST(Device, ANegativeCountFromTheDriverIsAnErrorNotASize) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICE_COUNT", "-1"}},
                        [](FakeChecks& c) {
                          c.expect_throw<RuntimeError>([] { Device::count(); }, "count() of -1");
                          c.expect_throw<RuntimeError>([] { Device::all(); }, "all() of -1");
                        });
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICE_COUNT", "0"}},
      [](FakeChecks& c) { c.expect_throw<DeviceNotFoundError>([] { Device::all(); }, "none"); });
}

TEST(Device, PciBusIdsMatchWithoutDomainInAnyCaseAndInNvmlsForm) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_PCI_BUSES", "3b,1a"}}, [](FakeChecks& c) {
        for (const char* id : {"0000:1a:00.0", "0000:1A:00.0", "1a:00.0", "00000000:1A:00.0"})
          c.expect(Device::from_pci_bus_id(id).ordinal() == 1, std::string("finds ") + id);
        c.expect(Device::from_pci_bus_id("0000:3B:00.0").ordinal() == 0, "finds 3b");
        c.expect_throw<DeviceNotFoundError>([] { Device::from_pci_bus_id("0000:1b:00.0"); },
                                            "no device on bus 1b");
        c.expect_throw<DeviceNotFoundError>([] { Device::from_pci_bus_id("0000:1a:00.1"); },
                                            "another function");
      });
}

TEST(Device, UuidsMatchByPrefixInAnyCaseAndAnAmbiguousPrefixIsRefused) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const std::string second = fake_uuid(1);
    c.expect(Device::from_uuid(second).ordinal() == 1, "whole UUID");
    std::string upper = second;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    c.expect(Device::from_uuid(upper).ordinal() == 1, "upper case");
    c.expect(Device::from_uuid(second.substr(4, 6)).ordinal() == 1, "without GPU-, a prefix");
    c.expect(Device::from_uuid(fake_uuid(0).substr(0, 6)).ordinal() == 0, "the first's prefix");
    const std::string why = message_of([] { Device::from_uuid("GPU-"); });
    c.expect(why.find("matches 2 devices") != std::string::npos, "ambiguous: " + why);
    c.expect_throw<DeviceNotFoundError>([] { Device::from_uuid("GPU-ff"); }, "no such UUID");
  });
}

TEST(Device, StringsWithoutATerminatorEndAtTheBuffer) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_UNTERMINATED", "1"}},
                        [](FakeChecks& c) {
                          const Device d(0);
                          const std::string name = d.name(), bus = d.pci_bus_id();
                          c.expect(name.starts_with("Fake GPU 0") && name.size() == 256,
                                   "name bounded by its buffer: " + std::to_string(name.size()));
                          c.expect(bus.starts_with("0000:01:00.0") && bus.size() == 32,
                                   "bus id bounded by its buffer: " + bus);
                        });
}

TEST(Device, AnAttributeTheDriverRejectsIsLeftOutNeverZero) {
  const AttributeInfo* info = find_attribute("max_threads_per_block");
  ASSERT_NE(info, nullptr);
  const std::string number = std::to_string(static_cast<int>(info->attribute));
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_REJECT_ATTRS", number}},
                        [&](FakeChecks& c) {
                          const Device d(0);
                          bool listed = false, warp = false;
                          for (const auto& [name, value] : d.get_attributes()) {
                            listed = listed || name == "max_threads_per_block";
                            warp = warp || (name == "warp_size" && value == 32);
                          }
                          c.expect(!listed, "the rejected attribute is not listed");
                          c.expect(warp, "the others are, with the driver's values");
                          c.expect_throw<Error>([&] { d.get_attribute(info->attribute); },
                                                "asking for it alone is the driver's error");
                        });
}

TEST(Device, PeerAccessIsTheDriversAndNeverToItself) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    const Device a(0), b(1);
    c.expect(!a.can_access_peer(a), "not to itself");
    c.expect(a.can_access_peer(b) && b.can_access_peer(a), "the fake's devices reach each other");
  });
}

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
