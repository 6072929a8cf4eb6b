// End-to-end tests of `cudatool check` through the real binary: bad input (exit 2), no
// driver (3), no device (4), NVML missing (health skipped, exit 0), failed checks (9), a
// device failing mid-check (the fake driver), and on a real GPU every check.
#include <gtest/gtest.h>

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
  EXPECT_NE(
      run_cudatool({"check", "--only", "compute,gpu-burn"})
          .err.find(
              "unknown check \"gpu-burn\" (checks: identity, health, compute, memory, hostlink, "
              "peer)"),
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
  EXPECT_EQ(j["driver_version"], "13.0");
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
  EXPECT_NE(r.out.find("gpu_name=\"Fake GPU 1\",check=\"identity\",name=\"identity\",peer=\"\","
                       "verdict=\"pass\"} 1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cudatool_check_devices{hostname="), std::string::npos);
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
