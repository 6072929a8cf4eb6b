// cudatool bench-pool: MemoryPool against the allocators it replaces. Parses the
// options, runs the library's engine (cudatool/memory/pool_benchmark.hpp) and renders its result
// as a table or JSON, with a progress bar on stderr when that is a terminal.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/memory/allocators.hpp"
#include "cudatool/memory/pool_benchmark.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

struct BenchPoolOptions {
  std::string backend = "host";
  std::string workload = "fixed";
  std::string size = "4KiB";
  std::string min_size = "256";
  std::string max_size = "64MiB";
  std::string order = "lifo";
  // Numbers stay text until numbers.hpp's strict parser reads them, with the range.
  std::string live = "1";
  std::string threads = "1";
  std::string seed = "1";
  std::optional<std::string> iterations;
  std::optional<std::string> duration;
  std::string warmup = "10000";
  std::string leading_bits = "4";
  std::string small_block = "256";
  std::string shards = "0";
  std::string allocators;
  std::string pinned_flags = "none";
  std::optional<std::string> device;
  bool no_progress = false;
};

std::int64_t in_range(const std::string& text, std::int64_t lo, std::int64_t hi, const char* flag) {
  return parse_integer(text, flag, lo, hi);
}

// The longest --duration (bench::validate holds the same bound).
constexpr double kMaxDurationSeconds = 3600;

bench::Config make_config(const BenchPoolOptions& o) {
  bench::Config c;
  c.backend = bench::parse_backend(o.backend, "--backend");
  c.distribution = bench::parse_size_distribution(o.workload, "--workload");
  c.interleaving = bench::parse_interleaving(o.order, "--order");
  c.size = parse_size(o.size, "--size");
  c.min_size = parse_size(o.min_size, "--min-size");
  c.max_size = parse_size(o.max_size, "--max-size");
  c.live = static_cast<std::size_t>(
      in_range(o.live, 1, static_cast<std::int64_t>(bench::kMaxLive), "--live"));
  c.threads = static_cast<unsigned>(in_range(o.threads, 1, bench::kMaxThreads, "--threads"));
  c.seed = parse_unsigned(o.seed, "--seed");
  if (o.iterations)
    c.iterations = static_cast<std::uint64_t>(
        in_range(*o.iterations, 1, std::int64_t{1} << 50, "--iterations"));
  if (o.duration)
    c.duration_s = parse_duration(*o.duration, "--duration", 0.001, kMaxDurationSeconds);
  if (!o.iterations && !o.duration) c.duration_s = 1.0;
  c.warmup = static_cast<std::uint64_t>(in_range(o.warmup, 0, std::int64_t{1} << 40, "--warmup"));
  c.pool.leading_bits_in_bin_id = static_cast<unsigned>(
      in_range(o.leading_bits, 0, BinRule::kMaxLeadingBits, "--leading-bits"));
  const std::uint64_t small = parse_size(o.small_block, "--small-block");
  if (small < 1 || small > BinRule::kMaxSmallBlockBytes)
    throw UsageError("--small-block " + quote_input(o.small_block) + ": must be 1 B..1 MiB");
  c.pool.small_block_bytes = static_cast<std::size_t>(small);
  c.pool.shards = static_cast<unsigned>(in_range(o.shards, 0, 256, "--shards"));
  c.host_alloc_flags = bench::parse_host_alloc_flags(o.pinned_flags, "--pinned-flags");
  if (!o.allocators.empty()) {
    std::stringstream list(o.allocators);
    std::string item;
    while (std::getline(list, item, ','))
      c.allocators.push_back(bench::parse_allocator_kind(item, "--allocators"));
  }
  bench::validate(c);
  return c;
}

std::shared_ptr<const Context> open_context(const bench::Config& c,
                                            const std::optional<std::string>& device) {
  if (c.backend == bench::Backend::host) return nullptr;
  const std::string hint = "; the " + std::string(bench::name(c.backend)) +
                           " backend needs a GPU (use --backend host to benchmark the pool on "
                           "host memory)";
  try {
    return std::make_shared<const Context>(make_default_context(device));
  } catch (const LibraryNotFoundError& e) {
    throw LibraryNotFoundError(e.what() + hint, e.library());
  } catch (const DeviceNotFoundError& e) {
    throw DeviceNotFoundError(e.what() + hint);
  }
}

