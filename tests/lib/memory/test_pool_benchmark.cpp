// The bench-pool engine without a GPU: parsing, validation, workloads, statistics, and
// real runs of the host backend.
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/memory/pool_benchmark.hpp"

namespace cudatool::bench {
namespace {

Config host_config() {
  Config c;
  c.backend = Backend::host;
  c.iterations = 2000;
  c.warmup = 100;
  return c;
}

template <class F>
std::string usage_message(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(PoolBenchmark, ParsesNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(parse_backend("device", "--backend"), Backend::device);
  EXPECT_EQ(parse_backend("pinned", "--backend"), Backend::pinned);
  EXPECT_EQ(parse_size_distribution("log-uniform", "--workload"), SizeDistribution::log_uniform);
  EXPECT_EQ(parse_interleaving("random", "--order"), Interleaving::random);
  EXPECT_EQ(parse_allocator_kind("stream", "--allocators"), AllocatorKind::stream);
  const std::string m = usage_message([] { parse_backend("gpu", "--backend"); });
  EXPECT_NE(m.find("unknown backend \"gpu\""), std::string::npos) << m;
  EXPECT_NE(m.find("device, pinned, host"), std::string::npos) << m;
  EXPECT_THROW(parse_size_distribution("normal", "--workload"), UsageError);
  EXPECT_THROW(parse_interleaving("fifo", "--order"), UsageError);
  EXPECT_THROW(parse_allocator_kind("cub", "--allocators"), UsageError);
  EXPECT_EQ(parse_host_alloc_flags("none", "f"), 0u);
  EXPECT_EQ(parse_host_alloc_flags("portable,writecombined", "f"),
            unsigned{CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_WRITECOMBINED});
  EXPECT_THROW(parse_host_alloc_flags("portable,mapped", "f"), UsageError);
}

TEST(PoolBenchmark, ValidateRejectsWhatCannotRun) {
  auto bad = [](auto change) {
    Config c = host_config();
    change(c);
    return usage_message([&] { validate(c); });
  };
  EXPECT_NO_THROW(validate(host_config()));
  EXPECT_NE(bad([](Config& c) { c.threads = 0; }).find("--threads 0"), std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.size = 0; }).find("--size"), std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.size = kMaxRequestBytes + 1; }).find("absurd"),
            std::string::npos);
  EXPECT_NE(bad([](Config& c) {
              c.distribution = SizeDistribution::uniform;
              c.min_size = 2000;
              c.max_size = 1000;
            }).find("larger than --max-size"),
            std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.live = 0; }).find("--live"), std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.iterations.reset(); }).find("--iterations or --duration"),
            std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.duration_s = -1; }).find("--duration"), std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.allocators = {AllocatorKind::stream}; }).find("not offered"),
            std::string::npos);
  EXPECT_NE(bad([](Config& c) { c.pool.leading_bits_in_bin_id = 40; }).find("--leading-bits"),
            std::string::npos);
  // A valid config that asks for more than the machine has is out of memory, not usage.
  Config huge = host_config();
  huge.size = kMaxRequestBytes;
  EXPECT_THROW(run(huge, nullptr), MemoryError);
  // The device backend without a context is a programming error.
  Config device = host_config();
  device.backend = Backend::device;
  EXPECT_THROW(run(device, nullptr), LogicError);
}

