// The device cache's machine fingerprint (lib/src/device/machine_fingerprint.hpp) on a fake
// machine: /proc/driver/nvidia, the boot id, /proc/modules and /dev/nvidia* under
// CUDATOOL_TEST_SYSTEM_ROOT (a test hook). Every input it names changes it; a machine it
// cannot describe with certainty has none.
#include "device/machine_fingerprint.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cudatool/base/test_hooks.hpp"
#include "temp_dir.hpp"

namespace cudatool::detail {
namespace {

using cudatool::testing::ScopedEnv;
namespace fs = std::filesystem;

// Sets a variable for the test's length, as it was after.

class MachineFingerprint : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test_hooks_enabled()) GTEST_SKIP() << "a build without test hooks has no fake /proc";
    std::string pattern = (fs::temp_directory_path() / "cudatool-fingerprint-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    write("proc/sys/kernel/random/boot_id", "boot-1\n");
    write("proc/driver/nvidia/version", "NVRM version: 590.10.02\n");
    write("proc/driver/nvidia/params", "EnableGpuFirmware: 18\n");
    write("proc/driver/nvidia/gpus/0000:07:00.0/information",
          "Model: \t\t NVIDIA Fake\nDevice Minor: \t 0\n");
    write("proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 2 1 nvidia_uvm, Live 0x0\next4 3 2\n");
    write("dev/nvidiactl", "");
    write("dev/nvidia-uvm", "");
    write("dev/nvidia0", "");
    root_env_.emplace("CUDATOOL_TEST_SYSTEM_ROOT", root_.c_str());
    mps_env_.emplace("CUDA_MPS_PIPE_DIRECTORY", (root_ / "mps").c_str());
  }
  void TearDown() override {
    mps_env_.reset();
    root_env_.reset();
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary | std::ios::trunc) << text;
  }
  std::string lines() {
    std::string why;
    const auto text = machine_lines(nullptr, why);
    EXPECT_TRUE(text) << why;
    return text.value_or("");
  }
  fs::path root_;
  std::optional<ScopedEnv> root_env_, mps_env_;
};

TEST_F(MachineFingerprint, NamesTheBootTheDriverTheGpusAndTheirNodes) {
  const std::string text = lines();
  EXPECT_TRUE(text.starts_with("uid " + std::to_string(::geteuid()) + "\nboot boot-1\\n\n"))
      << text;
  EXPECT_NE(text.find("version NVRM version: 590.10.02\\n\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu 0000:07:00.0 Model:"), std::string::npos) << text;
  EXPECT_NE(text.find("node " + (root_ / "dev/nvidia0").string() + " "), std::string::npos) << text;
  EXPECT_NE(text.find("modules nvidia_uvm,nvidia,\n"), std::string::npos) << text;
  EXPECT_EQ(system_path("/proc/x"), root_.string() + "/proc/x");
}

TEST_F(MachineFingerprint, EveryInputChangesIt) {
  const std::string before = lines();
  for (const auto& [file, text] : std::initializer_list<std::pair<std::string, std::string>>{
           {"proc/sys/kernel/random/boot_id", "boot-2\n"},
           {"proc/driver/nvidia/version", "NVRM version: 590.10.03\n"},
           {"proc/driver/nvidia/params", "EnableGpuFirmware: 0\n"},
           {"proc/driver/nvidia/gpus/0000:08:00.0/information", "Device Minor: \t 1\n"},
           {"proc/modules", "nvidia 2 0 - Live 0x0\n"}}) {
    SCOPED_TRACE(file);
    std::ifstream in(root_ / file);
    const std::string saved(std::istreambuf_iterator<char>(in), {});
    write(file, text);
    EXPECT_NE(lines(), before);
    if (file.find("0000:08") != std::string::npos)
      fs::remove_all(root_ / "proc/driver/nvidia/gpus/0000:08:00.0");
    else
      write(file, saved);
    EXPECT_EQ(lines(), before);
  }
  // A device node this user may no longer open.
  fs::remove(root_ / "dev/nvidia0");
  EXPECT_NE(lines(), before);
}

TEST_F(MachineFingerprint, AMachineItCannotDescribeHasNone) {
  std::string why;
  // An MPS server answers for its clients.
  ASSERT_EQ(::mkfifo((root_ / "mps-control").c_str(), 0600), 0);
  fs::create_directories(root_ / "mps");
  fs::rename(root_ / "mps-control", root_ / "mps/control");
  EXPECT_FALSE(machine_lines(nullptr, why));
  EXPECT_EQ(why, "an MPS server's control pipe is there");
  fs::remove(root_ / "mps/control");
  // No boot id.
  fs::remove(root_ / "proc/sys/kernel/random/boot_id");
  EXPECT_FALSE(machine_lines(nullptr, why));
  EXPECT_EQ(why, "no boot id");
  write("proc/sys/kernel/random/boot_id", "boot-1\n");
  // No GPUs in /proc, and no NVML to name them; NVML's names where /proc has none.
  fs::remove_all(root_ / "proc/driver/nvidia/gpus");
  EXPECT_FALSE(machine_lines(nullptr, why));
  EXPECT_EQ(why, "neither /proc/driver/nvidia nor NVML names the GPUs");
  const NvmlInventory nvml{"590.10.02", {{"00000000:07:00.0", "GPU-x", {}}}};
  const auto text = machine_lines(&nvml, why);
  ASSERT_TRUE(text) << why;
  EXPECT_NE(text->find("nvml-version 590.10.02\nnvml-gpu 00000000:07:00.0 GPU-x\n"),
            std::string::npos)
      << *text;
}

TEST(FingerprintEnvironment, TheVariablesThatShapeEnumerationSorted) {
  const std::vector<std::string> from = {"PATH=/bin",
                                         "CUDA_VISIBLE_DEVICES=1,0",
                                         "CUDA_DEVICE=1",
                                         "LD_LIBRARY_PATH=/x",
                                         "__NV_PRIME_RENDER_OFFLOAD=1",
                                         "CUDATOOL_LIBCUDA=/l",
                                         "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                         "HOME=/h"};
  EXPECT_EQ(environment_lines(&from),
            (std::vector<std::string>{"env CUDATOOL_LIBCUDA=/l", "env CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                      "env CUDA_VISIBLE_DEVICES=1,0", "env LD_LIBRARY_PATH=/x",
                                      "env __NV_PRIME_RENDER_OFFLOAD=1"}));
  EXPECT_EQ(one_line("a\nb\\c"), "a\\nb\\\\c");
}

TEST(FingerprintWhole, FormatMachineEnvironmentAndLibrary) {
  const std::string text =
      compose_fingerprint("machine\n", {"env CUDA_VISIBLE_DEVICES=0"}, "/nonexistent/libcuda.so.1");
  EXPECT_TRUE(text.starts_with("format " + std::to_string(kDeviceCacheFormat) +
                               "\nmachine\nenv CUDA_VISIBLE_DEVICES=0\n"
                               "libcuda /nonexistent/libcuda.so.1 absent\n"))
      << text;
  EXPECT_NE(text.find("\nexe "), std::string::npos) << text;
  // Another library file, another fingerprint.
  EXPECT_NE(compose_fingerprint("machine\n", {}, "/a"), compose_fingerprint("machine\n", {}, "/b"));
}

}  // namespace
}  // namespace cudatool::detail
