// The allocators (lib/src/memory/allocators.cpp): malloc's, cuMemAlloc's and cuMemHostAlloc's,
// each in its own context whatever context the thread has current, failures as the
// library's errors, nothing left allocated. Against the fake driver in a child (its
// FAKE_CUDA_STREAMS build counts the device bytes and host allocations alive); the pools'
// GPU tests (test_memory_pool_gpu.cpp) use them on a real device.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/memory/allocators.hpp"
#include "cudatool/memory/memory_pool.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"

namespace cudatool {
namespace {

using cudatool::testing::current_context;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::FakeChecks;

long long fake_count(const char* what) {
  return cudatool::testing::fake_count(CUDATOOL_FAKE_LIBCUDA_STREAMS, what);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUDATOOL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CUDATOOL_SANITIZED 1
#endif
#endif

TEST(HostAllocator, OutOfMemoryIsAMemoryError) {
#ifdef CUDATOOL_SANITIZED
  GTEST_SKIP() << "the sanitizers' allocators abort on an impossible malloc instead of "
                  "returning null";
#endif
  HostMemoryPool pool{HostAllocator{}};
  // More than any address space: malloc fails at once, whatever the overcommit policy.
  EXPECT_THROW(pool.allocate(std::size_t{1} << 62), MemoryError);
  EXPECT_TRUE(pool.allocate(100));
}

TEST(HostAllocator, ZeroBytesAreNoAllocation) {
  HostAllocator host;
  EXPECT_EQ(host.allocate(0), nullptr);
  void* p = host.allocate(64);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xab, 64);  // usable, and freed below (ASan counts a leak)
  host.deallocate(p, 64);
  host.deallocate(nullptr, 0);
}

TEST(DeviceAllocator, AllocatesInItsContextAndFreesEverything) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA_STREAMS, {{"FAKE_CUDA_MEMORY", "4096"}}, [](FakeChecks& c) {
        auto context = std::make_shared<const Context>(Device(0));
        const Context other(Device(1));  // current now
        DeviceAllocator device(context);
        c.expect(device.allocate(0) == 0, "zero bytes: no allocation");
        const CUdeviceptr a = device.allocate(1000), b = device.allocate(24);
        c.expect(a != 0 && b != 0 && a != b, "two allocations");
        c.expect(fake_count("device_bytes") == 1024, "1024 bytes alive");
        c.expect(current_context() == other.handle(), "the thread's current context is as it was");
        c.expect_throw<MemoryError>([&] { device.allocate(4096); }, "beyond the device's memory");
        device.deallocate(a, 1000);
        device.deallocate(b, 24);
        device.deallocate(0, 0);
        c.expect(fake_count("device_bytes") == 0, "all freed");
        c.expect(device.describe() == "device memory (cuMemAlloc) on device 0", device.describe());
      });
}

TEST(DeviceAllocator, WithoutAContextIsALogicError) {
  EXPECT_THROW(DeviceAllocator(std::shared_ptr<const Context>()), LogicError);
  EXPECT_THROW(PageLockedAllocator(std::shared_ptr<const Context>()), LogicError);
}

TEST(DeviceAllocator, APoolOfItOutOfMemoryFreesWhatItHoldsAndRetries) {
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA_STREAMS, {{"FAKE_CUDA_MEMORY", "8192"}}, [](FakeChecks& c) {
        DeviceMemoryPool pool{DeviceAllocator(Device(0))};
        {
          auto held = pool.allocate(4096);
          c.expect(fake_count("device_bytes") >= 4096, "allocated through the driver");
        }
        // The freed block is held by the pool; a request of another bin does not fit beside it
        // until the pool gives it back to the driver.
        auto big = pool.allocate(6000);
        c.expect(static_cast<bool>(big), "the retry after freeing the held block succeeds");
        c.expect(pool.statistics().oom_retries == 1, "one retry");
      });
}

TEST(PageLockedAllocator, FlagsAreCheckedNamedAndEveryAllocationFreed) {
  EXPECT_EQ(format_host_alloc_flags(0), "none");
  EXPECT_EQ(
      format_host_alloc_flags(PageLockedAllocator::kPortable | PageLockedAllocator::kWriteCombined),
      "portable+writecombined");
  EXPECT_EQ(format_host_alloc_flags(PageLockedAllocator::kDeviceMap | 0x100), "devicemap+unknown");
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    c.expect_throw<LogicError>([] { PageLockedAllocator(Device(0), 0x80); }, "unknown flag 0x80");
    const Context other(Device(0));
    PageLockedAllocator pinned(Device(1), PageLockedAllocator::kPortable);
    c.expect(pinned.allocate(0) == nullptr, "zero bytes: no allocation");
    void* p = pinned.allocate(100);
    c.expect(p != nullptr && fake_count("host_allocations") == 1, "one pinned allocation");
    pinned.deallocate(p, 100);
    pinned.deallocate(nullptr, 0);
    c.expect(fake_count("host_allocations") == 0, "freed");
    c.expect(pinned.describe() ==
                 "page-locked host memory (cuMemHostAlloc, flags portable) for device 1",
             pinned.describe());
  });
}

}  // namespace
}  // namespace cudatool
