// bench-pool's text: the run's configuration, host and device, how the pool's bins round
// the requests, then one row per allocator and the pool's statistics after the run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_pool_render.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/memory/allocators.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_ns(double ns) {
  if (ns >= 1e6) return fixed(ns / 1e6, 2) + " ms";
  if (ns >= 1e4) return fixed(ns / 1e3, 1) + " us";
  return fixed(ns, 1) + " ns";
}

std::string format_rate(double per_s) {
  if (per_s >= 1e6) return fixed(per_s / 1e6, 2) + " M/s";
  if (per_s >= 1e3) return fixed(per_s / 1e3, 2) + " k/s";
  return fixed(per_s, 1) + " /s";
}

std::string describe_workload(const bench::Config& c) {
  std::string text = std::string(bench::name(c.distribution)) + " ";
  if (c.distribution == bench::SizeDistribution::fixed)
    text += format_bytes(c.size);
  else
    text += format_bytes(c.min_size) + ".." + format_bytes(c.max_size);
  text += ", " + std::string(bench::name(c.interleaving)) + " (live " + std::to_string(c.live) +
          "), " + std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads") +
          ", seed " + std::to_string(c.seed);
  if (c.iterations) text += ", " + std::to_string(*c.iterations) + " pairs per thread";
  if (c.duration_s) text += ", " + fixed(*c.duration_s, 2) + " s";
  text += " per allocator";
  return text;
}

}  // namespace

void print_bench_pool_text(const bench::Result& r) {
  const bench::Config& c = r.config;
  command_out() << "bench-pool: " << bench::name(c.backend) << " backend";
  if (c.backend == bench::Backend::pinned)
    command_out() << " (flags " << format_host_alloc_flags(c.host_alloc_flags) << ")";
  command_out() << "; " << describe_workload(c) << '\n';
  command_out() << "host: " << r.cpu << " (" << r.cpus << " CPUs)";
  if (r.device_ordinal)
    command_out() << "; device " << *r.device_ordinal << ": " << r.device_name << " ("
                  << format_bytes(r.device_memory) << ")";
  command_out() << '\n';
  command_out() << "pool bins: " << c.pool.leading_bits_in_bin_id << " bits after the leading one"
                << ", small block " << format_bytes(c.pool.small_block_bytes)
                << "; requests rounded up by " << fixed(r.rounding.overhead_pct, 2)
                << "% in total, at most " << fixed(r.rounding.max_overhead_pct, 2)
                << "% above the small block (bound "
                << fixed(100.0 / std::ldexp(1.0, static_cast<int>(c.pool.leading_bits_in_bin_id)),
                         2)
                << "%); " << r.rounding.small_requests << " of " << r.rounding.requests
                << " requests in the small bin\n\n";

  const std::vector<std::string> header = {"allocator", "median",         "p99",
                                           "mean",      "pairs/s",        "speedup",
                                           "peak held", "peak requested", "overhead"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : r.allocators) {
    rows.push_back(
        {a.label, format_ns(a.median_ns), format_ns(a.p99_ns), format_ns(a.mean_ns),
         format_rate(a.throughput),
         a.speedup_vs_raw ? fixed(*a.speedup_vs_raw, *a.speedup_vs_raw < 10 ? 2 : 0) + "x" : "-",
         a.peak_held_bytes ? format_bytes(*a.peak_held_bytes) : "-",
         format_bytes(a.peak_requested_bytes),
         a.overhead_pct ? fixed(*a.overhead_pct, 1) + "%" : "-"});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    width[i] = header[i].size();
    for (const auto& row : rows) width[i] = std::max(width[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i == 0)
        command_out() << pad(row[i], width[i]);
      else
        command_out() << "  " << std::string(width[i] - row[i].size(), ' ') << row[i];
    }
    command_out() << '\n';
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
  for (const auto& a : r.allocators) {
    if (!a.final_statistics) continue;
    const PoolStatistics& s = *a.final_statistics;
    command_out() << "\npool after the run: " << describe(s) << "; allocator called "
                  << s.allocator_allocations << " times, " << s.allocator_frees
                  << " blocks given back, " << s.oom_retries << " out-of-memory retries\n";
  }
  command_out() << "(per alloc+free pair, host-side; " << r.allocators.front().samples
                << " samples of " << r.allocators.front().batch_pairs << " pairs for "
                << r.allocators.front().label << ")\n";
}

}  // namespace cudatool::app
