// What every probe of `cudatool check` shares (lib/src/check/device_run.cpp): the rate of a
// copy, the host's verification of the pattern, the results of a check that failed or was
// skipped, out-of-memory while others hold the device, the timing of stream work between
// events (against the fake driver's streams, in a child), the embedded kernels' list, and on
// a GPU (DeviceRunGpu, skipped without one) the fill and verify kernels themselves.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/device_run.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/check/check.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"
#include "memory/buffers.hpp"

namespace cudatool::check::detail {
namespace {

using cudatool::detail::DeviceBuffer;
using cudatool::detail::PinnedBuffer;
using cudatool::detail::Stream;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

TEST(DeviceRun, RatesAreBytesPerSecondInGigabytes) {
  EXPECT_DOUBLE_EQ(gbps(1000000000, 1000), 1.0);
  EXPECT_DOUBLE_EQ(gbps(256ull << 20, 10), 26.8435456);
  EXPECT_EQ(gbps(1 << 20, 0), 0) << "no time measured: no rate, never infinity";
  EXPECT_EQ(gbps(1 << 20, -1), 0);
}

TEST(DeviceRun, TheHostFindsEveryWrongWordAndNamesTheFirst) {
  std::vector<std::uint32_t> data(4096);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = pattern(i, kSeedMemory);
  std::string first_bad = "untouched";
  EXPECT_EQ(verify_on_host(data.data(), data.size(), kSeedMemory, &first_bad), 0u);
  EXPECT_EQ(first_bad, "untouched");
  EXPECT_EQ(verify_on_host(data.data(), data.size(), kSeedHost, nullptr), data.size())
      << "another seed is another pattern, word for word";
  const std::uint32_t expected = data[1000];
  data[1000] ^= 1u << 7;
  data[3000] = 0;
  char text[96];
  std::snprintf(text, sizeof text, "element 1000 is 0x%08x, expected 0x%08x", data[1000], expected);
  EXPECT_EQ(verify_on_host(data.data(), data.size(), kSeedMemory, &first_bad), 2u);
  EXPECT_EQ(first_bad, text);
  EXPECT_EQ(verify_on_host(data.data(), 1000, kSeedMemory, nullptr), 0u) << "only n words";
}

TEST(DeviceRun, FailedAndSkippedResultsCarryNoReading) {
  const CheckResult f = failed(Kind::memory, "d2d", "it broke");
  EXPECT_EQ(f.kind, Kind::memory);
  EXPECT_EQ(f.name, "d2d");
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_EQ(f.reason, "it broke");
  EXPECT_FALSE(f.value.has_value());
  EXPECT_EQ(f.quantity, Quantity::none);
  const CheckResult s = skipped(Kind::peer, "peer", "one device");
  EXPECT_EQ(s.verdict, Verdict::skipped);
  EXPECT_EQ(s.reason, "one device");
  EXPECT_FALSE(s.value.has_value());
}

TEST(DeviceRun, OutOfMemoryWhileOthersHoldTheDeviceWarnsUnlessIdleIsRequired) {
  EXPECT_TRUE(out_of_memory(MemoryError("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "")));
  EXPECT_FALSE(out_of_memory(RuntimeError("cuMemAlloc", 999, "CUDA_ERROR_UNKNOWN", "")));
  EXPECT_FALSE(out_of_memory(MemoryError("malloc(8) failed: out of host memory")))
      << "the host's memory is not the device's";
  EXPECT_FALSE(out_of_memory(std::runtime_error("out of memory")));
  const CheckResult warn = out_of_memory_result(Kind::memory, "d2d", "cuMemAlloc failed",
                                                "pid 4242 (python3, 70.0 GiB)", false);
  EXPECT_EQ(warn.verdict, Verdict::warn);
  EXPECT_EQ(warn.shared_with, "pid 4242 (python3, 70.0 GiB)");
  EXPECT_EQ(warn.reason,
            "cuMemAlloc failed; other processes hold the memory: pid 4242 (python3, 70.0 GiB)");
  EXPECT_EQ(out_of_memory_result(Kind::memory, "d2d", "x", "y", true).verdict, Verdict::fail);
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA, {}, [](FakeChecks& c) {
    DeviceRun run{Device(0)};
    const MemoryError oom("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "");
    c.expect(!out_of_memory_while_shared(run, oom), "nobody else there: the device's fault");
    run.sharers = "pid 4242";
    c.expect(out_of_memory_while_shared(run, oom), "others there: theirs");
    c.expect(!out_of_memory_while_shared(run, std::runtime_error("x")), "not out of memory");
  });
}

TEST(DeviceRun, EachOperationIsTimedBetweenItsOwnEventsAfterTheWarmups) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    const Context context(Device(0));
    const Stream stream(context.handle());
    int ops = 0, between = 0, ops_before_between = -1;
    const auto ms = time_ops(
        stream, 2, 3, [&] { ++ops; },
        [&] {
          ++between;
          ops_before_between = ops;
        });
    c.expect(ops == 5, "two warm-ups and three timed: " + std::to_string(ops));
    c.expect(between == 1 && ops_before_between == 5, "`between` once, after every operation");
    c.expect(ms.size() == 3, "one time per timed operation");
    for (double m : ms) c.expect(m == 1.5, "the fake's interval: " + std::to_string(m));
    c.expect(cudatool::testing::fake_count(CUDATOOL_FAKE_LIBCUDA_STREAMS, "events") == 0,
             "every event destroyed");
  });
}

TEST(DeviceRun, TheEmbeddedKernelsHaveMachineCodeAndThePtxOfTheOldest) {
  const auto sass = sass_list();
  ASSERT_FALSE(sass.empty());
  for (std::size_t i = 1; i < sass.size(); ++i) EXPECT_LT(sass[i - 1], sass[i]);
  EXPECT_GE(sass.front(), 75);
  EXPECT_EQ(embedded_ptx(), sass.front()) << "PTX of the oldest: any newer GPU can JIT it";
  std::string contents = "SASS";
  for (int s : sass) contents += " sm_" + std::to_string(s);
  EXPECT_EQ(embedded_kernel_contents(),
            contents + " + PTX compute_" + std::to_string(sass.front()));
}

class DeviceRunGpu : public cudatool::testing::GpuTest {};

TEST_F(DeviceRunGpu, TheFillKernelWritesThePatternOnEverySmAndVerifyCountsItsFaults) {
  for (const Device& device : devices()) {
    DeviceRun run(device);
    run.info = DeviceInfo::describe(device);
    run.ensure_module();
    EXPECT_EQ(run.grid(), static_cast<unsigned>(4 * run.info.multiprocessor_count));
    const std::uint64_t n = (16u << 20) / 4;
    DeviceBuffer data(run.ctx(), n * 4), sm_seen(run.ctx(), kSmSlots * 4);
    run.zero(sm_seen.get(), kSmSlots * 4);
    run.fill(data.get(), n, kSeedCompute, sm_seen.get(), ~0ull);
    EXPECT_EQ(run.verify_on_device(data.get(), n, kSeedCompute), 0u) << device.name();
    EXPECT_EQ(run.verify_on_device(data.get(), n, kSeedMemory), n) << "another seed";
    std::vector<std::uint32_t> seen(kSmSlots);
    CUDATOOL_CU(cuMemcpyDtoH, seen.data(), sm_seen.get(), kSmSlots * 4);
    int sms = 0;
    for (auto s : seen) sms += s != 0;
    EXPECT_EQ(sms, run.info.multiprocessor_count) << "every SM ran a block";
    // One fault, found by both verifications at its index.
    run.fill(data.get(), n, kSeedCompute, 0, 777);
    EXPECT_EQ(run.verify_on_device(data.get(), n, kSeedCompute), 1u);
    PinnedBuffer host(run.ctx(), n * 4);
    CUDATOOL_CU(cuMemcpyDtoH, host.get(), data.get(), n * 4);
    std::string first_bad;
    EXPECT_EQ(verify_on_host(host.words(), n, kSeedCompute, &first_bad), 1u);
    EXPECT_TRUE(first_bad.starts_with("element 777 is ")) << first_bad;
  }
}

}  // namespace
}  // namespace cudatool::check::detail
