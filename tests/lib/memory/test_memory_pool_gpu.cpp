// MemoryPool on a real GPU (GpuTest skips without one): device and page-locked pools
// hand out working memory, blocks may be used and freed on threads without a current
// context, allocations outlive their pool, and a real out-of-memory run recovers and
// gives every byte back.
//
// Under compute-sanitizer (no kernel runs here, so memcheck checks the driver calls and,
// with --leak-check full, that every allocation is freed), leaving out the out-of-memory
// test, which fills the whole GPU (the sanitizer's own allocations make it meaningless):
//   compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1
//     build/tests/cudatool_unit_tests
//     --gtest_filter='MemoryPoolGpu.*:-MemoryPoolGpu.OutOfMemory*'
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/memory/allocators.hpp"
#include "cudatool/memory/memory_pool.hpp"
#include "driver/driver_api.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

class MemoryPoolGpu : public testing::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    context_ = std::make_shared<const Context>(device());
  }
  std::shared_ptr<const Context> context_;
};

std::size_t free_device_memory() {
  std::size_t free = 0, total = 0;
  CUDATOOL_CU(cuMemGetInfo, &free, &total);
  return free;
}

TEST_F(MemoryPoolGpu, DevicePoolHandsOutWorkingReusedBlocks) {
  DeviceMemoryPool pool{DeviceAllocator(context_)};
  CUdeviceptr first = 0;
  {
    auto a = pool.allocate(1 << 20);
    ASSERT_TRUE(a);
    first = a.get();
    EXPECT_EQ(a.block_size(), (1u << 20) + (1u << 16) - 1);
    // The whole block is the caller's: fill all of it, read it back.
    CUDATOOL_CU(cuMemsetD8, a.get(), 0xab, a.block_size());
    std::vector<unsigned char> host(a.block_size());
    CUDATOOL_CU(cuMemcpyDtoH, host.data(), a.get(), host.size());
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char c) { return c == 0xab; }));
  }
  auto b = pool.allocate((1 << 20) + 1000);  // the same bin: the same block
  EXPECT_EQ(b.get(), first);
  auto c = pool.allocate(100);  // the small bin: 256 B
  EXPECT_EQ(c.block_size(), 256u);
  CUDATOOL_CU(cuMemsetD8, c.get(), 1, c.block_size());
  EXPECT_EQ(c.get() % 256, 0u);
  context_->synchronize();
  const auto st = pool.statistics();
  EXPECT_EQ(st.allocator_allocations, 2u);
  EXPECT_EQ(st.active_blocks, 2u);
  EXPECT_EQ(st.active_bytes, (1u << 20) + 1000 + 100);
  EXPECT_EQ(pool.allocate(0).get(), 0u);
}

TEST_F(MemoryPoolGpu, PinnedPoolIsPageLockedAndMapped) {
  const unsigned flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
  PageLockedMemoryPool pinned{PageLockedAllocator(context_, flags)};
  DeviceMemoryPool device_pool{DeviceAllocator(context_)};
  EXPECT_EQ(pinned.allocator().flags(), flags);
  constexpr std::size_t kBytes = 3 << 20;
  auto in = pinned.allocate(kBytes);
  auto out = pinned.allocate(kBytes);
  auto dev = device_pool.allocate(kBytes);
  std::memset(in.get(), 0x5c, kBytes);
  std::memset(out.get(), 0, kBytes);
  CUDATOOL_CU(cuMemcpyHtoD, dev.get(), in.get(), kBytes);
  CUDATOOL_CU(cuMemcpyDtoH, out.get(), dev.get(), kBytes);
  EXPECT_EQ(std::memcmp(in.get(), out.get(), kBytes), 0);
  void* first = in.get();
  in.free();
  EXPECT_EQ(pinned.allocate(kBytes + 5).get(), first);  // reused: the same bin as kBytes
  // Write-combined memory is allocated too (reading it from the host is merely slow).
  PageLockedMemoryPool wc{PageLockedAllocator(context_, CU_MEMHOSTALLOC_WRITECOMBINED)};
  auto w = wc.allocate(4096);
  std::memset(w.get(), 1, 4096);
  EXPECT_THROW(PageLockedAllocator(context_, 0x80), LogicError);
}

