// bench-pool's --json document (share/schemas/bench-pool.schema.json, without
// schema_version: print_json adds it).
#include "bench_pool_render.hpp"

#include <cmath>
#include <optional>

#include "cudatool/memory/allocators.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const PoolStatistics& s) {
  j = {{"held_blocks", s.held_blocks},
       {"held_bytes", s.held_bytes},
       {"active_blocks", s.active_blocks},
       {"active_bytes", s.active_bytes},
       {"active_block_bytes", s.active_block_bytes},
       {"managed_bytes", s.managed_bytes},
       {"peak_managed_bytes", s.peak_managed_bytes},
       {"allocator_allocations", s.allocator_allocations},
       {"allocator_frees", s.allocator_frees},
       {"oom_retries", s.oom_retries},
       {"holding", s.holding}};
}

namespace bench {
namespace {

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void to_json(nlohmann::json& j, const Result& r) {
  const Config& c = r.config;
  nlohmann::json config = {
      {"backend", name(c.backend)},
      {"workload", name(c.distribution)},
      {"order", name(c.interleaving)},
      {"live", c.live},
      {"threads", c.threads},
      {"seed", c.seed},
      {"iterations", optional_json(c.iterations)},
      {"duration_s", optional_json(c.duration_s)},
      {"warmup", c.warmup},
      {"leading_bits_in_bin_id", c.pool.leading_bits_in_bin_id},
      {"small_block_bytes", c.pool.small_block_bytes},
      {"shards", c.pool.shards},
  };
  if (c.distribution == SizeDistribution::fixed) {
    config["size"] = c.size;
  } else {
    config["min_size"] = c.min_size;
    config["max_size"] = c.max_size;
  }
  if (c.backend == Backend::pinned)
    config["pinned_flags"] = format_host_alloc_flags(c.host_alloc_flags);
  nlohmann::json allocators = nlohmann::json::array();
  for (const auto& a : r.allocators) {
    allocators.push_back({
        {"allocator", name(a.kind)},
        {"label", a.label},
        {"pairs", a.pairs},
        {"seconds", a.seconds},
        {"samples", a.samples},
        {"batch_pairs", a.batch_pairs},
        {"median_ns", a.median_ns},
        {"p99_ns", a.p99_ns},
        {"mean_ns", a.mean_ns},
        {"min_ns", a.min_ns},
        {"pairs_per_second", a.throughput},
        {"speedup_vs_raw", optional_json(a.speedup_vs_raw)},
        {"peak_requested_bytes", a.peak_requested_bytes},
        {"peak_held_bytes", optional_json(a.peak_held_bytes)},
        {"overhead_pct", optional_json(a.overhead_pct)},
        {"statistics", optional_json(a.final_statistics)},
    });
  }
  nlohmann::json device = nullptr;
  if (r.device_ordinal)
    device = {
        {"ordinal", *r.device_ordinal}, {"name", r.device_name}, {"total_memory", r.device_memory}};
  j = {{"config", config},
       {"host", {{"cpu", r.cpu}, {"cpus", r.cpus}}},
       {"device", device},
       {"rounding",
        {{"requests", r.rounding.requests},
         {"small_requests", r.rounding.small_requests},
         {"requested_bytes", r.rounding.requested_bytes},
         {"block_bytes", r.rounding.block_bytes},
         {"overhead_pct", r.rounding.overhead_pct},
         {"max_overhead_pct", r.rounding.max_overhead_pct},
         {"bound_pct", 100.0 / std::ldexp(1.0, static_cast<int>(c.pool.leading_bits_in_bin_id))}}},
       {"allocators", allocators}};
}

}  // namespace bench
}  // namespace cudatool
