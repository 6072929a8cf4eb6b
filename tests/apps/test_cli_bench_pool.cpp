// End-to-end tests of `cudatool bench-pool` through the real binary: the host backend for
// real, bad input, no driver, the fake driver (tests/fake_driver) for the device
// backend's exit codes, and (GpuTest) the device and pinned backends on a real GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;

namespace {

std::vector<std::string> bench(std::vector<std::string> extra) {
  std::vector<std::string> args = {"bench-pool", "--iterations", "3000", "--warmup", "100"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST(CliBenchPool, HostBackendJson) {
  const auto r = run_cudatool(
      bench({"--json", "--workload", "log-uniform", "--min-size", "256", "--max-size", "1M",
             "--order", "random", "--live", "64", "--threads", "2", "--seed", "42"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
  const json j = json::parse(r.out);
  EXPECT_EQ(j["config"]["backend"], "host");
  EXPECT_EQ(j["config"]["workload"], "log-uniform");
  EXPECT_EQ(j["config"]["threads"], 2);
  EXPECT_EQ(j["config"]["seed"], 42);
  EXPECT_TRUE(j["device"].is_null());
  EXPECT_GT(j["host"]["cpus"].get<int>(), 0);
  EXPECT_LT(j["rounding"]["max_overhead_pct"].get<double>(), 6.25);
  EXPECT_EQ(j["rounding"]["bound_pct"].get<double>(), 6.25);
  ASSERT_EQ(j["allocators"].size(), 2u);
  const json& pool = j["allocators"][0];
  const json& raw = j["allocators"][1];
  EXPECT_EQ(pool["label"], "pool");
  EXPECT_EQ(raw["label"], "malloc");
  for (const json* a : {&pool, &raw}) {
    EXPECT_EQ((*a)["pairs"], 6000);
    EXPECT_GT((*a)["median_ns"].get<double>(), 0);
    EXPECT_GE((*a)["p99_ns"].get<double>(), (*a)["median_ns"].get<double>());
    EXPECT_GT((*a)["pairs_per_second"].get<double>(), 0);
  }
  EXPECT_EQ(raw["speedup_vs_raw"].get<double>(), 1.0);
  EXPECT_TRUE(raw["statistics"].is_null());
  EXPECT_TRUE(raw["overhead_pct"].is_null());
  EXPECT_EQ(pool["statistics"]["active_blocks"], 0);
  EXPECT_EQ(pool["statistics"]["active_bytes"], 0);
  EXPECT_EQ(pool["statistics"]["managed_bytes"], pool["statistics"]["held_bytes"]);
  EXPECT_EQ(pool["peak_held_bytes"], pool["statistics"]["peak_managed_bytes"]);

  // The same seed gives the same requests: the peak of live requested bytes repeats.
  const auto again = run_cudatool(
      bench({"--json", "--workload", "log-uniform", "--min-size", "256", "--max-size", "1M",
             "--order", "random", "--live", "64", "--threads", "2", "--seed", "42"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json k = json::parse(again.out);
  EXPECT_EQ(k["allocators"][0]["peak_requested_bytes"], pool["peak_requested_bytes"]);
  EXPECT_EQ(k["rounding"], j["rounding"]);
}

TEST(CliBenchPool, HostBackendTable) {
  const auto r = run_cudatool(bench({"--size", "1000"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* text : {"host backend", "fixed 1000 B", "median", "p99", "speedup", "peak held",
                           "pool ", "malloc ", "pool after the run: held 1 block"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  // 1000 B rounds up to 1023 B: 2.3% overhead.
  EXPECT_NE(r.out.find("2.3%"), std::string::npos) << r.out;
}

TEST(CliBenchPool, DurationAndAllocatorSubset) {
  const auto r = run_cudatool(
      {"bench-pool", "--duration", "0.2", "--allocators", "pool", "--json", "--threads", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["allocators"].size(), 1u);
  EXPECT_GE(j["allocators"][0]["seconds"].get<double>(), 0.2);
  EXPECT_TRUE(j["allocators"][0]["speedup_vs_raw"].is_null());  // no raw to compare with
}

TEST(CliBenchPool, BadInputIsOneLineWithExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--threads", "0"}, "--threads \"0\": expected a whole number 1..1024"},
      {{"--threads", "-3"}, "--threads"},
      {{"--backend", "gpu"}, "unknown backend \"gpu\""},
      {{"--workload", "normal"}, "unknown workload \"normal\""},
      {{"--order", "fifo"}, "unknown order \"fifo\""},
      {{"--size=-5"}, "negative"},
      {{"--size", "0"}, "at least 1 byte"},
      {{"--size", "200T"}, "absurd"},
      {{"--size", "12 apples"}, "--size"},
      {{"--workload", "uniform", "--min-size", "2M", "--max-size", "1M"}, "larger than --max-size"},
      {{"--live", "0"}, "--live"},
      {{"--iterations", "0"}, "--iterations"},
      {{"--duration", "-1"}, "--duration"},
      {{"--leading-bits", "13"}, "--leading-bits"},
      {{"--allocators", "pool,stream"}, "not offered by the host backend"},
      {{"--allocators", "cub"}, "unknown allocator \"cub\""},
      // An empty entry, as every list flag refuses one (it was taken before).
      {{"--allocators", "pool,"}, "--allocators \"pool,\": an empty entry in the list"},
      {{"--allocators", ",raw"}, "--allocators \",raw\": an empty entry in the list"},
      {{"--pinned-flags", "mapped"}, "unknown flag \"mapped\""},
  };
  for (const auto& [extra, expected] : cases) {
    const auto r = run_cudatool(bench(extra));
    EXPECT_EQ(r.exit_code, 2) << extra.front() << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("cudatool: ")) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << expected << " in: " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliBenchPool, DeviceBackendWithoutDriverHintsAtHost) {
  const ProcessOptions options = without_driver();
  for (const char* backend : {"device", "pinned"}) {
    const auto r = run_cudatool(bench({"--backend", backend}), options);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("CUDA driver not found"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("use --backend host"), std::string::npos) << r.err;
  }
  // The host backend needs no driver.
  EXPECT_EQ(run_cudatool(bench({"--backend", "host"}), options).exit_code, 0);
  // --json adds the error object on stdout.
  const auto j = run_cudatool(bench({"--backend", "device", "--json"}), options);
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(json::parse(j.out)["error"]["status"], "no_driver");
}

TEST(CliBenchPool, DeviceBackendWithoutDeviceHintsAtHost) {
  const auto r = run_cudatool(bench({"--backend", "device"}),
                              with_fake_driver({{"FAKE_CUDA_INIT_RESULT", "100"}}));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("use --backend host"), std::string::npos) << r.err;
}

// The fake driver's cuMemAlloc is malloc counted against FAKE_CUDA_MEMORY: enough to run
// the pool's device path and its out-of-memory handling, not to time anything.
TEST(CliBenchPool, FakeDeviceRunsAndRunsOutOfMemory) {
  auto fake = with_fake_driver({{"FAKE_CUDA_MEMORY", "16777216"}});  // 16 MiB
  auto r = run_cudatool(
      bench({"--backend", "device", "--allocators", "pool,raw", "--threads", "2", "--json"}), fake);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["device"]["ordinal"], 0);
  EXPECT_EQ(j["allocators"][1]["label"], "cuMemAlloc");
  EXPECT_EQ(j["allocators"][0]["statistics"]["active_blocks"], 0);

  // A request larger than the device: exit 7 before anything runs.
  r = run_cudatool(bench({"--backend", "device", "--size", "32M"}), fake);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("larger than device 0's memory"), std::string::npos) << r.err;

  // Live sets that do not fit: the pool frees what it holds, retries, and reports.
  r = run_cudatool(bench({"--backend", "device", "--allocators", "pool", "--size", "1M", "--order",
                          "random", "--live", "40", "--json"}),
                   fake);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("from the pool of device memory (cuMemAlloc) on device 0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(r.out)["error"]["status"], "out_of_memory");
}

// On a real GPU: every backend runs and the pool beats the raw allocators.
class CliBenchPoolGpu : public GpuTest {};

TEST_F(CliBenchPoolGpu, DeviceAndPinnedBackends) {
  for (const char* backend : {"device", "pinned"}) {
    const auto r =
        run_cudatool({"bench-pool", "--backend", backend, "--iterations", "2000", "--warmup", "100",
                      "--json", "--device", std::to_string(device().ordinal())});
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["device"]["ordinal"], device().ordinal());
    const json& pool = j["allocators"][0];
    EXPECT_EQ(pool["label"], "pool");
    EXPECT_GT(pool["speedup_vs_raw"].get<double>(), 10.0) << backend;
    EXPECT_EQ(pool["statistics"]["active_blocks"], 0);
  }
}
