// End-to-end tests of `cudatool devices` and `cudatool attrs` through the real binary:
// with no driver, with the fake driver (tests/fake_driver) for exit codes and rendering,
// and (GpuTest) on a real GPU.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cudatool/base/test_hooks.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/device.hpp"
#include "gpu_test.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;

TEST(CliGlobal, VersionAndHelp) {
  auto r = run_cudatool({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("cudatool " CUDATOOL_VERSION), std::string::npos);
  for (const char* sub : {"devices", "attrs"}) {
    r = run_cudatool({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << sub;
  }
}

TEST(CliGlobal, UsageErrorsAreOneLineWithExitTwo) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"banana"},
                                               {"devices", "--bogus"},
                                               {},
                                               {"attrs", "--device"},
                                               {"devices", "--min-count", "x"}}) {
    const auto r = run_cudatool(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("cudatool: ")) << r.err;
  }
  EXPECT_NE(run_cudatool({"banana"}).err.find("unknown command \"banana\""), std::string::npos);
}

TEST(CliNoDriver, DevicesSaysSoAndExitsThree) {
  const auto r = run_cudatool({"devices"}, without_driver());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("CUDA driver not found (/nonexistent/libcuda.so.1)"), std::string::npos)
      << r.err;
  const auto j = run_cudatool({"devices", "--json"}, without_driver());
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(json::parse(j.out)["error"]["status"], "no_driver");
}

TEST(CliNoDriver, AttributeNamesAreCheckedFirst) {
  const auto r = run_cudatool({"attrs", "max_thread_per_block"}, without_driver());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean: max_threads_per_block"), std::string::npos) << r.err;
  EXPECT_EQ(run_cudatool({"attrs", "warp_size"}, without_driver()).exit_code, 3);
}

TEST(CliFakeDriver, DevicesListsEveryDevice) {
  const auto r = run_cudatool({"devices"}, with_fake_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 4);  // two devices, the peer-access line and the driver line
  EXPECT_NE(r.out.find("0  Fake GPU 0  sm_90  80 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0000:02:00.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peer access: 0->1, 1->0"), std::string::npos) << r.out;
}

// Issue 39 (also seen): text from NVML reaches a terminal escaped, never as an escape
// sequence or a line break of its own.
TEST(CliFakeDriver, DevicesTextEscapesWhatNvmlSays) {
  auto o = with_fake_driver();
  o.env["CUDATOOL_NO_NVML"] = std::nullopt;
  o.env["CUDATOOL_LIBNVML"] = std::string(CUDATOOL_FAKE_LIBNVML);
  o.env["FAKE_NVML_DRIVER_VERSION"] = "580\x1b[2J\nforged line";
  // --memory-usage asks NVML first for the driver's version.
  const auto r = run_cudatool({"devices", "--memory-usage", "--fresh"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nforged line"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("driver: 580"), std::string::npos) << r.out;
}

TEST(CliFakeDriver, DevicesJsonHasEveryField) {
  const auto r = run_cudatool({"devices", "--json"}, with_fake_driver());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["device_count"], 2);
  EXPECT_EQ(j["cuda_version"], "13.0");
  const json& d = j["devices"][1];
  EXPECT_EQ(d["name"], "Fake GPU 1");
  EXPECT_EQ(d["compute_capability"], "8.0");
  EXPECT_EQ(d["arch"], "sm_80");
  EXPECT_EQ(d["multiprocessor_count"], 101);
  EXPECT_EQ(d["pci_bus_id"], "0000:02:00.0");
  EXPECT_EQ(d["uuid"], "GPU-20212223-2425-2627-2829-2a2b2c2d2e01");
  EXPECT_EQ(j["peer_access"], json::parse("[[false,true],[true,false]]"));
}

// The driver's own version comes from NVML or /proc/driver/nvidia/version (here a file the
// test writes, through the test-only CUDATOOL_TEST_PROC_DRIVER_VERSION, and NVML off).
class CliDriverVersion : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cudatool::test_hooks_enabled())
      GTEST_SKIP() << "a build without test hooks (CUDATOOL_TEST_HOOKS=OFF)";
    path_ = std::filesystem::temp_directory_path() /
            ("cudatool-proc-version-" + std::to_string(::getpid()));
  }
  void TearDown() override { std::filesystem::remove(path_); }
  ProcessOptions options() const {
    auto o = with_fake_driver();
    o.env["CUDATOOL_NO_NVML"] = "1";
    o.env["CUDATOOL_TEST_PROC_DRIVER_VERSION"] = path_.string();
    return o;
  }
  void write(const std::string& text) const { std::ofstream(path_) << text; }
  std::filesystem::path path_;
};

