// End-to-end tests of `cudatool check` through the real binary: bad input (exit 2), no
// driver (3), no device (4), NVML missing (health skipped, exit 0), failed checks (9), a
// device failing mid-check (the fake driver), the occupancy check and the throttle reasons
// (the fake NVML), and on a real GPU every check.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cudatool/base/test_hooks.hpp"
#include "gpu_test.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;

namespace {

ProcessOptions fake(std::map<std::string, std::string> settings = {}) {
  settings["CUDATOOL_NO_NVML"] = "1";
  return with_fake_driver(settings);
}

const json& find_check(const json& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c["name"] == name) return c;
  static const json none;
  ADD_FAILURE() << "no check " << name << " in " << checks.dump();
  return none;
}

}  // namespace

TEST(CliCheck, BadInputIsOneLineExitTwoBeforeTheDriver) {
  const std::vector<std::vector<std::string>> cases = {
      {"check", "--only", "compute,gpu-burn"},
      {"check", "--skip", "bogus"},
      {"check", "--only", "compute", "--skip", "peer"},
      {"check", "--min-h2d-gbps", "-1"},
      {"check", "--min-d2d-gbps", "fast"},
      {"check", "--min-peer-gbps", "1e400"},
      {"check", "--min-fraction", "1.5"},
      {"check", "--min-fraction", "0"},
      {"check", "--format", "xml"},
      {"check", "--min-cc", "banana"},
      {"check", "--min-memory", "lots"},
  };
  for (const auto& args : cases) {
    const auto r = run_cudatool(args, without_driver());
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("cudatool: ")) << r.err;
  }
  EXPECT_NE(run_cudatool({"check", "--only", "compute,gpu-burn"})
                .err.find("unknown check \"gpu-burn\" (checks: identity, occupancy, health, xid, "
                          "compute, memory, "
                          "hostlink, peer)"),
            std::string::npos);
  auto options = without_driver();
  options.env["CUDATOOL_CHECK_INJECT_FAULT"] = "memory";
  const auto r = run_cudatool({"check"}, options);
  if (cudatool::test_hooks_enabled()) {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("CUDATOOL_CHECK_INJECT_FAULT \"memory\""), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 3) << "a build without test hooks read one: " << r.err;
  }
}

TEST(CliCheck, NoDriverExitsThree) {
  const auto r = run_cudatool({"check", "--json"}, without_driver());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(json::parse(r.out)["error"]["status"], "no_driver");
}

TEST(CliCheck, NoDeviceAndNonexistentDeviceExitFour) {
  auto r = run_cudatool({"check"}, fake({{"FAKE_CUDA_DEVICES", ""}}));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no CUDA device visible"), std::string::npos) << r.err;
  r = run_cudatool({"check", "--device", "7"}, fake());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no device 7"), std::string::npos) << r.err;
}

TEST(CliCheck, NvmlMissingSkipsHealthAndExitsZero) {
  const auto r =
      run_cudatool({"check", "--only", "identity,health", "--device", "0", "--json"}, fake());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["cuda_version"], "13.0");
  EXPECT_EQ(j["schema_version"], 2);
  ASSERT_EQ(j["devices"].size(), 1u);
  const json& health = find_check(j["devices"][0]["checks"], "health");
  EXPECT_EQ(health["verdict"], "skipped");
  EXPECT_EQ(health["reason"], "CUDATOOL_NO_NVML is set");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "identity")["verdict"], "pass");
  EXPECT_EQ(j["verdict"], "pass");
}

TEST(CliCheck, HeterogeneousDevicesWarnAndStrictFails) {
  // The fake's devices differ (sm_90 and sm_80): a warning, exit 0; --strict makes it 9.
  auto r = run_cudatool({"check", "--only", "identity"}, fake());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("warn    homogeneous"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 2 devices, 3 pass, 1 warn, 0 fail, 0 skipped"), std::string::npos)
      << r.out;
  r = run_cudatool({"check", "--only", "identity", "--strict"}, fake());
  EXPECT_EQ(r.exit_code, 9) << r.out;
}

TEST(CliCheck, UnmetRequirementFailsWithExitNine) {
  const auto r = run_cudatool({"check", "--only", "identity", "--min-cc", "9.0", "--json"}, fake());
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 9);
  EXPECT_EQ(j["devices"][0]["verdict"], "pass");
  EXPECT_EQ(j["devices"][1]["verdict"], "fail");
  EXPECT_EQ(find_check(j["devices"][1]["checks"], "identity")["reason"],
            "compute capability 8.0, need 9.0");
  const auto count = run_cudatool({"check", "--only", "identity", "--expect-count", "3"}, fake());
  EXPECT_EQ(count.exit_code, 9);
  EXPECT_NE(count.out.find("fail    count"), std::string::npos) << count.out;
}

