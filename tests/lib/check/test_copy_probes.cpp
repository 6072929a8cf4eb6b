// The copy probes (lib/src/check/copy_probes.cpp): a device-to-device copy, the host link
// each way and peer to peer, each timed and then verified. Who shared either end of a peer
// copy is said by device (against the fake driver, in a child); the copies themselves need a
// GPU (CopyProbesGpu, skipped without one): the data arrives intact, and each rate is one a
// link of that kind can carry (above zero, not above the theoretical rate).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "check/probes.hpp"
#include "cudatool/check/check.hpp"
#include "driver/nvml_queries.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

namespace cudatool::check::detail {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

TEST(CopyProbes, PeerSharersAreNamedByDevice) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    DeviceRun from{Device(0)}, to{Device(1)};
    from.info.ordinal = 0;
    to.info.ordinal = 1;
    c.expect(peer_sharers(from, to).empty(), "nobody: \"\"");
    to.sharers = "pid 4242 (python3, 1.0 GiB)";
    c.expect(peer_sharers(from, to) == "device 1: pid 4242 (python3, 1.0 GiB)",
             peer_sharers(from, to));
    from.sharers = "pid 7";
    c.expect(peer_sharers(from, to) == "device 0: pid 7; device 1: pid 4242 (python3, 1.0 GiB)",
             peer_sharers(from, to));
  });
}

class CopyProbesGpu : public cudatool::testing::GpuTest {
 protected:
  static std::unique_ptr<DeviceRun> run_on(const Device& device) {
    auto run = std::make_unique<DeviceRun>(device);
    run->info = DeviceInfo::describe(device);
    if (nvml_available(&run->nvml_why_not)) run->health = nvml_health(run->info.pci_bus_id);
    if (run->health && run->health->found && run->health->pcie_max_generation &&
        run->health->pcie_max_width)
      run->pcie_theoretical =
          pcie_theoretical_gbps(*run->health->pcie_max_generation, *run->health->pcie_max_width);
    return run;
  }
};

void expect_plausible_rate(const CheckResult& r, const std::string& what) {
  ASSERT_TRUE(r.value.has_value()) << what << ": " << r.reason;
  EXPECT_GT(*r.value, 0) << what;
  EXPECT_EQ(r.reason.find("elements wrong"), std::string::npos) << what << ": " << r.reason;
}

TEST_F(CopyProbesGpu, TheDeviceCopyArrivesIntactAtARateBelowTheMemorysTheory) {
  auto run = run_on(device());
  run_memory(*run, Options{});
  ASSERT_EQ(run->results.size(), 1u);
  const CheckResult& r = run->results[0];
  EXPECT_EQ(r.name, "d2d");
  expect_plausible_rate(r, "d2d");
  EXPECT_NE(r.verdict, Verdict::fail) << r.reason;
  const double theory =
      memory_theoretical_gbps(run->info.global_memory_bus_width, run->info.memory_clock_rate_khz);
  if (theory > 0) {
    EXPECT_LE(r.value.value_or(0), theory * kBytesPerGB * 1.05) << r.reason;
  }
}

TEST_F(CopyProbesGpu, TheHostLinkEachWayArrivesIntactWithinThePcieTheory) {
  auto run = run_on(device());
  ComputeBuffers buffers;
  run_hostlink(*run, Options{}, buffers);
  ASSERT_EQ(run->results.size(), 2u);
  EXPECT_EQ(run->results[0].name, "h2d");
  EXPECT_EQ(run->results[1].name, "d2h");
  for (const CheckResult& r : run->results) {
    expect_plausible_rate(r, r.name);
    if (run->pcie_theoretical) {
      EXPECT_LE(r.value.value_or(0), *run->pcie_theoretical * kBytesPerGB * 1.05) << r.reason;
    }
  }
  EXPECT_TRUE(buffers.host && buffers.device) << "made where the compute probe had not";
}

TEST_F(CopyProbesGpu, APeerCopyArrivesIntactOnTheOtherDevice) {
  CUDATOOL_REQUIRE_DEVICES(2);
  auto from = run_on(devices()[0]);
  auto to = run_on(devices()[1]);
  if (!from->device.can_access_peer(to->device)) GTEST_SKIP() << "no peer access 0 -> 1";
  const CheckResult r = run_peer(*from, *to, Options{});
  EXPECT_EQ(r.peer, to->info.ordinal);
  expect_plausible_rate(r, "peer");
  EXPECT_NE(r.verdict, Verdict::fail) << r.reason;
}

}  // namespace
}  // namespace cudatool::check::detail
