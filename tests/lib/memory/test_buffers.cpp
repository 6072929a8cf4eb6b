// The library's one device buffer and page-locked host buffer (lib/src/memory/buffers.hpp):
// move-only, freed once, allocated in their own context whatever context the thread has
// current, and failures as the library's errors. Against the fake driver (run in a child,
// fake_driver_child.hpp) and, where there is one, a real GPU (BuffersGpu, skipped without).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "driver/driver_api.hpp"
#include "fake_driver_child.hpp"
#include "gpu_test.hpp"
#include "memory/buffers.hpp"

namespace cudatool::detail {
namespace {

using cudatool::testing::current_context;
using cudatool::testing::expect_in_fake_driver;
using cudatool::testing::fake_context;
using cudatool::testing::FakeChecks;

static_assert(!std::is_copy_constructible_v<DeviceBuffer> &&
              !std::is_copy_assignable_v<DeviceBuffer>);
static_assert(std::is_nothrow_move_constructible_v<DeviceBuffer> &&
              std::is_nothrow_move_assignable_v<DeviceBuffer>);
static_assert(!std::is_copy_constructible_v<PinnedBuffer> &&
              !std::is_copy_assignable_v<PinnedBuffer>);
static_assert(std::is_nothrow_move_constructible_v<PinnedBuffer> &&
              std::is_nothrow_move_assignable_v<PinnedBuffer>);

// What the fake driver counts, from the library the child loaded.
long long fake_count(const char* what) {
  return cudatool::testing::fake_count(CUDATOOL_FAKE_LIBCUDA_STREAMS, what);
}

TEST(DeviceBuffer, MovesItsMemoryAndFreesItOnce) {
  // 1 MiB of fake device memory.
  expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA_STREAMS, {{"FAKE_CUDA_MEMORY", "1048576"}}, [](FakeChecks& c) {
        const CUcontext mine = fake_context(0), other = fake_context(1);
        CUDATOOL_CU(cuCtxSetCurrent, other);
        {
          DeviceBuffer a(mine, 4096);
          const CUdeviceptr pointer = a.get();
          c.expect(pointer != 0 && a.bytes() == 4096, "allocated");
          c.expect(fake_count("device_bytes") == 4096, "4096 bytes in use");
          c.expect(current_context() == other, "the current context is as it was");

          DeviceBuffer b(std::move(a));
          c.expect(a.get() == 0 && a.bytes() == 0, "a moved-from buffer holds nothing");
          c.expect(b.get() == pointer && b.bytes() == 4096, "the move carries the memory");
          c.expect(fake_count("device_bytes") == 4096, "a move allocates nothing");

          DeviceBuffer d(mine, 1024);
          c.expect(fake_count("device_bytes") == 5120, "two buffers");
          d = std::move(b);
          c.expect(fake_count("device_bytes") == 4096,
                   "move assignment frees the memory it replaces");
          c.expect(d.get() == pointer && d.bytes() == 4096 && b.get() == 0,
                   "move assignment carries the memory");
          DeviceBuffer& same = d;
          d = std::move(same);
          c.expect(d.get() == pointer && fake_count("device_bytes") == 4096,
                   "self-assignment keeps it");
        }
        c.expect(fake_count("device_bytes") == 0, "freed once its owner is gone (and only once)");
        c.expect_throw<MemoryError>([&] { DeviceBuffer too_big(mine, 2 << 20); },
                                    "more than the device has");
        c.expect(fake_count("device_bytes") == 0, "nothing left of the failed allocation");
        c.expect(current_context() == other, "the current context is as it was after it");
      });
}

TEST(PinnedBuffer, MovesItsMemoryAndFreesItOnce) {
  expect_in_fake_driver(CUDATOOL_FAKE_LIBCUDA_STREAMS, {}, [](FakeChecks& c) {
    const CUcontext mine = fake_context(0), other = fake_context(1);
    CUDATOOL_CU(cuCtxSetCurrent, other);
    {
      PinnedBuffer a(mine, 64);
      c.expect(a.get() != nullptr && a.bytes() == 64 && a.words() == a.get(), "allocated");
      c.expect(fake_count("host_allocations") == 1, "one allocation");
      c.expect(current_context() == other, "the current context is as it was");
      a.words()[15] = 0xC0FFEEu;

      PinnedBuffer b(std::move(a));
      c.expect(a.get() == nullptr && a.bytes() == 0, "a moved-from buffer holds nothing");
      c.expect(b.bytes() == 64 && b.words()[15] == 0xC0FFEEu, "the move carries the memory");

      PinnedBuffer d(mine, 8);
      c.expect(fake_count("host_allocations") == 2, "two allocations");
      d = std::move(b);
      c.expect(fake_count("host_allocations") == 1, "move assignment frees the memory it replaces");
      c.expect(d.words()[15] == 0xC0FFEEu && b.get() == nullptr,
               "move assignment carries the memory");
    }
    c.expect(fake_count("host_allocations") == 0, "freed once its owner is gone");
    // No context current and none given: the driver's error, as the library's class.
    CUDATOOL_CU(cuCtxSetCurrent, nullptr);
    c.expect_throw<Error>([] { PinnedBuffer none(nullptr, 64); }, "a buffer of no context");
    c.expect(fake_count("host_allocations") == 0, "nothing left of the failed allocation");
  });
}

class BuffersGpu : public cudatool::testing::GpuTest {};

// The real driver: a device buffer filled on the device reads back through a pinned one;
// each is freed when its owner is gone (the driver then refuses to free the pointer again).
TEST_F(BuffersGpu, CopyThroughBothAndFreeOnDestruction) {
  // The primary context, retained until the test ends (the library's own Context), and no
  // context current: the handles must work from a thread with none.
  const Context primary(device());
  const CUcontext context = primary.handle();
  CUDATOOL_CU(cuCtxSetCurrent, nullptr);
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  CUdeviceptr device_pointer = 0;
  void* host_pointer = nullptr;
  {
    DeviceBuffer device_memory(context, kBytes);
    PinnedBuffer host(context, kBytes);
    EXPECT_EQ(current_context(), nullptr);
    const DeviceBuffer owner(std::move(device_memory));
    EXPECT_EQ(device_memory.get(), 0u);
    device_pointer = owner.get();
    host_pointer = host.get();
    CUDATOOL_CU(cuCtxSetCurrent, context);
    CUDATOOL_CU(cuMemsetD8, owner.get(), 0x5A, kBytes);
    CUDATOOL_CU(cuMemcpyDtoH, host.get(), owner.get(), kBytes);
    EXPECT_EQ(host.words()[kBytes / 4 - 1], 0x5A5A5A5Au);
  }
  EXPECT_NE(CUDATOOL_CU_RESULT(cuMemFree, device_pointer), CUDA_SUCCESS) << "not freed";
  EXPECT_NE(CUDATOOL_CU_RESULT(cuMemFreeHost, host_pointer), CUDA_SUCCESS) << "not freed";
  EXPECT_THROW(DeviceBuffer(context, std::size_t{1} << 50), MemoryError);  // 1 PiB
  CUDATOOL_CU(cuCtxSetCurrent, nullptr);
}

}  // namespace
}  // namespace cudatool::detail
