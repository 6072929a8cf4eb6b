// The driver's own version from /proc/driver/nvidia/version text, as the proprietary and
// the open kernel modules write it, and nothing invented from anything else.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudatool/base/test_hooks.hpp"
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
  // A test hook: a build without them (a release) never reads the variable.
  EXPECT_EQ(proc_driver_version_path(),
            test_hooks_enabled() ? path : std::filesystem::path("/proc/driver/nvidia/version"));
  // driver_release() with NVML off is tested through the binary (test_cli_devices.cpp):
  // NVML, once loaded in this process, would answer first.
  std::filesystem::remove(path);
  EXPECT_EQ(read_proc_driver_version(path), std::nullopt);
  ::unsetenv("CUDATOOL_TEST_PROC_DRIVER_VERSION");
  EXPECT_EQ(proc_driver_version_path(), "/proc/driver/nvidia/version");
}

// A FIFO in the file's place blocked the reader forever (issue 20, item 15): it is refused
// at once, as anything else that is not a regular file.
TEST(DriverRelease, AFifoOrADirectoryIsNoVersionAndNoWait) {
  const auto fifo = std::filesystem::temp_directory_path() /
                    ("cudatool-driver-release-fifo-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_proc_driver_version(fifo), std::nullopt);
  std::filesystem::remove(fifo);
  EXPECT_EQ(read_proc_driver_version(std::filesystem::temp_directory_path()), std::nullopt);
  EXPECT_EQ(read_proc_driver_version("/dev/zero"), std::nullopt);
}

}  // namespace
}  // namespace cudatool