TEST_F(CliDriverVersion, ReadFromProcBesideTheCudaVersion) {
  write(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
      "(dvs-builder@U22-I3-AE18-09-4)  Tue Jul 29 21:05:09 UTC 2025\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n");
  auto r = run_cudatool({"devices"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ndriver: 580.159.04 (CUDA 13.0)\n"), std::string::npos) << r.out;
  r = run_cudatool({"devices", "--json", "--memory-usage"}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["driver_version"], "580.159.04");
  EXPECT_EQ(j["cuda_version"], "13.0");
}

TEST_F(CliDriverVersion, AbsentWhereNothingAnswers) {
  // No file at all, then a file without a version: nothing is invented.
  for (const bool with_file : {false, true}) {
    if (with_file) write("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n");
    auto r = run_cudatool({"devices"}, options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\ndriver: CUDA 13.0\n"), std::string::npos) << r.out;
    r = run_cudatool({"devices", "--json"}, options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_FALSE(j.contains("driver_version")) << r.out;
    EXPECT_EQ(j["cuda_version"], "13.0");
  }
}

// A FIFO where the /proc file is read blocked `devices` forever (issue 20, item 15).
TEST_F(CliDriverVersion, AFifoIsNoVersionAndNoWait) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  auto o = options();
  o.timeout_seconds = 20;
  const auto r = run_cudatool({"devices"}, o);
  ASSERT_FALSE(r.timed_out) << "devices waited on the FIFO";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ndriver: CUDA 13.0\n"), std::string::npos) << r.out;
}

TEST(CliFakeDriver, RequirementsExitFourSayingWhatIsMissing) {
  auto r = run_cudatool({"devices", "--min-count", "3"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("requirement unmet: found 2 devices, need at least 3"), std::string::npos)
      << r.err;
  r = run_cudatool({"devices", "--min-cc", "9.0", "--min-count", "2"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("device 1 (Fake GPU 1) has compute capability 8.0, need 9.0"),
            std::string::npos)
      << r.err;
  r = run_cudatool({"devices", "--min-cc", "9.0", "--min-memory", "80GiB", "--json"},
                   with_fake_driver());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["requirements"]["qualifying_devices"], 1);
  r = run_cudatool({"devices", "--min-memory", "81GiB"}, with_fake_driver());
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(run_cudatool({"devices", "--min-cc", "banana"}, with_fake_driver()).exit_code, 2);
}

TEST(CliFakeDriver, NoVisibleDeviceIsNotNoDriver) {
  const auto r = run_cudatool({"devices"}, with_fake_driver({{"FAKE_CUDA_INIT_RESULT", "100"},
                                                             {"CUDA_VISIBLE_DEVICES", ""}}));
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("no CUDA device visible (CUDA_VISIBLE_DEVICES=\"\")"), std::string::npos)
      << r.err;
  EXPECT_EQ(run_cudatool({"devices", "--min-count", "0"},
                         with_fake_driver({{"FAKE_CUDA_INIT_RESULT", "100"}}))
                .exit_code,
            0);
}

TEST(CliFakeDriver, StubLibraryIsNoDriver) {
  const auto r = run_cudatool({"devices"}, with_fake_driver({{"FAKE_CUDA_INIT_RESULT", "34"}}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("stub"), std::string::npos) << r.err;
}

TEST(CliFakeDriver, DriverTooOldForAnEntryPoint) {
  // The "old" fake lacks cuDeviceGetUuid_v2: listing needs it, one attribute does not.
  ProcessOptions old;
  old.env["CUDATOOL_LIBCUDA"] = std::string(CUDATOOL_FAKE_LIBCUDA_OLD);
  old.env["FAKE_CUDA_DRIVER_VERSION"] = "12020";
  auto r = run_cudatool({"devices"}, old);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("CUDA driver too old: it lacks cuDeviceGetUuid (driver supports CUDA 12.2"),
            std::string::npos)
      << r.err;
  old.env["HOME"] = "/nonexistent-home";
  old.env["CUDA_DEVICE"] = std::nullopt;
  r = run_cudatool({"attrs", "warp_size"}, old);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "warp_size  32\n");
}

TEST(CliFakeDriver, DeviceSelectionErrors) {
  auto options = with_fake_driver();
  options.env["HOME"] = "/nonexistent-home";
  options.env["CUDA_DEVICE"] = std::nullopt;
  auto r = run_cudatool({"attrs", "--device", "99", "warp_size"}, options);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("--device \"99\": no device 99 (2 visible; valid: 0..1)"), std::string::npos)
      << r.err;
  r = run_cudatool({"attrs", "--device", "0000:zz:00.0", "warp_size"}, options);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cudatool({"attrs", "--device", "GPU-deadbeef", "warp_size"}, options);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("no device with UUID GPU-deadbeef"), std::string::npos) << r.err;
  options.env["CUDA_DEVICE"] = "abc";
  r = run_cudatool({"attrs", "warp_size"}, options);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CUDA_DEVICE \"abc\""), std::string::npos) << r.err;
  options.env["CUDA_DEVICE"] = "-1";
  EXPECT_EQ(run_cudatool({"attrs", "warp_size"}, options).exit_code, 2);
  options.env["CUDA_DEVICE"] = "1";
  r = run_cudatool({"attrs", "--json", "multiprocessor_count"}, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["attributes"]["multiprocessor_count"], 101);
  r = run_cudatool({"attrs", "--device", "0000:02:00.0", "--json", "multiprocessor_count"},
                   options);
  EXPECT_EQ(json::parse(r.out)["device"], 1) << r.err;
  r = run_cudatool({"attrs", "--device", "GPU-2021", "--json", "multiprocessor_count"}, options);
  EXPECT_EQ(json::parse(r.out)["device"], 1) << r.err;
}

