// cudatool bench-pool: MemoryPool against the allocators it replaces. The options become a
// bench::Config, the library's engine (cudatool/bench/pool_benchmark.hpp) runs it, and the
// result is rendered as text (bench_pool_text.cpp) or JSON (bench_pool_json.cpp), with a
// progress bar on stderr when that is a terminal (bench_pool_progress.hpp).
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_pool_progress.hpp"
#include "bench_pool_render.hpp"
#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/bench/pool_benchmark.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/memory/allocators.hpp"
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
  if (!o.allocators.empty())
    for (const std::string& item : split_list(o.allocators, "--allocators", "pool,raw"))
      c.allocators.push_back(bench::parse_allocator_kind(item, "--allocators"));
  // The engine's messages name the settings as this command line spells them.
  c.names = {.benchmark = "bench-pool",
             .size = "--size",
             .min_size = "--min-size",
             .max_size = "--max-size",
             .live = "--live",
             .threads = "--threads",
             .iterations = "--iterations",
             .duration = "--duration",
             .leading_bits = "--leading-bits",
             .small_block = "--small-block",
             .shards = "--shards",
             .allocators = "--allocators"};
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
    return std::make_shared<const Context>(make_default_context(device, "--device"));
  } catch (const LibraryNotFoundError& e) {
    throw LibraryNotFoundError(e.what() + hint, e.library());
  } catch (const DeviceNotFoundError& e) {
    throw DeviceNotFoundError(e.what() + hint);
  }
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
            if (global.json())
              print_json(bench_pool_json(result));
            else
              print_bench_pool_text(result);
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
