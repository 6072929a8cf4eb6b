// The health probe (lib/src/check/health_probe.cpp): NVML's readings judged, the PCIe link
// read again under load where it idles below its maximum (and said where it cannot be), and
// the link's maximum from sysfs where NVML cannot say. Against the fake driver and the fake
// NVML in a child (fake_driver_child.hpp); the thresholds are test_health.cpp's.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
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

std::unique_ptr<DeviceRun> started_run(int ordinal) {
  auto run = std::make_unique<DeviceRun>(Device(ordinal));
  run->info = DeviceInfo::describe(run->device);
  if (nvml_available(&run->nvml_why_not)) run->health = nvml_health(run->info.pci_bus_id);
  return run;
}

TEST(HealthProbe, WithoutNvmlOneSkippedLineWithTheReason) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"CUDATOOL_LIBNVML", "/nonexistent/libnvidia-ml.so.1"}},
      [](FakeChecks& c) {
        auto run = started_run(0);
        run_health(*run, Options{});
        c.expect(run->results.size() == 1 && run->results[0].name == "health" &&
                     run->results[0].verdict == Verdict::skipped &&
                     run->results[0].reason == run->nvml_why_not && !run->nvml_why_not.empty(),
                 result_names(run->results));
      });
}

TEST(HealthProbe, AHealthyGpuAtItsLinksMaximumPassesWithoutLoadingIt) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({}), [](FakeChecks& c) {
    auto run = started_run(0);
    run_health(*run, Options{});
    const CheckResult* link = result_named(run->results, "pcie_link");
    c.expect(link && link->verdict == Verdict::pass,
             "Gen5 x16 of Gen5 x16: " + result_names(run->results));
    c.expect(run->busy_link && run->busy_link->generation == 5 && run->busy_link->width == 16,
             "the link as read");
    c.expect(!run->context, "no context made: an idle link at its maximum needs no traffic");
    for (const auto& r : run->results)
      c.expect(r.kind == Kind::health && r.verdict != Verdict::fail, "healthy: " + r.name);
  });
}

TEST(HealthProbe, ALinkIdlingBelowItsMaximumThatCannotBeLoadedIsSaidNotJudged) {
  // The device is blocked (another process holds it): the link is not loaded, and says why.
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_PCIE_CURRENT", "1,16"}}),
                        [](FakeChecks& c) {
                          auto run = started_run(0);
                          run->blocked = "held by pid 4242";
                          run_health(*run, Options{});
                          const CheckResult* link = result_named(run->results, "pcie_link");
                          c.expect(link && link->verdict == Verdict::skipped,
                                   "not judged: " + result_names(run->results));
                          c.expect(link && link->reason ==
                                               "the link idles at Gen1 x16, below its maximum, "
                                               "and could not be read under load: held by pid 4242",
                                   link ? link->reason : "no pcie_link");
                          c.expect(!run->context, "no context on a blocked device");
                        });
  // The plain fake driver makes a context but no stream: the load cannot run either.
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, fake_nvml_env({{"FAKE_NVML_PCIE_CURRENT", "3,8"}}), [](FakeChecks& c) {
        auto run = started_run(0);
        run_health(*run, Options{});
        const CheckResult* link = result_named(run->results, "pcie_link");
        c.expect(link && link->verdict == Verdict::skipped &&
                     link->reason.starts_with("the link idles at Gen3 x8, below its maximum, and "
                                              "could not be read under load: "),
                 link ? link->reason : "no pcie_link: " + result_names(run->results));
        c.expect(!run->busy_link, "no reading under load");
      });
}

TEST(HealthProbe, TheSysfsMaximumOfALinkByItsSpeed) {
  EXPECT_FALSE(sysfs_max_link("0000:zz:99.9").has_value());
  EXPECT_FALSE(sysfs_max_link("../../../etc").has_value());
  // A device of this machine that has a link: its generation from PCIe's transfer rates.
  namespace fs = std::filesystem;
  std::error_code ec;
  int compared = 0;
  for (const auto& entry : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::ifstream speed_file(entry.path() / "max_link_speed"),
        width_file(entry.path() / "max_link_width");
    double gts = 0;
    unsigned width = 0;
    if (!(speed_file >> gts) || !(width_file >> width)) continue;
    const std::map<double, unsigned> generation = {{2.5, 1},  {5.0, 2},  {8.0, 3},
                                                   {16.0, 4}, {32.0, 5}, {64.0, 6}};
    const auto known = generation.find(gts);
    if (known == generation.end()) continue;
    std::string id = entry.path().filename().string();
    for (auto& ch : id) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const auto link = sysfs_max_link(id);  // the upper-case form NVML writes, found too
    ASSERT_TRUE(link.has_value()) << id;
    EXPECT_EQ(link->generation, known->second) << id << " at " << gts << " GT/s";
    EXPECT_EQ(link->width, width) << id;
    if (++compared == 8) break;
  }
  if (compared == 0) GTEST_SKIP() << "no PCI device with a link in this machine's sysfs";
}

}  // namespace
}  // namespace cudatool::check::detail
