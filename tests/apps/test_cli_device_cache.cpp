// The device cache (cudatool/device/device_cache.hpp) end to end: `devices`, `attrs` and
// `occupancy --device` through the real binary, the fake driver (tests/fake_driver) and the
// fake NVML (tests/fake_nvml) on a fake machine: /proc/driver/nvidia, the boot id, /proc/
// modules and /dev/nvidia* under CUDATOOL_TEST_SYSTEM_ROOT (a test hook: a release build
// ignores it). The fake driver writes a line to FAKE_CUDA_INIT_LOG at each cuInit, so each
// run shows whether it took the cuInit path. Every rule ends on the cuInit path or on a hit
// whose output is byte-identical to the cuInit path's, never on a stale answer.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cudatool/base/sha256.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/device/device_cache.hpp"
#include "process.hpp"

using namespace cudatool::testing;
namespace fs = std::filesystem;

namespace {

struct FakeGpu {
  std::string cc;  // "9.0"
  unsigned bus;    // PCI bus number
};

class DeviceCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cudatool::test_hooks_enabled())
      GTEST_SKIP() << "a build without test hooks (CUDATOOL_TEST_HOOKS=OFF) has no fake /proc";
    char pattern[] = "/tmp/cudatool-device-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    root_ = dir_ / "root";
    cache_ = dir_ / "cache";
    fs::create_directories(cache_);
    write_machine();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ec;
      fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
      fs::remove_all(dir_, ec);
    }
  }

  static void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }

  // The fake machine's files, from gpus_, driver_version_ and boot_id_.
  void write_machine() {
    std::error_code ec;
    fs::remove_all(root_, ec);
    const fs::path nvidia = root_ / "proc/driver/nvidia";
    write(root_ / "proc/sys/kernel/random/boot_id", boot_id_ + "\n");
    write(nvidia / "version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " +
                                  driver_version_ + "  Release Build  (dvs-builder@U16)\n" +
                                  "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    write(nvidia / "params", "ResmanDebugLevel: 4294967295\nEnableGpuFirmware: 18\n");
    write(root_ / "proc/modules",
          "nvidia_uvm 1806336 0 - Live 0x0000000000000000\n"
          "nvidia 14381056 1 nvidia_uvm, Live 0x0000000000000000\n"
          "ext4 1036288 2 - Live 0x0000000000000000\n");
    write(root_ / "dev/nvidiactl", "");
    write(root_ / "dev/nvidia-uvm", "");
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      char bus[32];
      std::snprintf(bus, sizeof bus, "0000:%02x:00.0", gpus_[i].bus);
      write(nvidia / "gpus" / bus / "information",
            "Model: \t\t NVIDIA Fake\nIRQ:   \t\t 42\nGPU UUID: \t GPU-fake-" + std::to_string(i) +
                "\nBus Location: \t " + bus + "\nDevice Minor: \t " + std::to_string(i) +
                "\nGPU Excluded:\t No\n");
      write(root_ / "dev" / ("nvidia" + std::to_string(i)), "");
    }
  }

  ProcessOptions options(const std::map<std::string, std::optional<std::string>>& extra = {}) {
    ProcessOptions o;
    std::string ccs, buses;
    for (const FakeGpu& g : gpus_) {
      ccs += (ccs.empty() ? "" : ",") + g.cc;
      char bus[16];
      std::snprintf(bus, sizeof bus, "%x", g.bus);
      buses += (buses.empty() ? "" : ",") + std::string(bus);
    }
    o.env = {{"CUDATOOL_LIBCUDA", libcuda_},
             {"CUDATOOL_LIBNVML", std::string(CUDATOOL_FAKE_LIBNVML)},
             {"CUDATOOL_TEST_SYSTEM_ROOT", root_.string()},
             {"CUDATOOL_TEST_PROC_DRIVER_VERSION", (root_ / "proc/driver/nvidia/version").string()},
             {"CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA", "1"},
             {"CUDATOOL_TEST_DEVICE_CACHE_TRACE", "1"},
             {"XDG_CACHE_HOME", cache_.string()},
             {"FAKE_CUDA_INIT_LOG", (dir_ / "init.log").string()},
             {"FAKE_CUDA_DEVICES", ccs},
             {"FAKE_CUDA_PCI_BUSES", buses},
             {"FAKE_CUDA_DRIVER_VERSION", cuda_version_},
             {"FAKE_NVML_DRIVER_VERSION", driver_version_},
             {"FAKE_CUDA_COMPUTE_MODE", compute_mode_},
             {"FAKE_NVML_COMPUTE_MODE", compute_mode_},
             {"CUDA_VISIBLE_DEVICES", std::nullopt},
             {"CUDA_DEVICE_ORDER", std::nullopt},
             {"CUDA_DEVICE", std::nullopt},
             {"CUDA_MPS_PIPE_DIRECTORY", std::nullopt},
             {"CUDATOOL_FRESH", std::nullopt},
             {"CUDATOOL_NO_NVML", std::nullopt},
             {"FAKE_NVML_MIG", "na"},  // a GPU without MIG unless a test says otherwise
             {"FAKE_NVML_DISPLAY", "0,0"},
             {"FAKE_NVML_ECC", std::nullopt},
             {"FAKE_NVML_NO_FIELDS", std::nullopt}};
    for (const auto& [k, v] : extra) o.env[k] = v;
    return o;
  }

  struct Run {
    ProcessResult result;
    bool called_cuinit = false;
    std::string path;  // the trace: "hit", "refreshed", "cuinit", "off"
  };

  Run run(const std::vector<std::string>& args,
          const std::map<std::string, std::optional<std::string>>& extra = {}) {
    const fs::path log = dir_ / "init.log";
    std::error_code ec;
    fs::remove(log, ec);
    Run r;
    r.result = run_cudatool(args, options(extra));
    r.called_cuinit = fs::exists(log);
    const auto at = r.result.err.find("device cache: ");
    if (at != std::string::npos) {
      const auto start = at + 14;
      r.path = r.result.err.substr(start, r.result.err.find_first_of(" \n", start) - start);
    }
    return r;
  }

  // Asserts that the warm run hits, calls no cuInit, and prints what --fresh prints.
  void expect_hit_equals_fresh(
      const std::vector<std::string>& args,
      const std::map<std::string, std::optional<std::string>>& extra = {}) {
    std::vector<std::string> fresh_args = args;
    fresh_args.push_back("--fresh");
    const Run fresh = run(fresh_args, extra);
    EXPECT_TRUE(fresh.called_cuinit);
    EXPECT_EQ(fresh.path, "refreshed") << fresh.result.err;
    const Run warm = run(args, extra);
    EXPECT_EQ(warm.path, "hit") << warm.result.err;
    EXPECT_FALSE(warm.called_cuinit) << warm.result.err;
    EXPECT_EQ(warm.result.exit_code, fresh.result.exit_code);
    EXPECT_EQ(warm.result.out, fresh.result.out);
    EXPECT_EQ(error_line(warm.result.err), error_line(fresh.result.err));
  }

  // stderr without the test's trace lines.
  static std::string error_line(const std::string& err) {
    std::string kept;
    std::size_t start = 0;
    while (start < err.size()) {
      std::size_t end = err.find('\n', start);
      end = end == std::string::npos ? err.size() : end + 1;
      const std::string_view line(err.data() + start, end - start);
      if (!line.starts_with("device cache: ")) kept += line;
      start = end;
    }
    return kept;
  }

  fs::path entry() {
    const fs::path devices = cache_ / "cudatool/devices";
    for (const auto& e : fs::directory_iterator(devices))
      if (e.path().extension() == ".entry") return e.path();
    return {};
  }

  // After `change`, a run must not answer from the old entry: it calls cuInit and prints
  // what --fresh prints under the new state.
  void expect_invalidated(const std::vector<std::string>& args, const std::string& expected_path,
                          const std::map<std::string, std::optional<std::string>>& extra = {}) {
    const Run after = run(args, extra);
    EXPECT_TRUE(after.called_cuinit) << after.result.err;
    EXPECT_EQ(after.path, expected_path) << after.result.err;
    std::vector<std::string> fresh_args = args;
    fresh_args.push_back("--fresh");
    const Run fresh = run(fresh_args, extra);
    EXPECT_EQ(after.result.out, fresh.result.out);
    EXPECT_EQ(after.result.exit_code, fresh.result.exit_code);
  }

  void warm(const std::vector<std::string>& args = {"devices", "--json"}) {
    run(args);
    const Run hit = run(args);
    ASSERT_EQ(hit.path, "hit") << hit.result.err;
  }

  fs::path dir_, root_, cache_;
  std::string libcuda_ = CUDATOOL_FAKE_LIBCUDA;
  std::vector<FakeGpu> gpus_ = {{"9.0", 0x41}, {"8.0", 0x0b}, {"8.6", 0x22}};
  std::string driver_version_ = "580.159.04";
  std::string cuda_version_ = "13000";
  std::string boot_id_ = "6f1c3a52-0d4e-4a8c-9b1e-3f5a7c9d2e10";
  std::string compute_mode_ = "0";
};