TEST(CliCheck, DeviceFailingMidCheckFailsItsChecksOthersReported) {
  const auto r = run_cudatool({"check", "--only", "identity,compute,memory", "--json"},
                              fake({{"FAKE_CUDA_CTX_FAIL", "1"}}));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "identity")["verdict"], "pass");
  for (const char* name : {"compute", "d2d"}) {
    const json& c = find_check(j["devices"][1]["checks"], name);
    EXPECT_EQ(c["verdict"], "fail") << name;
    const std::string reason = c["reason"];
    EXPECT_NE(reason.find("cuDevicePrimaryCtxRetain"), std::string::npos) << reason;
    EXPECT_NE(reason.find("CUDA_ERROR_UNKNOWN"), std::string::npos) << reason;
  }
}

TEST(CliCheck, PrometheusTextfile) {
  const auto r = run_cudatool({"check", "--only", "identity", "--format", "prometheus"}, fake());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# TYPE cudatool_check_verdict gauge"), std::string::npos);
  // Without NVML, no gpu label: it is NVML's index, never guessed from the CUDA ordinal.
  EXPECT_NE(r.out.find("cudatool_check_verdict{UUID=\"GPU-20212223-2425-2627-2829-2a2b2c2d2e01\","
                       "pci_bus_id=\"00000000:02:00.0\",modelName=\"Fake GPU 1\",cuda_device=\"1\","
                       "check=\"identity\",name=\"identity\",verdict=\"pass\"} 1\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ncudatool_check_up 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncudatool_check_success 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncudatool_check_devices 2\n"), std::string::npos) << r.out;
}

// dcgm-exporter's `gpu` is NVML's index: under CUDA_VISIBLE_DEVICES=1 the CUDA device 0 is
// nvidia-smi's GPU 1, and the labels say both (JSON: nvml_index beside ordinal).
TEST(CliCheck, PrometheusGpuLabelIsNvmlsIndex) {
  auto options = with_fake_nvml({});
  options.env["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = run_cudatool({"check", "--only", "identity", "--format", "prometheus"}, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cudatool_check_gpu_verdict{gpu=\"1\",UUID=\"GPU-20212223-2425-2627-2829-"
                       "2a2b2c2d2e01\",pci_bus_id=\"00000000:02:00.0\",modelName=\"Fake GPU 1\","
                       "cuda_device=\"0\",verdict=\"pass\"} 1\n"),
            std::string::npos)
      << r.out;
  const auto j = run_cudatool({"check", "--only", "identity", "--json"}, options);
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["devices"][0]["ordinal"], 0);
  EXPECT_EQ(doc["devices"][0]["nvml_index"], 1);
  EXPECT_EQ(doc["devices"][0]["pci_bus_id_nvml"], "00000000:02:00.0");
  EXPECT_EQ(doc["driver_version"], "999.99.99");  // the fake NVML's
}

// No driver, no device: the textfile is still written whole (cudatool_check_up 0, the exit
// code), so that the collector replaces the node's last file; the error is still the usual
// one line on stderr and exit code.
TEST(CliCheck, PrometheusIsWrittenWithoutADriverOrADevice) {
  for (const auto& [options, code] :
       std::vector<std::pair<ProcessOptions, int>>{{without_driver(), 3},
                                                   {fake({{"FAKE_CUDA_DEVICES", ""}}), 4},
                                                   {fake({{"FAKE_CUDA_INIT_RESULT", "999"}}), 5}}) {
    const auto r = run_cudatool({"check", "--format", "prometheus"}, options);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.starts_with("# HELP cudatool_build_info ")) << r.out;
    EXPECT_NE(r.out.find("\ncudatool_check_up 0\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ncudatool_check_success 0\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ncudatool_check_exit_code " + std::to_string(code) + "\n"),
              std::string::npos)
        << r.out;
    EXPECT_TRUE(r.out.ends_with("\ncudatool_check_devices 0\n")) << r.out;
  }
  // --device naming no device: the same.
  const auto r = run_cudatool({"check", "--format", "prometheus", "--device", "7"}, fake());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("\ncudatool_check_exit_code 4\n"), std::string::npos) << r.out;
  // Bad input is refused before anything is written, as for every format.
  const auto bad = run_cudatool({"check", "--format", "prometheus", "--only", "bogus"}, fake());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.out, "");
}