// A progress bar on stderr, drawn only once a run has lasted half a second.
class ProgressBar {
 public:
  bench::Progress callback() {
    return [this](const bench::AllocatorResult& a, std::size_t index, std::size_t count,
                  double fraction) { draw(a, index, count, fraction); };
  }
  ~ProgressBar() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }

 private:
  void draw(const bench::AllocatorResult& a, std::size_t index, std::size_t count,
            double fraction) {
    std::lock_guard lock(m_);
    if (std::chrono::steady_clock::now() - start_ < std::chrono::milliseconds(500)) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(std::lround(fraction * kWidth));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\033[Kbench-pool %zu/%zu %-16s [%s] %3d%%", index + 1, count,
                 a.label.c_str(), bar.c_str(), static_cast<int>(std::lround(fraction * 100)));
    std::fflush(stderr);
    drawn_ = true;
  }
  std::mutex m_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

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

void render_text(const bench::Result& r) {
  const bench::Config& c = r.config;
  std::cout << "bench-pool: " << bench::name(c.backend) << " backend";
  if (c.backend == bench::Backend::pinned)
    std::cout << " (flags " << format_host_alloc_flags(c.host_alloc_flags) << ")";
  std::cout << "; " << describe_workload(c) << '\n';
  std::cout << "host: " << r.cpu << " (" << r.cpus << " CPUs)";
  if (r.device_ordinal)
    std::cout << "; device " << *r.device_ordinal << ": " << r.device_name << " ("
              << format_bytes(r.device_memory) << ")";
  std::cout << '\n';
  std::cout << "pool bins: " << c.pool.leading_bits_in_bin_id << " bits after the leading one"
            << ", small block " << format_bytes(c.pool.small_block_bytes)
            << "; requests rounded up by " << fixed(r.rounding.overhead_pct, 2)
            << "% in total, at most " << fixed(r.rounding.max_overhead_pct, 2)
            << "% above the small block (bound "
            << fixed(100.0 / std::ldexp(1.0, static_cast<int>(c.pool.leading_bits_in_bin_id)), 2)
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
        std::cout << pad(row[i], width[i]);
      else
        std::cout << "  " << std::string(width[i] - row[i].size(), ' ') << row[i];
    }
    std::cout << '\n';
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
  for (const auto& a : r.allocators) {
    if (!a.final_statistics) continue;
    const PoolStatistics& s = *a.final_statistics;
    std::cout << "\npool after the run: " << describe(s) << "; allocator called "
              << s.allocator_allocations << " times, " << s.allocator_frees
              << " blocks given back, " << s.oom_retries << " out-of-memory retries\n";
  }
  std::cout << "(per alloc+free pair, host-side; " << r.allocators.front().samples << " samples of "
            << r.allocators.front().batch_pairs << " pairs for " << r.allocators.front().label
            << ")\n";
}