const std::vector<std::vector<std::string>> kCommands = {
    {"devices", "--json"},
    {"devices"},
    {"attrs", "--json"},
    {"attrs", "--device", "0", "warp_size", "multiprocessor_count", "compute_mode"},
    {"occupancy", "--device", "0", "--threads", "256", "--regs", "32", "--json"},
    {"occupancy", "--device", "0", "--threads", "128", "--smem", "4096"},
};

}  // namespace

TEST_F(DeviceCache, TheSecondRunHitsWithoutCuInitAndPrintsTheSame) {
  const Run first = run({"devices", "--json"});
  ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
  EXPECT_TRUE(first.called_cuinit);
  EXPECT_EQ(first.path, "refreshed") << first.result.err;
  const Run second = run({"devices", "--json"});
  EXPECT_EQ(second.path, "hit") << second.result.err;
  EXPECT_FALSE(second.called_cuinit);
  EXPECT_EQ(second.result.out, first.result.out);
  // Owner-only: the directory 0700, the entry 0600, no temporary left.
  struct stat s {};
  ASSERT_EQ(::stat((cache_ / "cudatool/devices").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);
  ASSERT_FALSE(entry().empty());
  ASSERT_EQ(::stat(entry().c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0600u);
  int files = 0;
  for (const auto& e : fs::directory_iterator(cache_ / "cudatool/devices")) {
    ++files;
    (void)e;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(DeviceCache, HitsAreByteIdenticalToTheCuInitPathForEveryEnumeration) {
  // Machine order: 9.0 at bus 41, 8.0 at 0b, 8.6 at 22. The fake driver's UUID of the
  // machine's device 2 starts with 30313233.
  const std::vector<std::map<std::string, std::optional<std::string>>> environments = {
      {},
      {{"CUDA_VISIBLE_DEVICES", "1"}},
      {{"CUDA_VISIBLE_DEVICES", "2,0"}},
      {{"CUDA_VISIBLE_DEVICES", "0,7,1"}},  // enumeration stops at 7: one device
      {{"CUDA_VISIBLE_DEVICES", "GPU-30313233"}},
      {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}},
      {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "1,0"}},
  };
  for (const auto& environment : environments) {
    for (const auto& args : kCommands) {
      SCOPED_TRACE(::testing::PrintToString(args) + " " +
                   (environment.empty() ? std::string("{}")
                                        : environment.begin()->first + "=" +
                                              environment.begin()->second.value_or("")));
      expect_hit_equals_fresh(args, environment);
    }
    // Other devices through every selection spelling.
    expect_hit_equals_fresh({"attrs", "--json", "--device", "0000:0b:00.0"}, environment);
    expect_hit_equals_fresh({"attrs", "--json", "--device", "GPU-1011"}, environment);
  }
  // The orders really differ: a hit answers with the environment's own entry.
  const auto by_default = run({"devices", "--json"}).result.out;
  const auto by_bus = run({"devices", "--json"}, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}).result.out;
  EXPECT_NE(by_default, by_bus);
  EXPECT_EQ(nlohmann::json::parse(by_bus)["devices"][0]["pci_bus_id"], "0000:0b:00.0");
}

TEST_F(DeviceCache, FreshAndCudatoolFreshTakeTheCuInitPathAndRefresh) {
  warm();
  Run r = run({"devices", "--json", "--fresh"});
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_EQ(r.path, "refreshed");
  // The trace names what asked: the flag the tool passes as the library's source, or the
  // environment variable.
  EXPECT_NE(r.result.err.find("device cache: refreshed (--fresh)"), std::string::npos)
      << r.result.err;
  r = run({"devices", "--json"}, {{"CUDATOOL_FRESH", "1"}});
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_EQ(r.path, "refreshed");
  EXPECT_NE(r.result.err.find("device cache: refreshed (CUDATOOL_FRESH)"), std::string::npos)
      << r.result.err;
  r = run({"attrs", "warp_size"}, {{"CUDATOOL_FRESH", "0"}});
  EXPECT_FALSE(r.called_cuinit);
  EXPECT_EQ(r.path, "hit");
}

TEST_F(DeviceCache, ADriverUpgradeIsACuInitRun) {
  warm();
  driver_version_ = "590.10.02";
  cuda_version_ = "13010";
  write_machine();
  expect_invalidated({"devices", "--json"}, "refreshed");
  EXPECT_NE(run({"devices"}).result.out.find("590.10.02 (CUDA 13.1)"), std::string::npos);
}

TEST_F(DeviceCache, ARebootIsACuInitRun) {
  warm();
  boot_id_ = "0a0b0c0d-0000-4000-8000-000000000001";
  write_machine();
  expect_invalidated({"devices", "--json"}, "refreshed");
}

TEST_F(DeviceCache, AGpuAddedRemovedOrMovedIsACuInitRun) {
  warm();
  gpus_.push_back({"7.5", 0x61});
  write_machine();
  expect_invalidated({"devices", "--json"}, "refreshed");
  EXPECT_EQ(nlohmann::json::parse(run({"devices", "--json"}).result.out)["device_count"], 4);

  gpus_.erase(gpus_.begin());
  write_machine();
  expect_invalidated({"devices", "--json"}, "refreshed");
  EXPECT_EQ(nlohmann::json::parse(run({"devices", "--json"}).result.out)["device_count"], 3);

  gpus_[0].bus = 0x0c;
  write_machine();
  expect_invalidated({"devices", "--json"}, "refreshed");
  EXPECT_EQ(
      nlohmann::json::parse(run({"devices", "--json"}).result.out)["devices"][0]["pci_bus_id"],
      "0000:0c:00.0");
}

TEST_F(DeviceCache, AVanishedDeviceIsTheSameErrorAsWithoutTheCache) {
  warm({"attrs", "--device", "2", "warp_size"});
  gpus_.pop_back();
  write_machine();
  const Run after = run({"attrs", "--device", "2", "warp_size"});
  EXPECT_TRUE(after.called_cuinit);
  EXPECT_EQ(after.result.exit_code, 4);
  const auto without_cache = run({"attrs", "--device", "2", "warp_size"},
                                 {{"XDG_CACHE_HOME", std::nullopt}, {"HOME", std::nullopt}});
  EXPECT_EQ(without_cache.path, "off");
  EXPECT_EQ(after.result.exit_code, without_cache.result.exit_code);
  EXPECT_EQ(after.result.out, without_cache.result.out);
  EXPECT_EQ(error_line(after.result.err), error_line(without_cache.result.err));
  EXPECT_NE(after.result.err.find("no device 2 (2 visible; valid: 0..1)"), std::string::npos)
      << after.result.err;
}

TEST_F(DeviceCache, NoDriverAndNoDeviceAreTheSameLineAndExitCode) {
  warm();
  const Run no_driver = run({"devices"}, {{"CUDATOOL_LIBCUDA", kMissingDriver}});
  EXPECT_EQ(no_driver.result.exit_code, 3);
  EXPECT_NE(
      no_driver.result.err.find("cudatool: CUDA driver not found (/nonexistent/libcuda.so.1)"),
      std::string::npos)
      << no_driver.result.err;
  for (const char* visible : {"", "5"}) {
    const Run none = run({"devices"}, {{"CUDA_VISIBLE_DEVICES", visible}});
    EXPECT_EQ(none.result.exit_code, 4) << visible;
    EXPECT_TRUE(none.called_cuinit);
    EXPECT_NE(none.result.err.find("cudatool: no CUDA device visible (CUDA_VISIBLE_DEVICES=\"" +
                                   std::string(visible) + "\")"),
              std::string::npos)
        << none.result.err;
    EXPECT_EQ(run({"devices"}, {{"CUDA_VISIBLE_DEVICES", visible}}).result.exit_code, 4);
  }
}

TEST_F(DeviceCache, AChangedComputeModeIsReadFromTheDriver) {
  warm({"attrs", "compute_mode", "warp_size"});
  compute_mode_ = "3";  // nvidia-smi -c EXCLUSIVE_PROCESS: the driver and NVML say so
  const Run after = run({"attrs", "compute_mode", "warp_size"});
  EXPECT_TRUE(after.called_cuinit) << after.result.err;
  EXPECT_NE(after.result.out.find("compute_mode  3"), std::string::npos) << after.result.out;
  // Values that do not depend on it still come from the entry.
  const Run warp = run({"attrs", "warp_size"});
  EXPECT_EQ(warp.path, "hit");
  EXPECT_FALSE(warp.called_cuinit);
  // --fresh keeps the new mode; the next run hits again.
  expect_hit_equals_fresh({"attrs", "--json"});
}

TEST_F(DeviceCache, AChangedEccModeIsReadFromTheDriver) {
  warm();
  const Run after = run({"devices", "--json"}, {{"FAKE_NVML_ECC", "0,0"}});
  EXPECT_TRUE(after.called_cuinit) << after.result.err;
  const Run attrs = run({"attrs", "ecc_enabled"}, {{"FAKE_NVML_ECC", "0,0"}});
  EXPECT_TRUE(attrs.called_cuinit) << attrs.result.err;
  // An NVML without nvmlDeviceGetFieldValues: the mode comes from nvmlDeviceGetEccMode. The
  // entry still holds the mode it was written with (1,1; a changed reading found after the
  // decision does not rewrite it): that mode is the entry's answer, another the driver's.
  const Run same =
      run({"devices", "--json"}, {{"FAKE_NVML_NO_FIELDS", "1"}, {"FAKE_NVML_ECC", "1,1"}});
  EXPECT_EQ(same.path, "hit");
  EXPECT_FALSE(same.called_cuinit) << same.result.err;
  const Run changed =
      run({"devices", "--json"}, {{"FAKE_NVML_NO_FIELDS", "1"}, {"FAKE_NVML_ECC", "0,0"}});
  EXPECT_TRUE(changed.called_cuinit) << changed.result.err;
}

TEST_F(DeviceCache, MigModeOrAnMpsServerIsNeverCached) {
  // GPUs with MIG mode, off: the entry depends on the reading; a pending change is a change.
  run({"devices", "--json"}, {{"FAKE_NVML_MIG", "0,0"}});
  EXPECT_EQ(run({"devices", "--json"}, {{"FAKE_NVML_MIG", "0,0"}}).path, "hit");
  EXPECT_TRUE(run({"devices", "--json"}, {{"FAKE_NVML_MIG", "0,1"}}).called_cuinit);
  // MIG mode on (nvidia-smi -mig 1 and a GPU reset: nothing in /proc changes): never kept.
  Run r = run({"devices", "--json"}, {{"FAKE_NVML_MIG", "1,1"}});
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_EQ(r.path, "cuinit") << r.result.err;
  r = run({"devices", "--json"}, {{"FAKE_NVML_MIG", "1,1"}});
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_EQ(r.path, "cuinit") << r.result.err;

  write(root_ / "tmp/nvidia-mps/control", "");
  r = run({"devices", "--json"});
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_EQ(r.path, "cuinit") << r.result.err;
  fs::create_directories(dir_ / "mps");
  write(dir_ / "mps/control", "");
  fs::remove(root_ / "tmp/nvidia-mps/control");
  warm();
  EXPECT_TRUE(run({"devices", "--json"}, {{"CUDA_MPS_PIPE_DIRECTORY", (dir_ / "mps").string()}})
                  .called_cuinit);
}

TEST_F(DeviceCache, TheEnvironmentHasAnEntryOfItsOwn) {
  warm();
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", "1"},
                                                        {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                        {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"},
                                                        {"LD_LIBRARY_PATH", dir_.string()}}) {
    const Run r = run({"devices", "--json"}, {{name, value}});
    EXPECT_TRUE(r.called_cuinit) << name;
    EXPECT_EQ(r.path, "refreshed") << name << ": " << r.result.err;
  }
  // cudatool's own device choice is not the driver's enumeration: no new entry.
  EXPECT_EQ(run({"attrs", "warp_size"}, {{"CUDA_DEVICE", "1"}}).path, "hit");
}

// Issue 39, defect 7: a process (the Python module) that changes CUDA_VISIBLE_DEVICES after
// the driver started must not file the started driver's answers under the new setting: a
// later process started with that setting would get the old enumeration from the cache.
TEST_F(DeviceCache, NoEntryIsWrittenForAnEnvironmentTheDriverDidNotStartUnder) {
  for (const auto& [name, value] : options().env) {
    if (value)
      ::setenv(name.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  const auto first = cudatool::use_device_cache(false, "--fresh");
  EXPECT_EQ(first.path, cudatool::DeviceCachePath::refreshed) << first.why;
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  const auto second = cudatool::use_device_cache(false, "--fresh");
  EXPECT_EQ(second.path, cudatool::DeviceCachePath::cuinit);
  EXPECT_NE(second.why.find("another environment"), std::string::npos) << second.why;
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  // A process started with the setting sees its own enumeration: one device.
  const Run later = run({"devices", "--json"}, {{"CUDA_VISIBLE_DEVICES", "1"}});
  ASSERT_EQ(later.result.exit_code, 0) << later.result.err;
  EXPECT_EQ(nlohmann::json::parse(later.result.out)["devices"].size(), 1u) << later.result.out;
}

TEST_F(DeviceCache, AReplacedDriverLibraryIsACuInitRun) {
  libcuda_ = (dir_ / "libcuda.so.1").string();
  fs::copy_file(CUDATOOL_FAKE_LIBCUDA, libcuda_);
  warm();
  fs::remove(libcuda_);
  fs::copy_file(CUDATOOL_FAKE_LIBCUDA, libcuda_);  // a new inode: the driver was reinstalled
  expect_invalidated({"devices", "--json"}, "refreshed");
  // A libcuda.so.1 that appears in an LD_LIBRARY_PATH directory is another loader result.
  fs::create_directories(dir_ / "lib");
  const std::map<std::string, std::optional<std::string>> path = {
      {"LD_LIBRARY_PATH", (dir_ / "lib").string()}};
  run({"devices", "--json"}, path);
  EXPECT_EQ(run({"devices", "--json"}, path).path, "hit");
  write(dir_ / "lib/libcuda.so.1", "");
  EXPECT_TRUE(run({"devices", "--json"}, path).called_cuinit);
}

TEST_F(DeviceCache, DamagedEntriesAreIgnoredAndRewritten) {
  const auto reference = run({"devices", "--json"}).result.out;
  auto read_entry = [&] {
    std::ifstream in(entry(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string good = read_entry();
  ASSERT_FALSE(good.empty());
  auto expect_rewritten = [&](const std::string& what) {
    SCOPED_TRACE(what);
    const Run r = run({"devices", "--json"});
    EXPECT_TRUE(r.called_cuinit) << r.result.err;
    EXPECT_EQ(r.path, "refreshed") << r.result.err;
    EXPECT_EQ(r.result.out, reference);
    const Run again = run({"devices", "--json"});
    EXPECT_EQ(again.path, "hit") << again.result.err;
    EXPECT_EQ(again.result.out, reference);
  };
  auto replace = [&](const std::string& bytes) {
    const fs::path p = entry();
    fs::remove(p);
    write(p, bytes);
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  };
  // One byte changed in the payload (a device name): the checksum fails.
  std::string damaged = good;
  const auto name = damaged.find("Fake GPU");
  ASSERT_NE(name, std::string::npos);
  damaged[name] = 'X';
  replace(damaged);
  expect_rewritten("damaged");
  replace(good.substr(0, good.size() / 2));
  expect_rewritten("truncated");
  replace("");
  expect_rewritten("empty");
  // A future format.
  ASSERT_TRUE(good.starts_with("cudatool-cache 2\n"));
  std::string future = good;
  future.replace(0, 16, "cudatool-cache 3");
  replace(future);
  expect_rewritten("future format");
  // The format before the one cache store: its header, then the same payload.
  const std::string payload = good.substr(good.find("\n{") + 1);
  replace("cudatool device cache 1\nsha256 " + cudatool::sha256_hex(payload) + "\n" + payload);
  expect_rewritten("the device cache's own format of earlier versions");
  // Another environment's entry copied over this one's name.
  std::string other_key = good;
  other_key.replace(other_key.find("\nkey ") + 5, 16, "0123456789abcdef");
  replace(other_key);
  expect_rewritten("another key's entry");
  // Open to others.
  replace(good);
  fs::permissions(entry(), fs::perms::group_write | fs::perms::others_write, fs::perm_options::add);
  expect_rewritten("group and world writable");
  // A symbolic link to a valid entry elsewhere.
  const fs::path elsewhere = dir_ / "elsewhere.entry";
  write(elsewhere, good);
  fs::permissions(elsewhere, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path p = entry();
  fs::remove(p);
  fs::create_symlink(elsewhere, p);
  expect_rewritten("symbolic link");
  EXPECT_FALSE(fs::is_symlink(entry()));
  // Another user's (root can make one).
  if (::geteuid() == 0) {
    replace(good);
    ASSERT_EQ(::chown(entry().c_str(), 65534, 65534), 0);
    expect_rewritten("owned by nobody");
    struct stat s {};
    ASSERT_EQ(::stat(entry().c_str(), &s), 0);
    EXPECT_EQ(s.st_uid, 0u);
  }
}

TEST_F(DeviceCache, ADirectoryOpenToOthersIsMadeOwnerOnlyAndARelativeXdgIsIgnored) {
  run({"devices"});
  fs::permissions(cache_ / "cudatool/devices", fs::perms::all);
  run({"devices"});
  struct stat s {};
  ASSERT_EQ(::stat((cache_ / "cudatool/devices").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);
  // XDG: a relative XDG_CACHE_HOME is invalid and ignored; HOME/.cache is used.
  fs::create_directories(dir_ / "home");
  fs::create_directories(dir_ / "work/relative");
  ProcessOptions o = options({{"XDG_CACHE_HOME", "relative"}, {"HOME", (dir_ / "home").string()}});
  o.working_directory = (dir_ / "work").string();
  ASSERT_EQ(run_cudatool({"devices"}, o).exit_code, 0);
  EXPECT_TRUE(fs::is_directory(dir_ / "home/.cache/cudatool/devices"));
  EXPECT_FALSE(fs::exists(dir_ / "work/relative/cudatool"));
}

TEST_F(DeviceCache, SixteenConcurrentFirstRunsNeverSeeAHalfWrittenEntry) {
  const std::string reference = run({"devices", "--json", "--fresh"}).result.out;
  ASSERT_FALSE(reference.empty());
  for (int round = 0; round < 2; ++round) {
    std::error_code ec;
    fs::remove_all(cache_ / "cudatool", ec);
    std::vector<ProcessResult> results(16);
    std::vector<std::thread> threads;
    const ProcessOptions o = options();
    for (int i = 0; i < 16; ++i)
      threads.emplace_back([&, i] {
        results[static_cast<std::size_t>(i)] = run_cudatool({"devices", "--json"}, o);
      });
    for (auto& t : threads) t.join();
    for (const ProcessResult& r : results) {
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, reference);
      EXPECT_TRUE(r.err.find("device cache: refreshed") != std::string::npos ||
                  r.err.find("device cache: hit") != std::string::npos)
          << r.err;
    }
    int files = 0;
    for (const auto& e : fs::directory_iterator(cache_ / "cudatool/devices")) {
      ++files;
      EXPECT_EQ(e.path().extension(), ".entry") << e.path();
    }
    EXPECT_EQ(files, 1);
    EXPECT_EQ(run({"devices", "--json"}).path, "hit");
  }
}

TEST_F(DeviceCache, WithoutProcTheGpusAreNamedByNvml) {
  fs::remove_all(root_ / "proc/driver/nvidia");
  expect_hit_equals_fresh({"devices", "--json"});
  expect_hit_equals_fresh({"attrs", "--json"});
  // A GPU added is an NVML change.
  gpus_.push_back({"7.5", 0x61});
  write_machine();
  fs::remove_all(root_ / "proc/driver/nvidia");
  expect_invalidated({"devices", "--json"}, "refreshed");
}

TEST_F(DeviceCache, ADriverNamedByCudatoolLibcudaIsNotCachedOutsideTheTests) {
  const Run r = run({"devices"}, {{"CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA", std::nullopt}});
  EXPECT_EQ(r.path, "off");
  EXPECT_TRUE(r.called_cuinit);
  EXPECT_FALSE(fs::exists(cache_ / "cudatool/devices") && !entry().empty());
}