// ---- Occupancy and throttle reasons through the fake NVML (tests/fake_driver) ----

namespace {

ProcessOptions nvml(std::map<std::string, std::string> settings = {}) {
  return with_fake_nvml(std::move(settings));
}

json check_json(const std::vector<std::string>& extra, const ProcessOptions& options,
                int expected_exit) {
  std::vector<std::string> args = {"check", "--json", "--device", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cudatool(args, options);
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  return json::parse(r.out);
}

// The test's own pid stands for the other process: its name is readable in /proc.
std::string self_pid() {
  return std::to_string(::getpid());
}

}  // namespace

TEST(CliCheckOccupancy, IdleDevicePassesEveryOccupancyCheck) {
  const json j = check_json({"--only", "occupancy"}, nvml(), 0);
  const json& checks = j["devices"][0]["checks"];
  ASSERT_EQ(checks.size(), 4u) << checks.dump();
  for (const auto& c : checks) EXPECT_EQ(c["verdict"], "pass") << c.dump();
  const json& o = j["devices"][0]["occupancy"];
  EXPECT_EQ(o["processes"], json::array());
  EXPECT_EQ(o["used_memory_bytes"], 0);
  EXPECT_EQ(o["used_excludes_reserved"], true);
  EXPECT_EQ(o["compute_mode"], "default");
  EXPECT_EQ(o["utilization_readings"], 5);
  EXPECT_GE(o["utilization_window_s"].get<double>(), 0.09);
  EXPECT_EQ(j["verdict"], "pass");
}

TEST(CliCheckOccupancy, MemoryHogWarnsWithItsPidAndSizeAndRequireIdleExitsNine) {
  const auto hog = nvml({{"FAKE_NVML_PROCESSES", "1/" + self_pid() + "/83429425152/C"}});
  const auto text = run_cudatool({"check", "--only", "occupancy", "--device", "0"}, hog);
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("warn    processes        1 processes (<= 0)            1 other "
                          "process on the device: pid " +
                          self_pid() + " (cudatool_cli_tests, 77.7 GiB)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("warn    used_memory      77.7 GiB (<= 1)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("summary: 1 device, 2 pass, 2 warn, 0 fail, 0 skipped"),
            std::string::npos)
      << text.out;
  json j = check_json({"--only", "occupancy"}, hog, 0);
  EXPECT_EQ(j["devices"][0]["occupancy"]["processes"][0]["pid"], ::getpid());
  EXPECT_EQ(j["devices"][0]["occupancy"]["processes"][0]["name"], "cudatool_cli_tests");
  EXPECT_EQ(j["devices"][0]["occupancy"]["processes"][0]["used_memory_bytes"], 83429425152ull);
  EXPECT_EQ(j["verdict"], "warn");
  j = check_json({"--only", "occupancy", "--require-idle"}, hog, 9);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "processes")["verdict"], "fail");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["verdict"], "fail");
  EXPECT_EQ(j["exit_code"], 9);
  // The other device is idle: its verdict is its own.
  const auto r = run_cudatool({"check", "--only", "occupancy", "--require-idle", "--json"}, hog);
  EXPECT_EQ(r.exit_code, 9);
  EXPECT_EQ(json::parse(r.out)["devices"][1]["verdict"], "pass");
}

TEST(CliCheckOccupancy, MaxUsedMemoryIsTheThresholdAndParsedAsASize) {
  const auto held = nvml({{"FAKE_NVML_USED_MEMORY", "3221225472"}});  // 3 GiB, nobody listed
  json j = check_json({"--only", "occupancy", "--max-used-memory", "4GiB"}, held, 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["verdict"], "pass");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["threshold"], 4.0);
  j = check_json({"--only", "occupancy", "--max-used-memory", "2G"}, held, 9);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["verdict"], "fail");
  j = check_json({"--only", "occupancy"}, held, 0);  // above the idle default: a warning
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["verdict"], "warn");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "processes")["verdict"], "pass");
  const auto bad = run_cudatool({"check", "--max-used-memory", "lots"}, without_driver());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--max-used-memory"), std::string::npos) << bad.err;
}