nlohmann::json statistics_json(const PoolStatistics& s) {
  return {{"held_blocks", s.held_blocks},
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

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const bench::Result& r) {
  const bench::Config& c = r.config;
  nlohmann::json config = {
      {"backend", bench::name(c.backend)},
      {"workload", bench::name(c.distribution)},
      {"order", bench::name(c.interleaving)},
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
  if (c.distribution == bench::SizeDistribution::fixed) {
    config["size"] = c.size;
  } else {
    config["min_size"] = c.min_size;
    config["max_size"] = c.max_size;
  }
  if (c.backend == bench::Backend::pinned)
    config["pinned_flags"] = format_host_alloc_flags(c.host_alloc_flags);
  nlohmann::json allocators = nlohmann::json::array();
  for (const auto& a : r.allocators) {
    allocators.push_back({
        {"allocator", bench::name(a.kind)},
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
        {"statistics",
         a.final_statistics ? statistics_json(*a.final_statistics) : nlohmann::json(nullptr)},
    });
  }
  nlohmann::json device = nullptr;
  if (r.device_ordinal)
    device = {
        {"ordinal", *r.device_ordinal}, {"name", r.device_name}, {"total_memory", r.device_memory}};
  return {
      {"config", config},
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

}  // namespace

Command add_bench_pool(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand("bench-pool",
                                  "Benchmark the memory pool against cuMemAlloc, cuMemAllocAsync, "
                                  "cuMemHostAlloc or malloc");
  auto o = std::make_shared<BenchPoolOptions>();
  add_json_flag(*sub, global);
  sub->add_option("--backend", o->backend,
                  "device (pool, cuMemAlloc, cuMemAllocAsync), pinned (pool, cuMemHostAlloc) "
                  "or host (pool, malloc; no GPU needed)")
      ->capture_default_str()
      ->check(completion_choices({std::string(bench::name(bench::Backend::device)),
                                  std::string(bench::name(bench::Backend::pinned)),
                                  std::string(bench::name(bench::Backend::host))}));
  sub->add_option("--workload", o->workload, "Request sizes: fixed, uniform or log-uniform")
      ->capture_default_str()
      ->check(completion_choices({std::string(bench::name(bench::SizeDistribution::fixed)),
                                  std::string(bench::name(bench::SizeDistribution::uniform)),
                                  std::string(bench::name(bench::SizeDistribution::log_uniform))}));
  sub->add_option("--size", o->size, "Request size of the fixed workload (4096, 4K, 1MiB)")
      ->capture_default_str();
  sub->add_option("--min-size", o->min_size, "Smallest request of uniform and log-uniform")
      ->capture_default_str();
  sub->add_option("--max-size", o->max_size, "Largest request of uniform and log-uniform")
      ->capture_default_str();
  sub->add_option("--order", o->order,
                  "lifo (rounds of --live allocations freed in reverse) or random (--live "
                  "blocks stay alive, each step frees a random one)")
      ->capture_default_str()
      ->check(completion_choices({std::string(bench::name(bench::Interleaving::lifo)),
                                  std::string(bench::name(bench::Interleaving::random))}));
  sub->add_option("--live", o->live, "Live-set size")->capture_default_str();
  sub->add_option("--threads", o->threads, "Threads allocating at once")->capture_default_str();
  sub->add_option("--seed", o->seed, "Seed of the request streams")->capture_default_str();
  sub->add_option("--iterations", o->iterations, "Timed alloc+free pairs per thread");
  sub->add_option("--duration", o->duration,
                  "Timed seconds per allocator (default 1 unless --iterations is given)");
  sub->add_option("--warmup", o->warmup, "Untimed pairs per thread before timing")
      ->capture_default_str();
  sub->add_option("--leading-bits", o->leading_bits,
                  "Pool bins: bits after the leading one bit that identify a bin (0..12)")
      ->capture_default_str();
  sub->add_option("--small-block", o->small_block,
                  "Pool bins: requests up to this size share one bin of blocks this size")
      ->capture_default_str();
  sub->add_option("--shards", o->shards, "Pool shards (0: one per hardware thread)")
      ->capture_default_str();
  sub->add_option("--allocators", o->allocators,
                  "Comma-separated subset of pool, raw, stream (default: all the backend has)");
  sub->add_option("--pinned-flags", o->pinned_flags,
                  "cuMemHostAlloc flags: portable, devicemap, writecombined (comma-separated) "
                  "or none")
      ->capture_default_str();
  sub->add_option("--device", o->device, "Device for the device and pinned backends");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar, even on a terminal");

  return {sub, [o, &global]() {
            const bench::Config config = make_config(*o);
            auto context = open_context(config, o->device);
            std::optional<ProgressBar> bar;
            bench::Progress progress;
            if (!o->no_progress && isatty(STDERR_FILENO)) {
              bar.emplace();
              progress = bar->callback();
            }
            const bench::Result result = bench::run(config, std::move(context), progress);
            bar.reset();
            if (global.json)
              print_json(to_json(result));
            else
              render_text(result);
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
