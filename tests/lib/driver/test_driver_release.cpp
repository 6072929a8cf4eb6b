// The driver's own version from /proc/driver/nvidia/version text, as the proprietary and
// the open kernel modules write it, and nothing invented from anything else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudatool/driver/driver_release.hpp"

namespace cudatool {
namespace {

TEST(DriverRelease, ParsesTheNvrmLine) {
  EXPECT_EQ(parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 "
                "UTC 2023\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"),
            "535.104.05");
  EXPECT_EQ(parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release "
                "Build  (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"),
            "580.65.06");
  // The line need not come first; two-part versions are versions too.
  EXPECT_EQ(parse_proc_driver_version("\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  575.51"),
            "575.51");
}

TEST(DriverRelease, NothingInventedFromOtherText) {
  EXPECT_EQ(parse_proc_driver_version(""), std::nullopt);
  EXPECT_EQ(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n"),
            std::nullopt);
  // The GCC line's version is not the driver's.
  EXPECT_EQ(parse_proc_driver_version("GCC version:  gcc version 12.2.0\n"), std::nullopt);
  EXPECT_EQ(parse_proc_driver_version("NVRM version: 1..2 .5 5. v580.1\n"), std::nullopt);
  EXPECT_EQ(read_proc_driver_version("/nonexistent/driver/nvidia/version"), std::nullopt);
}

TEST(DriverRelease, ReadsTheFileAndTheTestOverride) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cudatool-driver-release-" + std::to_string(::getpid()));
  std::ofstream(path) << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue\n";
  EXPECT_EQ(read_proc_driver_version(path), "580.159.04");
  ::setenv("CUDATOOL_TEST_PROC_DRIVER_VERSION", path.c_str(), 1);
  EXPECT_EQ(proc_driver_version_path(), path);
  // driver_release() with NVML off is tested through the binary (test_cli_devices.cpp):
  // NVML, once loaded in this process, would answer first.
  std::filesystem::remove(path);
  EXPECT_EQ(read_proc_driver_version(path), std::nullopt);
  ::unsetenv("CUDATOOL_TEST_PROC_DRIVER_VERSION");
  EXPECT_EQ(proc_driver_version_path(), "/proc/driver/nvidia/version");
}

}  // namespace
}  // namespace cudatool