TEST(CliCheckOccupancy, ComputeHogWarnsTheSameEveryRun) {
  const auto hog =
      nvml({{"FAKE_NVML_PROCESSES", "1/" + self_pid() + "/2147483648/C,1/4194305/na/G"},
            {"FAKE_NVML_UTILIZATION", "100,38"},
            {"FAKE_NVML_CLOCK_EVENTS", "0x4"}});
  std::string first;
  for (int run = 0; run < 3; ++run) {
    const json j = check_json({"--only", "occupancy,health"}, hog, 0);
    std::string verdicts;
    for (const auto& c : j["devices"][0]["checks"])
      verdicts += c["name"].get<std::string>() + "=" + c["verdict"].get<std::string>() + " ";
    if (run == 0) first = verdicts;
    EXPECT_EQ(verdicts, first);
    EXPECT_EQ(j["verdict"], "warn");
    const json& u = find_check(j["devices"][0]["checks"], "utilization");
    EXPECT_EQ(u["verdict"], "warn");
    EXPECT_EQ(u["value"], 100);
    // The power cap under load is normal: named, not warned about.
    const json& t = find_check(j["devices"][0]["checks"], "throttle");
    EXPECT_EQ(t["verdict"], "pass");
    EXPECT_EQ(t["reason"].get<std::string>().rfind(
                  "normal clock events: sw_power_cap; measured while the device was shared "
                  "with pid " +
                      self_pid() + " (cudatool_cli_tests, 2 GiB)",
                  0),
              0u)
        << t.dump();
    EXPECT_TRUE(t.contains("shared_with")) << t.dump();
    // A pid that cannot exist has no name; memory NVML cannot say is null.
    const json& p = j["devices"][0]["occupancy"]["processes"];
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[1]["pid"], 4194305);
    EXPECT_EQ(p[1]["name"], "");
    EXPECT_EQ(p[1]["used_memory_bytes"], nullptr);
    EXPECT_EQ(p[1]["graphics"], true);
  }
  check_json({"--only", "occupancy,health", "--require-idle"}, hog, 9);
}

TEST(CliCheckOccupancy, ExclusiveProcessHeldSkipsTheContextChecksInsteadOfFailing) {
  // Held, as NVML lists it: no context is attempted.
  const auto held = nvml({{"FAKE_NVML_PROCESSES", "1/" + self_pid() + "/1073741824/C"},
                          {"FAKE_NVML_COMPUTE_MODE", "3"}});
  json j = check_json({"--only", "occupancy,compute,memory,hostlink"}, held, 0);
  const json& checks = j["devices"][0]["checks"];
  EXPECT_EQ(find_check(checks, "compute_mode")["verdict"], "warn");
  for (const char* name : {"compute", "d2d", "h2d", "d2h"}) {
    EXPECT_EQ(find_check(checks, name)["verdict"], "skipped") << name;
    EXPECT_NE(find_check(checks, name)["reason"].get<std::string>().find(
                  "exclusive_process mode and held by pid " + self_pid()),
              std::string::npos)
        << find_check(checks, name).dump();
  }
  EXPECT_EQ(j["devices"][0]["occupancy"]["compute_mode"], "exclusive_process");
  check_json({"--only", "occupancy,compute", "--require-idle"}, held, 9);
  // Refused by the driver although NVML lists nobody (another PID namespace): the same.
  const auto refused = nvml({{"FAKE_CUDA_CTX_BUSY", "0"}, {"FAKE_NVML_COMPUTE_MODE", "3"}});
  j = check_json({"--only", "occupancy,compute,memory"}, refused, 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute_mode")["verdict"], "warn");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute")["verdict"], "skipped");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "d2d")["verdict"], "skipped");
  EXPECT_EQ(j["devices"][0]["occupancy"]["context_refused"], true);
  // ... and without NVML at all.
  auto no_nvml = fake({{"FAKE_CUDA_CTX_BUSY", "0"}});
  j = check_json({"--only", "occupancy,compute"}, no_nvml, 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["verdict"], "skipped");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute_mode")["verdict"], "warn");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute")["verdict"], "skipped");
  // Prohibited: nobody may run there, a fail.
  j = check_json({"--only", "occupancy,compute"}, nvml({{"FAKE_NVML_COMPUTE_MODE", "2"}}), 9);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute_mode")["verdict"], "fail");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute")["verdict"], "skipped");
}

