// The memory pool's own cost, without bench-pool's harness: allocate + free of one size
// in a tight loop, on one thread and on several (Google Benchmark's ->Threads: each
// thread its own loop on the shared pool). Host memory, so it runs anywhere; the device
// and page-locked pools run the same code on a hit. `cudatool bench-pool` is the
// benchmark of record (bench/pool.sh); this isolates the pool from the harness.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "cudatool/memory/allocators.hpp"
#include "cudatool/memory/memory_pool.hpp"

namespace {

cudatool::HostMemoryPool& shared_pool() {
  static cudatool::HostMemoryPool pool{cudatool::HostAllocator{}};
  return pool;
}

void BM_PoolPair(benchmark::State& state) {
  auto& pool = shared_pool();
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    auto a = pool.allocate(size);
    benchmark::DoNotOptimize(a.get());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PoolPair)->Arg(4096)->Arg(16 << 20)->Threads(1)->Threads(2)->Threads(8);

void BM_MallocPair(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MallocPair)->Arg(4096)->Arg(16 << 20)->Threads(1)->Threads(2)->Threads(8);

// The floor of the pool's locking: one uncontended exchange + release store per allocate
// and per free.
void BM_TwoLockPairs(benchmark::State& state) {
  cudatool::detail::SpinLock lock;
  for (auto _ : state) {
    lock.lock();
    lock.unlock();
    lock.lock();
    lock.unlock();
  }
}
BENCHMARK(BM_TwoLockPairs);

}  // namespace
