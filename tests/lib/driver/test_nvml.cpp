// The PCI bus id in NVML's form (nvml.hpp), the key that joins cudatool's output with
// nvidia-smi's and dcgm-exporter's; no NVML needed.
#include <gtest/gtest.h>

#include "cudatool/driver/nvml.hpp"

using cudatool::nvml_pci_bus_id;

TEST(NvmlPciBusId, CudaFormBecomesNvidiaSmisForm) {
  EXPECT_EQ(nvml_pci_bus_id("0000:00:06.0"), "00000000:00:06.0");
  EXPECT_EQ(nvml_pci_bus_id("0000:1a:00.0"), "00000000:1A:00.0");  // nvidia-smi: upper case
  EXPECT_EQ(nvml_pci_bus_id("0001:c1:1f.7"), "00000001:C1:1F.7");
  EXPECT_EQ(nvml_pci_bus_id("00000000:1A:00.0"), "00000000:1A:00.0");  // NVML's own
  EXPECT_EQ(nvml_pci_bus_id("ffffffff:ff:ff.f"), "FFFFFFFF:FF:FF.F");
  EXPECT_EQ(nvml_pci_bus_id("1:2:3.4"), "00000001:02:03.4");
}

TEST(NvmlPciBusId, AnythingElseIsNone) {
  for (const char* bad :
       {"", "0000:00:06", "0000:00:06.", "0000:00:06.0 ", "0000:00:06.00", "000000000:00:06.0",
        "0000:100:06.0", "0000:00:006.0", "g000:00:06.0", "0000-00-06.0", ":00:06.0",
        "0000:01:00.0pppp", "-1:00:06.0", "0000:00:06.0\n", "0x00:00:06.0"})
    EXPECT_EQ(nvml_pci_bus_id(bad), std::nullopt) << bad;
}