TEST(PoolBenchmark, WorkloadsAreReproducibleAndInRange) {
  Config c = host_config();
  c.iterations = 100000;
  c.distribution = SizeDistribution::log_uniform;
  c.min_size = 256;
  c.max_size = 64ull << 20;
  c.interleaving = Interleaving::random;
  c.live = 100;
  const Workload a = make_workload(c, 0), b = make_workload(c, 0), other = make_workload(c, 1);
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.victims, b.victims);
  EXPECT_NE(a.sizes, other.sizes);
  EXPECT_EQ(a.sizes.size(), kMaxStreamSteps);
  for (std::size_t s : a.sizes) ASSERT_TRUE(s >= c.min_size && s <= c.max_size) << s;
  for (auto v : a.victims) ASSERT_LE(v, c.live);
  // Log-uniform: about as many requests below the geometric mean (128 KiB) as above.
  const auto below =
      std::count_if(a.sizes.begin(), a.sizes.end(), [](std::size_t s) { return s < (128u << 10); });
  EXPECT_NEAR(static_cast<double>(below) / a.sizes.size(), 0.5, 0.02);
  Config seeded = c;
  seeded.seed = 2;
  EXPECT_NE(make_workload(seeded, 0).sizes, a.sizes);

  c.distribution = SizeDistribution::uniform;
  c.min_size = 1000;
  c.max_size = 1003;
  const Workload u = make_workload(c, 0);
  for (std::size_t v = 1000; v <= 1003; ++v) {
    const auto n = std::count(u.sizes.begin(), u.sizes.end(), v);
    EXPECT_NEAR(static_cast<double>(n) / u.sizes.size(), 0.25, 0.02) << v;
  }
  // LIFO streams are whole rounds, so cycling them keeps rounds aligned.
  c.interleaving = Interleaving::lifo;
  c.live = 1000;
  EXPECT_EQ(make_workload(c, 0).sizes.size() % 1000, 0u);
}

TEST(PoolBenchmark, PeakLiveBytes) {
  Config c = host_config();
  c.interleaving = Interleaving::lifo;
  c.live = 2;
  Workload w;
  w.sizes = {1, 2, 30, 4, 5, 6};
  EXPECT_EQ(peak_live_bytes(c, w, 2), 3u);
  EXPECT_EQ(peak_live_bytes(c, w, 4), 34u);
  EXPECT_EQ(peak_live_bytes(c, w, 1000), 34u);

  // Random: against a direct simulation with explicit sets.
  c.interleaving = Interleaving::random;
  c.live = 3;
  c.iterations = 50;
  c.distribution = SizeDistribution::uniform;
  c.min_size = 1;
  c.max_size = 1000;
  const Workload r = make_workload(c, 0);
  std::vector<std::uint64_t> slots;
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) slots.push_back(r.sizes[pos++]);
  slots.push_back(0);
  std::size_t empty = 3;
  std::uint64_t peak = std::accumulate(slots.begin(), slots.end(), std::uint64_t{0});
  for (int step = 0; step < 120; ++step) {  // cycles the 50-step stream
    slots[empty] = r.sizes[pos % r.sizes.size()];
    peak = std::max(peak, std::accumulate(slots.begin(), slots.end(), std::uint64_t{0}));
    empty = r.victims[pos % r.sizes.size()];
    slots[empty] = 0;
    ++pos;
    if (pos == r.sizes.size()) pos = 0;
  }
  EXPECT_EQ(peak_live_bytes(c, r, 120), peak);
}

TEST(PoolBenchmark, RoundingStaysWithinTheBinBound) {
  for (unsigned bits : {2u, 4u, 6u}) {
    Config c = host_config();
    c.iterations = 65536;
    c.distribution = SizeDistribution::log_uniform;
    c.min_size = 1;
    c.max_size = 1ull << 30;
    c.pool.leading_bits_in_bin_id = bits;
    const auto r = rounding_summary(c, {make_workload(c, 0), make_workload(c, 1)});
    EXPECT_EQ(r.requests, 2u * 65536);
    EXPECT_GT(r.small_requests, 0u);
    EXPECT_LT(r.max_overhead_pct, 100.0 / (1 << bits));
    EXPECT_GT(r.max_overhead_pct, 0.0);
    EXPECT_GE(r.block_bytes, r.requested_bytes);
  }
}

TEST(PoolBenchmark, Quantiles) {
  EXPECT_EQ(quantile({}, 0.5), 0.0);
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(quantile(v, 0.5), 50.0);
  EXPECT_EQ(quantile(v, 0.99), 99.0);
  EXPECT_EQ(quantile(v, 1.0), 100.0);
  EXPECT_EQ(quantile(v, 0.0), 1.0);
  EXPECT_EQ(quantile({7}, 0.99), 7.0);
}

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