TEST_F(MemoryPoolGpu, ThreadsWithoutACurrentContext) {
  DeviceMemoryPool pool{DeviceAllocator(context_)};
  std::atomic<int> failures{0};
  std::vector<PooledDeviceAllocation> handed_over(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      // No context is current on this thread: the allocator makes its own current.
      try {
        std::vector<PooledDeviceAllocation> mine;
        for (int i = 0; i < 2000; ++i) {
          mine.push_back(pool.allocate(std::size_t{512} << (i % 12)));
          if (mine.size() > 16) mine.erase(mine.begin());
        }
        handed_over[static_cast<std::size_t>(t)] = std::move(mine.back());
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(pool.active_blocks(), 8u);
  for (auto& a : handed_over) CUDATOOL_CU(cuMemsetD8, a.get(), 7, a.size());  // usable here
  context_->synchronize();
  handed_over.clear();  // freed on another thread than the one that allocated
  EXPECT_EQ(pool.active_blocks(), 0u);
  pool.stop_holding();
  const auto st = pool.statistics();
  EXPECT_EQ(st.managed_bytes, 0u);
  EXPECT_EQ(st.allocator_allocations, st.allocator_frees);
}

TEST_F(MemoryPoolGpu, AllocationOutlivesThePool) {
  PooledDeviceAllocation survivor;
  {
    DeviceMemoryPool pool{DeviceAllocator(context_)};
    survivor = pool.allocate(8 << 20);
  }
  // The pool's state keeps the allocator and its context: the memory is still valid.
  CUDATOOL_CU(cuMemsetD8, survivor.get(), 3, survivor.size());
  unsigned char byte = 0;
  CUDATOOL_CU(cuMemcpyDtoH, &byte, survivor.get() + survivor.size() - 1, 1);
  EXPECT_EQ(byte, 3);
  survivor.free();  // goes to cuMemFree, and frees the pool's state
}

// Fills the GPU through the pool until cuMemAlloc fails, gives every block back to the
// pool (which holds them: the GPU stays full), then asks for a size from another bin: the
// driver has no room, so the pool must free what it holds and retry. After stop_holding,
// the free memory the driver reports is back at its baseline.
//
// Tolerance 64 MiB: the driver reports free memory at page granularity (2 MiB) and may
// keep a few pages of its own bookkeeping for the ~300 allocations this makes; 64 MiB is
// well below the smallest block used here (272 MiB), so a single leaked block fails.
TEST_F(MemoryPoolGpu, OutOfMemoryRecoversAndStopHoldingReturnsMemory) {
  constexpr std::size_t kTolerance = 64u << 20;
  constexpr std::size_t kChunk = 256u << 20;  // a block of 272 MiB - 1
  context_->synchronize();
  const std::size_t baseline = free_device_memory();
  {
    DeviceMemoryPool pool{DeviceAllocator(context_)};
    const std::size_t block = pool.bin_rule().round_up(kChunk);
    std::vector<PooledDeviceAllocation> blocks;
    bool ran_out = false;
    const std::size_t limit = device().total_memory() / block + 8;
    for (std::size_t i = 0; i < limit && !ran_out; ++i) {
      try {
        blocks.push_back(pool.allocate(kChunk));
      } catch (const MemoryError& e) {
        ran_out = true;
        const std::string what = e.what();
        EXPECT_NE(what.find("cannot allocate 256 MiB"), std::string::npos) << what;
        EXPECT_NE(what.find("active " + std::to_string(blocks.size()) + " blocks"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << what;
      }
    }
    ASSERT_TRUE(ran_out) << "the GPU never ran out of memory";
    ASSERT_GT(blocks.size(), 0u);
    const std::size_t filled = blocks.size();
    EXPECT_EQ(pool.active_blocks(), filled);  // still consistent after the failure
    EXPECT_LT(free_device_memory(), baseline - (filled - 1) * block);

    blocks.clear();  // all held: the GPU is still full
    EXPECT_EQ(pool.held_blocks(), filled);
    const std::uint64_t retries = pool.statistics().oom_retries;
    auto big = pool.allocate(std::size_t{1} << 30);  // another bin
    ASSERT_TRUE(big);
    EXPECT_EQ(pool.statistics().oom_retries, retries + 1);
    EXPECT_EQ(pool.held_blocks(), 0u);
    CUDATOOL_CU(cuMemsetD8, big.get(), 0, big.size());
    context_->synchronize();
    // And the pool keeps working: the freed room serves the old size again.
    std::vector<PooledDeviceAllocation> again;
    for (int i = 0; i < 4; ++i) again.push_back(pool.allocate(kChunk));
    big.free();
    again.clear();
    pool.stop_holding();
    EXPECT_EQ(pool.managed_bytes(), 0u);
  }
  context_->synchronize();
  const std::size_t after = free_device_memory();
  EXPECT_GE(after + kTolerance, baseline) << "baseline " << baseline << ", after " << after;
}

}  // namespace
}  // namespace cudatool
