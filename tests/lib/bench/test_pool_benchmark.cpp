// the bench-pool engine (lib/src/bench/pool_benchmark.cpp) without a GPU: real runs of the host
// backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudatool/bench/pool_benchmark.hpp"
#include "pool_benchmark_config.hpp"

namespace cudatool::bench {
namespace {

using test_support::host_config;

TEST(PoolBenchmark, HostRunMeasuresPoolAndMalloc) {
  Config c = host_config();
  c.iterations = 5000;
  c.distribution = SizeDistribution::uniform;
  c.min_size = 100;
  c.max_size = 100000;
  c.interleaving = Interleaving::random;
  c.live = 50;
  std::vector<double> fractions;
  const Result r = run(c, nullptr, [&](const AllocatorResult&, std::size_t, std::size_t, double f) {
    fractions.push_back(f);
  });
  ASSERT_EQ(r.allocators.size(), 2u);
  EXPECT_FALSE(r.device_ordinal);
  EXPECT_GT(r.cpus, 0u);
  const AllocatorResult& pool = r.allocators[0];
  const AllocatorResult& raw = r.allocators[1];
  EXPECT_EQ(pool.label, "pool");
  EXPECT_EQ(raw.label, "malloc");
  for (const auto* a : {&pool, &raw}) {
    EXPECT_EQ(a->pairs, 5000u);
    EXPECT_GT(a->median_ns, 0.0);
    EXPECT_GE(a->p99_ns, a->median_ns);
    EXPECT_GE(a->median_ns, a->min_ns);
    EXPECT_GE(a->samples, 50u);
    EXPECT_GT(a->throughput, 0.0);
    EXPECT_GT(a->peak_requested_bytes, 50u * 100);
  }
  ASSERT_TRUE(pool.speedup_vs_raw && raw.speedup_vs_raw);
  EXPECT_DOUBLE_EQ(*raw.speedup_vs_raw, 1.0);
  EXPECT_NEAR(*pool.speedup_vs_raw, raw.median_ns / pool.median_ns, 1e-9);
  ASSERT_TRUE(pool.final_statistics && pool.peak_held_bytes && pool.overhead_pct);
  EXPECT_FALSE(raw.final_statistics);
  const PoolStatistics& s = *pool.final_statistics;
  EXPECT_EQ(s.active_blocks, 0u);
  EXPECT_EQ(s.active_bytes, 0u);
  EXPECT_EQ(s.managed_bytes, s.held_bytes);
  // One thread: the pool held at least what was live at its peak.
  EXPECT_GE(*pool.peak_held_bytes, pool.peak_requested_bytes);
  EXPECT_EQ(pool.peak_requested_bytes, raw.peak_requested_bytes);
  EXPECT_FALSE(fractions.empty());
  EXPECT_EQ(fractions.back(), 1.0);
}

TEST(PoolBenchmark, ThreadsAndLifoRounds) {
  Config c = host_config();
  c.threads = 4;
  c.live = 8;
  c.iterations = 800;
  c.allocators = {AllocatorKind::pool};
  const Result r = run(c, nullptr);
  ASSERT_EQ(r.allocators.size(), 1u);
  EXPECT_EQ(r.allocators[0].pairs, 4u * 800);
  // Fixed 4 KiB requests: blocks of 4351 bytes; eight live per thread at the peak.
  EXPECT_EQ(r.allocators[0].peak_requested_bytes, 4u * 8 * 4096);
  EXPECT_EQ(r.allocators[0].final_statistics->active_blocks, 0u);
  EXPECT_LE(r.allocators[0].final_statistics->held_blocks, 4u * 8);
  EXPECT_NEAR(r.rounding.overhead_pct, 100.0 * 255 / 4096, 1e-9);

  // Duration mode stops on time.
  Config d = host_config();
  d.iterations.reset();
  d.duration_s = 0.2;
  const Result t = run(d, nullptr);
  for (const auto& a : t.allocators) {
    EXPECT_GE(a.seconds, 0.2);
    EXPECT_LT(a.seconds, 1.5);
  }
}

}  // namespace
}  // namespace cudatool::bench