TEST(CliCheckOccupancy, OutOfMemoryWhileOthersHoldItWarnsAndAloneFails) {
  // Others hold the memory: no room for a context is the occupancy's doing.
  const auto full = nvml(
      {{"FAKE_CUDA_CTX_OOM", "0"}, {"FAKE_NVML_PROCESSES", "1/" + self_pid() + "/85000000000/C"}});
  json j = check_json({"--only", "occupancy,compute,memory"}, full, 0);
  for (const char* name : {"compute", "d2d"}) {
    const json& c = find_check(j["devices"][0]["checks"], name);
    EXPECT_EQ(c["verdict"], "warn") << c.dump();
    EXPECT_NE(c["reason"].get<std::string>().find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos);
    EXPECT_NE(c["shared_with"].get<std::string>().find("pid " + self_pid()), std::string::npos);
  }
  check_json({"--only", "occupancy,compute,memory", "--require-idle"}, full, 9);
  // Nobody else there: out of memory is the device's, a fail.
  j = check_json({"--only", "occupancy,compute"}, nvml({{"FAKE_CUDA_CTX_OOM", "0"}}), 9);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "compute")["verdict"], "fail");
  EXPECT_FALSE(find_check(j["devices"][0]["checks"], "compute").contains("shared_with"));
}

TEST(CliCheckOccupancy, EachThrottleReasonByItsMeaning) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0x1", "pass"},  {"0x2", "pass"},  {"0x4", "pass"},  {"0x8", "fail"},   {"0x10", "pass"},
      {"0x20", "warn"}, {"0x40", "fail"}, {"0x80", "fail"}, {"0x100", "pass"}, {"0x1000", "warn"}};
  for (const auto& [bits, verdict] : cases) {
    const json j = check_json({"--only", "health"}, nvml({{"FAKE_NVML_CLOCK_EVENTS", bits}}),
                              verdict == "fail" ? 9 : 0);
    EXPECT_EQ(find_check(j["devices"][0]["checks"], "throttle")["verdict"], verdict) << bits;
  }
}

TEST(CliCheckOccupancy, NvmlMissingOrUnreadableIsSkippedWithTheReason) {
  json j = check_json({"--only", "occupancy"}, fake(), 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["verdict"], "skipped");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["reason"],
            "CUDATOOL_NO_NVML is set");
  EXPECT_FALSE(j["devices"][0].contains("occupancy"));
  auto missing = nvml();
  missing.env["CUDATOOL_LIBNVML"] = "/nonexistent/libnvidia-ml.so.1";
  j = check_json({"--only", "occupancy"}, missing, 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["reason"],
            "NVML (/nonexistent/libnvidia-ml.so.1) not found");
  // Not a library: never a hang, never a crash.
  for (const char* path : {"/dev/zero", "/", "/etc/hostname"}) {
    auto odd = nvml();
    odd.env["CUDATOOL_LIBNVML"] = path;
    j = check_json({"--only", "occupancy"}, odd, 0);
    EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["verdict"], "skipped") << path;
  }
  j = check_json({"--only", "occupancy"}, nvml({{"FAKE_NVML_INIT_RESULT", "9"}}), 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "occupancy")["reason"],
            "nvmlInit_v2 failed (nvmlReturn_t 9)");
  // The process list denied: that line skipped, the rest still judged.
  j = check_json({"--only", "occupancy"},
                 nvml({{"FAKE_NVML_PROCESS_RESULT", "4"}, {"FAKE_NVML_USED_MEMORY", "8589934592"}}),
                 0);
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "processes")["reason"],
            "NVML denies the process list (no permission)");
  EXPECT_EQ(find_check(j["devices"][0]["checks"], "used_memory")["verdict"], "warn");
  EXPECT_EQ(j["devices"][0]["occupancy"]["processes"], nullptr);
  // NVML's older memory query: the reservation counted, and said.
  j = check_json({"--only", "occupancy"}, nvml({{"FAKE_NVML_NO_MEMORY_V2", "1"}}), 0);
  EXPECT_EQ(j["devices"][0]["occupancy"]["used_excludes_reserved"], false);
  EXPECT_EQ(j["devices"][0]["occupancy"]["used_memory_bytes"], 536870912);
}

