// NVML's inventory of the machine (lib/src/driver/nvml_inventory.cpp): every GPU by PCI bus
// with its UUID, and the live settings the device cache compares, each as "result:values".
// Against the fake NVML (tests/fake_nvml, CUDATOOL_LIBNVML) in a child, whose GPUs are the
// fake driver's (FAKE_CUDA_DEVICES at FAKE_CUDA_PCI_BUSES).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "driver/nvml_inventory.hpp"
#include "fake_driver_child.hpp"

namespace cudatool {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::fake_nvml_env;
using cudatool::testing::FakeChecks;

// The fake's UUID of machine device `m` (tests/fake_driver/fake_libcuda.cpp's bytes).
std::string fake_uuid(int m) {
  char text[48];
  const auto b = [m](int i) { return i == 15 ? m : 0x10 * (m + 1) + i; };
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b(0),
                b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8), b(9), b(10), b(11), b(12), b(13),
                b(14), b(15));
  return text;
}

TEST(NvmlInventory, EveryGpuByBusWithItsUuidAndReadings) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA,
      fake_nvml_env({{"FAKE_CUDA_DEVICES", "9.0,8.0"},
                     {"FAKE_CUDA_PCI_BUSES", "2b,1a"},
                     {"FAKE_NVML_DRIVER_VERSION", "580.65.06"},
                     {"FAKE_NVML_MIG", "0,1"},
                     {"FAKE_NVML_ECC", "1,0"},
                     {"FAKE_NVML_COMPUTE_MODE", "3"},
                     {"FAKE_NVML_DISPLAY", "1,0"}}),
      [](FakeChecks& c) {
        const auto inventory = nvml_inventory();
        c.expect(inventory.has_value(), "an inventory");
        if (!inventory) return;
        c.expect(inventory->driver_version == "580.65.06", inventory->driver_version);
        c.expect(inventory->gpus.size() == 2, "two GPUs");
        if (inventory->gpus.size() != 2) return;
        // NVML's order is the bus's: the second device of the list (bus 1a) first.
        const NvmlGpu& first = inventory->gpus[0];
        c.expect(first.pci_bus_id == "00000000:1A:00.0", first.pci_bus_id);
        c.expect(first.uuid == fake_uuid(1), first.uuid + " is machine device 1's");
        c.expect(inventory->gpus[1].uuid == fake_uuid(0), "then device 0");
        for (const NvmlGpu& gpu : inventory->gpus) {
          const auto reading = [&](const char* name) {
            const auto it = gpu.readings.find(name);
            return it == gpu.readings.end() ? std::string("(none)") : it->second;
          };
          c.expect(reading("mig") == "0:0,1", "mig current 0, pending 1: " + reading("mig"));
          c.expect(reading("ecc") == "0:1,0", "ecc current 1, pending 0: " + reading("ecc"));
          c.expect(reading("compute_mode") == "0:3",
                   "exclusive process: " + reading("compute_mode"));
          c.expect(reading("display") == "0:1;0:0",
                   "display mode and active: " + reading("display"));
          c.expect(gpu.readings.size() == 4, "the four readings");
        }
      });
}

TEST(NvmlInventory, OnlyTheReadingsAskedFor) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({}), [](FakeChecks& c) {
    const std::string_view mig[] = {"mig"};
    const auto inventory = nvml_inventory(mig);
    c.expect(inventory && inventory->gpus.size() == 2, "two GPUs");
    if (!inventory) return;
    for (const NvmlGpu& gpu : inventory->gpus)
      c.expect(gpu.readings.size() == 1 && gpu.readings.count("mig"), "mig only");
    const auto names_only = nvml_inventory({});
    c.expect(names_only && names_only->gpus.size() == 2 && names_only->gpus[0].readings.empty() &&
                 !names_only->gpus[0].uuid.empty(),
             "no reading: the GPUs' names only");
  });
}

TEST(NvmlInventory, ASettingTheGpuLacksIsAReadingOfItsOwn) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_MIG", "na"}, {"FAKE_NVML_ECC", "na"}}),
      [](FakeChecks& c) {
        const auto inventory = nvml_inventory();
        c.expect(inventory && !inventory->gpus.empty(), "an inventory");
        if (!inventory || inventory->gpus.empty()) return;
        const NvmlGpu& gpu = inventory->gpus[0];
        c.expect(gpu.readings.at("mig") == "3:" && nvml_not_supported(gpu.readings.at("mig")),
                 "mig not supported: " + gpu.readings.at("mig"));
        c.expect(nvml_not_supported(gpu.readings.at("ecc")), "ecc: " + gpu.readings.at("ecc"));
        c.expect(gpu.readings.at("display") == "3:;3:", "display: both queries not supported");
        c.expect(!nvml_not_supported(gpu.readings.at("compute_mode")), "compute mode is there");
      });
  EXPECT_FALSE(nvml_not_supported("0:1,1"));
  EXPECT_FALSE(nvml_not_supported("3:1"));
  EXPECT_FALSE(nvml_not_supported("33:"));
}

TEST(NvmlInventory, AnNvmlWithoutFieldValuesReadsTheEccModeItself) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA,
                        fake_nvml_env({{"FAKE_NVML_NO_FIELDS", "1"}, {"FAKE_NVML_ECC", "0,1"}}),
                        [](FakeChecks& c) {
                          const auto inventory = nvml_inventory();
                          c.expect(inventory && !inventory->gpus.empty(), "an inventory");
                          if (!inventory || inventory->gpus.empty()) return;
                          const std::string ecc = inventory->gpus[0].readings.at("ecc");
                          c.expect(ecc == "0:0,1", "nvmlDeviceGetEccMode's answer: " + ecc);
                        });
}

TEST(NvmlInventory, NoneWhereNvmlCannotStartOrCountOrNameItsGpus) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_INIT_RESULT", "9"}}),
      [](FakeChecks& c) { c.expect(!nvml_inventory().has_value(), "NVML failed to start"); });
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA,
                        fake_nvml_env({{"FAKE_CUDA_PCI_BUSES", "1,2"}, {"FAKE_NVML_LOST", "2"}}),
                        [](FakeChecks& c) {
                          c.expect(!nvml_inventory().has_value(),
                                   "a GPU off the bus: no inventory, never a partial one");
                        });
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {{"CUDATOOL_LIBNVML", "/nonexistent/libnvml.so"}},
                        [](FakeChecks& c) { c.expect(!nvml_inventory().has_value(), "no NVML"); });
}

}  // namespace
}  // namespace cudatool