TEST(CliFakeDriver, RejectedAttributesAreLeftOutNotZero) {
  const auto r =
      run_cudatool({"attrs", "--json"}, with_fake_driver({{"FAKE_CUDA_REJECT_ATTRS", "10,16"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json attributes = json::parse(r.out)["attributes"];
  EXPECT_FALSE(attributes.contains("warp_size"));
  EXPECT_FALSE(attributes.contains("multiprocessor_count"));
  EXPECT_TRUE(attributes.contains("max_threads_per_block"));
  EXPECT_GT(attributes.size(), 140u);
  // Asked for by name, a rejected attribute is an error, not a silent 0.
  const auto named =
      run_cudatool({"attrs", "warp_size"}, with_fake_driver({{"FAKE_CUDA_REJECT_ATTRS", "10"}}));
  EXPECT_EQ(named.exit_code, 5);
  EXPECT_NE(named.err.find("cuDeviceGetAttribute failed: CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << named.err;
}

class CliGpu : public cudatool::testing::GpuTest {};

TEST_F(CliGpu, DevicesMatchesTheLibrary) {
  const auto r = run_cudatool({"devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_GE(j["device_count"].get<int>(), 1);
  const json& d = j["devices"][0];
  EXPECT_EQ(d["name"], cudatool::Device(0).name());
  EXPECT_EQ(d["uuid"], cudatool::Device(0).uuid());
  EXPECT_EQ(d["total_memory_bytes"], cudatool::Device(0).total_memory());
  EXPECT_GT(d["multiprocessor_count"].get<int>(), 0);
}

TEST_F(CliGpu, AttrsListsEveryAnsweredAttribute) {
  const auto r = run_cudatool({"attrs", "--device", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json attributes = json::parse(r.out)["attributes"];
  EXPECT_GT(attributes.size(), 120u);
  EXPECT_EQ(attributes["warp_size"], 32);
  EXPECT_EQ(attributes["multiprocessor_count"],
            cudatool::Device(0).get_attribute(
                cudatool::attribute_by_name("multiprocessor_count").attribute));
}

TEST_F(CliGpu, EmptyVisibleDevicesIsNoDevice) {
  ProcessOptions options;
  options.env["CUDA_VISIBLE_DEVICES"] = "";
  const auto r = run_cudatool({"devices"}, options);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no CUDA device visible"), std::string::npos) << r.err;
}

TEST_F(CliGpu, VisibleDevicesReordersAndSelectsByUuid) {
  CUDATOOL_REQUIRE_DEVICES(2);
  const std::string second_uuid = cudatool::Device(1).uuid();
  ProcessOptions options;
  options.env["CUDA_VISIBLE_DEVICES"] = "1";
  auto r = run_cudatool({"devices", "--json"}, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["device_count"], 1);
  EXPECT_EQ(j["devices"][0]["uuid"], second_uuid);
  r = run_cudatool({"devices", "--json"});
  j = json::parse(r.out);
  EXPECT_EQ(j["peer_access"].size(), j["devices"].size());
  r = run_cudatool({"attrs", "--json", "--device", second_uuid, "warp_size"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["device"], 1);
  EXPECT_EQ(run_cudatool({"devices", "--min-count", "2"}).exit_code, 0);
}

namespace {

// A driver that leaves no NUL in the name or PCI bus id buffer: both were read past their
// buffers (ASan: stack-buffer-overflow); now they are the whole buffer and no more
// (issue 20, item 4).
TEST(CliFakeDriver, UnterminatedNamesFromTheDriverAreBoundedByTheirBuffers) {
  const auto r =
      run_cudatool({"devices", "--json"}, with_fake_driver({{"FAKE_CUDA_UNTERMINATED", "1"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["devices"][0]["name"], "Fake GPU 0" + std::string(256 - 10, 'N'));
  EXPECT_EQ(j["devices"][0]["pci_bus_id"], "0000:01:00.0" + std::string(32 - 12, 'p'));
}

// A negative device count from the driver printed "vector::reserve" (issue 20, item 18).
TEST(CliFakeDriver, ANegativeDeviceCountIsNamedAsTheDriversFault) {
  const auto r = run_cudatool({"devices"}, with_fake_driver({{"FAKE_CUDA_DEVICE_COUNT", "-1"}}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "cudatool: cuDeviceGetCount reported -1 devices: the driver misbehaves (a count is "
            "never negative)\n");
}

}  // namespace