TEST(CliCheckOccupancy, PrometheusCarriesTheOccupancyChecks) {
  const auto r =
      run_cudatool({"check", "--only", "occupancy", "--device", "0", "--format", "prometheus"},
                   nvml({{"FAKE_NVML_PROCESSES", "1/4242/83429425152/C"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("check=\"occupancy\",name=\"processes\",verdict=\"warn\"} 1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cudatool_check_memory_used_by_others_bytes{gpu=\"0\",UUID=\"GPU-"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"} 83429425152\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncudatool_check_other_processes{"), std::string::npos) << r.out;
}

class CliCheckGpu : public GpuTest {};

TEST_F(CliCheckGpu, EveryCheckPassesOrSaysWhyNot) {
  // Bandwidth verdicts are held to a tenth of the theoretical rate here: other GPU tests may
  // run at the same time (tools/gpu-check.sh shows the default 75% on a quiet machine).
  const auto r = run_cudatool({"check", "--json", "--skip", "peer", "--min-fraction", "0.1"});
  const json j = json::parse(r.out);
  for (const auto& d : j["devices"])
    for (const auto& c : d["checks"]) {
      EXPECT_NE(c["verdict"], "fail") << c.dump();
      if (c["verdict"] == "skipped") {
        EXPECT_FALSE(c["reason"].get<std::string>().empty()) << c.dump();
      }
    }
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST_F(CliCheckGpu, OccupancyIsReadFromNvmlAndNeverFailsAHealthyDevice) {
  // Other GPU tests may run at the same time: they are other processes, a warning at most,
  // and what was measured while they ran says so.
  const auto r = run_cudatool({"check", "--json", "--only", "occupancy,compute,hostlink",
                               "--device", "0", "--min-fraction", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  const json& checks = j["devices"][0]["checks"];
  if (!j["devices"][0].contains("occupancy")) GTEST_SKIP() << "no NVML: " << checks[0].dump();
  const json& o = j["devices"][0]["occupancy"];
  EXPECT_TRUE(o["used_memory_bytes"].is_number()) << o.dump();
  EXPECT_TRUE(o["gpu_utilization_percent"].is_number()) << o.dump();
  EXPECT_EQ(o["utilization_readings"], 5);
  EXPECT_TRUE(o["compute_mode"].is_string()) << o.dump();
  for (const char* name : {"processes", "used_memory", "utilization", "compute_mode"}) {
    const json& c = find_check(checks, name);
    EXPECT_TRUE(c["verdict"] == "pass" || c["verdict"] == "warn") << c.dump();
  }
  const bool shared = find_check(checks, "processes")["verdict"] == "warn" ||
                      find_check(checks, "used_memory")["verdict"] == "warn";
  for (const char* name : {"compute", "h2d", "d2h"}) {
    const json& c = find_check(checks, name);
    EXPECT_NE(c["verdict"], "fail") << c.dump();
    if (c.contains("shared_with")) {
      EXPECT_TRUE(shared) << c.dump();
    }
  }
}

TEST_F(CliCheckGpu, FaultInjectionAndImpossibleThresholdFail) {
  if (!cudatool::test_hooks_enabled())
    GTEST_SKIP() << "a build without test hooks (CUDATOOL_TEST_HOOKS=OFF)";
  ProcessOptions options;
  options.env["CUDATOOL_CHECK_INJECT_FAULT"] = "compute";
  auto r = run_cudatool({"check", "--only", "compute", "--device", "0"}, options);
  EXPECT_EQ(r.exit_code, 9) << r.out;
  EXPECT_NE(r.out.find("1 of 16777216 elements"), std::string::npos) << r.out;
  r = run_cudatool({"check", "--only", "hostlink", "--device", "0", "--min-h2d-gbps", "10000"});
  EXPECT_EQ(r.exit_code, 9) << r.out;
  EXPECT_NE(r.out.find("fail    h2d"), std::string::npos) << r.out;
}
