// bench-pool's --json document (share/schemas/bench-pool.schema.json, without
// schema_version: print_json adds it).
#include "bench_pool_render.hpp"

#include <cmath>
#include <optional>

#include "cudatool/memory/allocators.hpp"

namespace cudatool::app {

void write_json(JsonStream& out, const PoolStatistics& s) {
  out.value(JsonObject()
                .set("held_blocks", s.held_blocks)
                .set("held_bytes", s.held_bytes)
                .set("active_blocks", s.active_blocks)
                .set("active_bytes", s.active_bytes)
                .set("active_block_bytes", s.active_block_bytes)
                .set("managed_bytes", s.managed_bytes)
                .set("peak_managed_bytes", s.peak_managed_bytes)
                .set("allocator_allocations", s.allocator_allocations)
                .set("allocator_frees", s.allocator_frees)
                .set("oom_retries", s.oom_retries)
                .set("holding", s.holding));
}

JsonObject bench_pool_json(const bench::Result& r) {
  using namespace bench;
  const Config& c = r.config;
  JsonObject config;
  config.set("backend", name(c.backend))
      .set("workload", name(c.distribution))
      .set("order", name(c.interleaving))
      .set("live", c.live)
      .set("threads", c.threads)
      .set("seed", c.seed)
      .set("iterations", c.iterations)
      .set("duration_s", c.duration_s)
      .set("warmup", c.warmup)
      .set("leading_bits_in_bin_id", c.pool.leading_bits_in_bin_id)
      .set("small_block_bytes", c.pool.small_block_bytes)
      .set("shards", c.pool.shards);
  if (c.distribution == SizeDistribution::fixed)
    config.set("size", c.size);
  else
    config.set("min_size", c.min_size).set("max_size", c.max_size);
  if (c.backend == Backend::pinned)
    config.set("pinned_flags", format_host_alloc_flags(c.host_alloc_flags));
  std::vector<JsonObject> allocators;
  for (const auto& a : r.allocators)
    allocators.push_back(JsonObject()
                             .set("allocator", name(a.kind))
                             .set("label", a.label)
                             .set("pairs", a.pairs)
                             .set("seconds", a.seconds)
                             .set("samples", a.samples)
                             .set("batch_pairs", a.batch_pairs)
                             .set("median_ns", a.median_ns)
                             .set("p99_ns", a.p99_ns)
                             .set("mean_ns", a.mean_ns)
                             .set("min_ns", a.min_ns)
                             .set("pairs_per_second", a.throughput)
                             .set("speedup_vs_raw", a.speedup_vs_raw)
                             .set("peak_requested_bytes", a.peak_requested_bytes)
                             .set("peak_held_bytes", a.peak_held_bytes)
                             .set("overhead_pct", a.overhead_pct)
                             .set("statistics", a.final_statistics));
  JsonObject j;
  if (r.device_ordinal)
    j.set("device", JsonObject()
                        .set("ordinal", *r.device_ordinal)
                        .set("name", r.device_name)
                        .set("total_memory", r.device_memory));
  else
    j.set("device", nullptr);
  return j.set("config", config)
      .set("host", JsonObject().set("cpu", r.cpu).set("cpus", r.cpus))
      .set("rounding",
           JsonObject()
               .set("requests", r.rounding.requests)
               .set("small_requests", r.rounding.small_requests)
               .set("requested_bytes", r.rounding.requested_bytes)
               .set("block_bytes", r.rounding.block_bytes)
               .set("overhead_pct", r.rounding.overhead_pct)
               .set("max_overhead_pct", r.rounding.max_overhead_pct)
               .set("bound_pct",
                    100.0 / std::ldexp(1.0, static_cast<int>(c.pool.leading_bits_in_bin_id))))
      .set("allocators", allocators);
}

}  // namespace cudatool::app
