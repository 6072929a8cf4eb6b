// The NVIDIA driver's own version ("580.159.04", what nvidia-smi calls the driver version),
// as opposed to the CUDA version the driver supports (cuDriverGetVersion, "13.0"). Best
// effort: from NVML or /proc/driver/nvidia/version, absent where neither answers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudatool {

// The version in the text of /proc/driver/nvidia/version: the first dotted number on its
// "NVRM version:" line; nullopt when there is none.
std::optional<std::string> parse_proc_driver_version(std::string_view text);

// parse_proc_driver_version of the file at `path`; nullopt when it cannot be read, is not a
// regular file (a FIFO is refused without waiting) or is larger than 4096 bytes.
std::optional<std::string> read_proc_driver_version(const std::filesystem::path& path);

// The file read_proc_driver_version reads by default: /proc/driver/nvidia/version, or for the
// test suite only, $CUDATOOL_TEST_PROC_DRIVER_VERSION (a test hook: base/test_hooks.hpp).
std::filesystem::path proc_driver_version_path();

// The driver's version. `prefer_nvml`: ask NVML first (it is loaded anyway), else read the
// /proc file first and NVML only when that does not answer (NVML costs 10-30 ms to start).
// NVML is never asked when CUDATOOL_NO_NVML is set.
std::optional<std::string> driver_release(bool prefer_nvml);

}  // namespace cudatool
