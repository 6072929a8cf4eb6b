// The compute probe (lib/src/check/compute_probe.cpp): the embedded fill kernel on every SM,
// verified word by word on the host, the result naming the form the driver loaded. It runs
// kernels, so it needs a GPU (ComputeProbeGpu, skipped without one): an honest device
// passes with every SM seen, and the injected fault (one element flipped) fails naming it.
// Without a context it cannot start (the fake driver: no streams), which the engine fails.
#include <gtest/gtest.h>

#include <string>

#include "check/probes.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/check/check.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"

namespace cudatool::check::detail {
namespace {

using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

TEST(ComputeProbe, ADriverWithoutStreamsStopsItBeforeAnyResult) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    DeviceRun run{Device(0)};
    run.info = DeviceInfo::describe(run.device);
    ComputeBuffers buffers;
    c.expect_throw<Error>([&] { run_compute(run, Options{}, buffers); }, "no stream, no kernel");
    c.expect(run.results.empty(), "no result of its own: the engine fails the check");
    c.expect(!buffers.host && !buffers.device, "no buffer left for the host link");
  });
}

class ComputeProbeGpu : public cudatool::testing::GpuTest {};

TEST_F(ComputeProbeGpu, EverySmWritesThePatternAndTheHostFindsNoFault) {
  for (const Device& device : devices()) {
    DeviceRun run(device);
    run.info = DeviceInfo::describe(device);
    ComputeBuffers buffers;
    run_compute(run, Options{}, buffers);
    ASSERT_EQ(run.results.size(), 1u);
    const CheckResult& r = run.results[0];
    EXPECT_EQ(r.kind, Kind::compute);
    EXPECT_EQ(r.verdict, Verdict::pass) << device.name() << ": " << r.reason;
    const std::string sms = std::to_string(run.info.multiprocessor_count);
    EXPECT_NE(r.reason.find("blocks on " + sms + " of " + sms + " SMs"), std::string::npos)
        << "every SM ran a block: " << r.reason;
    EXPECT_NE(r.reason.find("binary version "), std::string::npos) << r.reason;
    // The buffers are left for the host link, holding the verified pattern.
    ASSERT_TRUE(buffers.host && buffers.device);
    EXPECT_EQ(buffers.host->bytes(), kComputeBytes);
    EXPECT_EQ(verify_on_host(buffers.host->words(), kComputeBytes / 4, kSeedCompute, nullptr), 0u);
  }
}

TEST_F(ComputeProbeGpu, TheInjectedFaultFailsNamingTheElement) {
  DeviceRun run(device());
  run.info = DeviceInfo::describe(device());
  Options options;
  options.inject_compute_fault = true;
  ComputeBuffers buffers;
  run_compute(run, options, buffers);
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results[0].verdict, Verdict::fail) << run.results[0].reason;
  const std::string element = "element " + std::to_string(kComputeBytes / 4 / 2 + 12345) + " is ";
  EXPECT_NE(run.results[0].reason.find(element), std::string::npos) << run.results[0].reason;
}

}  // namespace
}  // namespace cudatool::check::detail
