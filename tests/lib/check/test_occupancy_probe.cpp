// The occupancy probe (lib/src/check/occupancy_probe.cpp): who else uses a device, read from
// NVML before this process's context (its processes, memory, utilization sampled over a
// window, compute mode), skipped with the reason where NVML cannot say or the device is a MIG
// instance, and a refused context turned into the occupancy verdict in place. Against the
// fake driver and the fake NVML in a child (fake_driver_child.hpp); the verdicts themselves
// are test_occupancy.cpp's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>

#include "check/probes.hpp"
#include "check_samples.hpp"
#include "cudatool/check/check.hpp"
#include "driver/nvml_queries.hpp"
#include "fake_driver_child.hpp"

namespace cudatool::check::detail {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::fake_nvml_env;
using cudatool::testing::FakeChecks;
using cudatool::testing::result_named;
using cudatool::testing::result_names;

// Device `ordinal`'s run as the engine starts it, with NVML's health read where NVML is.
std::unique_ptr<DeviceRun> started_run(int ordinal) {
  auto run = std::make_unique<DeviceRun>(Device(ordinal));
  run->info = DeviceInfo::describe(run->device);
  if (nvml_available(&run->nvml_why_not)) run->health = nvml_health(run->info.pci_bus_id);
  return run;
}

Options occupancy_options() {
  Options options;
  options.kinds = {Kind::occupancy};
  return options;
}

TEST(OccupancyProbe, AnotherProcessIsReadWithItsMemoryAndTheUtilizationOverAWindow) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA,
      fake_nvml_env({{"FAKE_NVML_PROCESSES",
                      "1/4242/83429425152/C," + std::to_string(::getpid()) + "/1000/C"},
                     {"FAKE_NVML_UTILIZATION", "30,10"}}),
      [](FakeChecks& c) {
        auto run = started_run(0);
        c.expect(run->health && run->health->found, "NVML knows the device");
        run->results.push_back(failed(Kind::identity, "earlier", "a result before"));
        run_occupancy(*run, occupancy_options());
        c.expect(run->occupancy_at == 1, "the occupancy results start after the earlier ones");
        c.expect(run->occupancy.has_value(), "an occupancy read");
        if (!run->occupancy) return;
        const Occupancy& o = *run->occupancy;
        c.expect(o.processes && o.processes->size() == 1 && o.processes->front().pid == 4242,
                 "the other process, not this one");
        c.expect(o.processes && !o.processes->empty() &&
                     o.processes->front().used_memory == 83429425152ull,
                 "its memory");
        c.expect(o.utilization_readings == 5, "five readings");
        c.expect(o.window_s >= 0.09, "over a tenth of a second: " + std::to_string(o.window_s));
        c.expect(o.gpu_utilization == 30u && o.memory_utilization == 10u, "the highest readings");
        c.expect(run->sharers.find("4242") != std::string::npos, "shared: " + run->sharers);
        c.expect(run->blocked.empty(), "a default compute mode blocks nothing");
        const CheckResult* processes = result_named(run->results, "processes");
        c.expect(
            processes && processes->kind == Kind::occupancy && processes->verdict == Verdict::warn,
            "another process warns: " + result_names(run->results));
      });
}

TEST(OccupancyProbe, AProhibitedDeviceBlocksItsContext) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_COMPUTE_MODE", "2"}}), [](FakeChecks& c) {
        auto run = started_run(0);
        run_occupancy(*run, occupancy_options());
        c.expect(run->blocked.find("prohibited") != std::string::npos, "blocked: " + run->blocked);
      });
}

TEST(OccupancyProbe, WithoutNvmlOrOnAMigInstanceItIsSkippedWithTheReason) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"CUDATOOL_LIBNVML", "/nonexistent/libnvidia-ml.so.1"}},
      [](FakeChecks& c) {
        auto run = started_run(0);
        c.expect(!run->health && !run->nvml_why_not.empty(), "no NVML, and why");
        run_occupancy(*run, occupancy_options());
        c.expect(run->results.size() == 1 && run->results[0].verdict == Verdict::skipped &&
                     run->results[0].reason == run->nvml_why_not,
                 "one skipped line with NVML's reason: " + result_names(run->results));
        c.expect(!run->occupancy, "nothing read");
      });
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({}), [](FakeChecks& c) {
    auto run = started_run(0);
    run->mig = true;
    run_occupancy(*run, occupancy_options());
    c.expect(run->results.size() == 1 && run->results[0].verdict == Verdict::skipped &&
                 run->results[0].reason.find("MIG instance") != std::string::npos,
             "a MIG instance: " + result_names(run->results));
  });
  // A GPU NVML does not list (the fake NVML lists one GPU; CUDA two).
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_COUNT", "1"}}), [](FakeChecks& c) {
        auto run = started_run(1);
        run_occupancy(*run, occupancy_options());
        c.expect(run->results.size() == 1 && run->results[0].verdict == Verdict::skipped &&
                     run->results[0].reason.find("PCI bus id") != std::string::npos,
                 "unknown to NVML: " + result_names(run->results));
      });
}

TEST(OccupancyProbe, ARefusedContextReplacesTheOccupancyResultsInPlace) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({}), [](FakeChecks& c) {
    const Options options = occupancy_options();
    auto run = started_run(0);
    run->results.push_back(failed(Kind::identity, "earlier", "a result before"));
    run_occupancy(*run, options);
    const std::size_t count = run->results.size();
    run->results.push_back(failed(Kind::compute, "later", "a result after"));
    c.expect(run->blocked.empty(), "not blocked before the refusal");
    context_refused(*run, options);
    c.expect(run->occupancy && run->occupancy->context_refused, "the refusal is recorded");
    c.expect(run->blocked.find("refused a context") != std::string::npos, run->blocked);
    c.expect(run->results.size() == count + 1,
             "as many results as before: " + result_names(run->results));
    c.expect(run->results.front().name == "earlier" && run->results.back().name == "later",
             "the other checks' results stay where they were");
    const CheckResult* mode = result_named(run->results, "compute_mode");
    c.expect(mode && mode->verdict != Verdict::pass,
             "the refusal is the compute mode's finding: " + result_names(run->results));
  });
  // Without NVML: its one skipped line stays, and the refusal's verdict is added.
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"CUDATOOL_LIBNVML", "/nonexistent/libnvidia-ml.so.1"}},
      [](FakeChecks& c) {
        const Options options = occupancy_options();
        auto run = started_run(0);
        run_occupancy(*run, options);
        context_refused(*run, options);
        c.expect(run->results.size() == 2 && run->results[0].verdict == Verdict::skipped &&
                     run->results[1].name == "compute_mode",
                 "the skipped line and the compute mode: " + result_names(run->results));
        c.expect(!run->blocked.empty(), "blocked");
      });
}

}  // namespace
}  // namespace cudatool::check::detail
