// The engine of `cudatool bench-pool`: workload generation, timing and statistics for
// MemoryPool against the allocators it replaces. The app only parses and renders.
//
// A workload is a per-thread stream of requests (sizes drawn from a distribution with a
// seed of `seed` + thread index, so every allocator sees the same requests) and an
// interleaving:
//   lifo    rounds of `live` allocations followed by their frees in reverse order (a
//           stack, like the temporaries of an expression); live = 1 is alloc-then-free.
//   random  `live` blocks are kept alive; each step allocates one block and frees one of
//           the live ones (including the new one) chosen uniformly at random.
// Each step is one alloc+free pair. The stream (at most 65536 steps) is cycled for long
// runs. Timing: each thread first runs untimed: a warm-up (`warmup` pairs, at least one
// round, at most a tenth of the duration or a second) and a calibration (chunks of
// doubling size until one takes 20 us, then the median of nine such chunks). Then all threads start
// together; each thread times batches of pairs sized so that one batch takes about 2 us (the two
// clock reads cost a few percent at most; a batch is a single pair where a pair takes longer), and
// every batch gives one sample of ns per pair. Median and p99 are over all threads'
// samples; the mean is the timed time over the timed pairs; throughput is all timed
// pairs over the wall time from the common start to the last thread's end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/device/context.hpp"
#include "cudatool/memory/memory_pool.hpp"

namespace cudatool::bench {

enum class Backend { device, pinned, host };
enum class SizeDistribution { fixed, uniform, log_uniform };
enum class Interleaving { lifo, random };
// pool: MemoryPool over the backend's allocator. raw: the backend's allocator itself
// (cuMemAlloc, cuMemHostAlloc, malloc). stream: the driver's stream-ordered pool
// (cuMemAllocAsync/cuMemFreeAsync on a stream per thread; device only), with the default
// memory pool's release threshold raised to the maximum so that it keeps its memory.
enum class AllocatorKind { pool, raw, stream };

// Names as the command line spells them; parse_* throw UsageError naming `source`.
std::string_view name(Backend b);
std::string_view name(SizeDistribution d);
std::string_view name(Interleaving i);
std::string_view name(AllocatorKind k);
Backend parse_backend(std::string_view text, std::string_view source);
SizeDistribution parse_size_distribution(std::string_view text, std::string_view source);
Interleaving parse_interleaving(std::string_view text, std::string_view source);
AllocatorKind parse_allocator_kind(std::string_view text, std::string_view source);
// "portable,devicemap,writecombined" (or "none") -> CU_MEMHOSTALLOC_* bits.
unsigned parse_host_alloc_flags(std::string_view text, std::string_view source);
// The allocators a backend offers, in the order they run.
std::vector<AllocatorKind> allocators_for(Backend b);
// What an allocator is on a backend: "cuMemAlloc", "cuMemAllocAsync", "malloc", ...
std::string allocator_label(Backend b, AllocatorKind k);

// The largest size bench-pool accepts: 2^47 bytes (128 TiB), the user address space of
// x86-64 Linux; anything larger cannot exist and is a usage error, not out-of-memory.
inline constexpr std::uint64_t kMaxRequestBytes = std::uint64_t{1} << 47;
inline constexpr std::size_t kMaxLive = std::size_t{1} << 20;
inline constexpr unsigned kMaxThreads = 1024;
inline constexpr std::size_t kMaxStreamSteps = 65536;

// How the caller names the benchmark and a Config's settings, as validate's and run's
// messages name them (the way parse_* name their `source`): cudatool's "bench-pool" and its
// flags ("--size", ...). The defaults are the library's own words: the fields' names.
struct ConfigNames {
  std::string benchmark = "pool benchmark";
  std::string size = "size";
  std::string min_size = "min_size";
  std::string max_size = "max_size";
  std::string live = "live";
  std::string threads = "threads";
  std::string iterations = "iterations";
  std::string duration = "duration_s";
  std::string leading_bits = "leading_bits_in_bin_id";
  std::string small_block = "small_block_bytes";
  std::string shards = "shards";
  std::string allocators = "allocators";
};

struct Config {
  Backend backend = Backend::host;
  SizeDistribution distribution = SizeDistribution::fixed;
  std::uint64_t size = 4096;     // fixed
  std::uint64_t min_size = 256;  // uniform, log_uniform (inclusive)
  std::uint64_t max_size = 64ull << 20;
  Interleaving interleaving = Interleaving::lifo;
  std::size_t live = 1;
  unsigned threads = 1;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> iterations;  // timed pairs per thread per allocator
  std::optional<double> duration_s;         // timed seconds per allocator
  std::uint64_t warmup = 10000;             // untimed pairs per thread before timing
  PoolOptions pool;
  unsigned host_alloc_flags = 0;          // pinned backend
  std::vector<AllocatorKind> allocators;  // empty: allocators_for(backend)
  ConfigNames names;                      // what messages call the settings above
};

// Throws UsageError for a configuration that cannot run: sizes of 0 or above
// kMaxRequestBytes, min > max, live 0 or above kMaxLive, threads 0 or above kMaxThreads,
// neither or a zero iteration count / duration, an allocator the backend lacks, pool
// options out of range.
void validate(const Config& config);

// The request stream of one thread: `steps` sizes, and for the random interleaving the
// live slot each step frees (0..live; slot `live` is the one just allocated).
struct Workload {
  std::vector<std::size_t> sizes;
  std::vector<std::uint32_t> victims;  // random only
};
Workload make_workload(const Config& config, unsigned thread);

// The largest sum of live requested bytes while `pairs` steps of `workload` run (the live
// set included, cycling the stream as the benchmark does).
std::uint64_t peak_live_bytes(const Config& config, const Workload& workload, std::uint64_t pairs);

struct RoundingSummary {
  std::uint64_t requested_bytes = 0;  // over one pass of every thread's stream
  std::uint64_t block_bytes = 0;      // what the bins hand out for them
  double overhead_pct = 0;            // (block - requested) / requested
  // The largest (block - size) / size over requests above small_block_bytes: below
  // 100 / 2^leading_bits percent by the bin rule.
  double max_overhead_pct = 0;
  std::uint64_t small_requests = 0;  // requests of at most small_block_bytes
  std::uint64_t requests = 0;
};
RoundingSummary rounding_summary(const Config& config, const std::vector<Workload>& workloads);

struct AllocatorResult {
  AllocatorKind kind = AllocatorKind::pool;
  std::string label;        // "pool", "cuMemAlloc", "cuMemAllocAsync", "malloc", ...
  std::uint64_t pairs = 0;  // timed pairs, all threads
  double seconds = 0;       // wall time of the timed part
  std::uint64_t samples = 0;
  std::uint64_t batch_pairs = 0;  // pairs per sample (the first thread's)
  double median_ns = 0;           // per alloc+free pair
  double p99_ns = 0;
  double mean_ns = 0;
  double min_ns = 0;
  double throughput = 0;                           // pairs per second, all threads
  std::optional<double> speedup_vs_raw;            // raw median / this median
  std::uint64_t peak_requested_bytes = 0;          // sum over threads of each one's peak
  std::optional<std::uint64_t> peak_held_bytes;    // pool: peak managed bytes
  std::optional<double> overhead_pct;              // peak held / peak requested - 1
  std::optional<PoolStatistics> final_statistics;  // pool: after the run, all freed
};

struct Result {
  Config config;
  std::string cpu;    // model name
  unsigned cpus = 0;  // logical CPUs online
  std::optional<int> device_ordinal;
  std::string device_name;
  std::uint64_t device_memory = 0;
  RoundingSummary rounding;
  std::vector<AllocatorResult> allocators;
};

// Called from one benchmark thread now and then: the allocator running, its index and
// count, and the fraction of it done (0..1).
using Progress = std::function<void(const AllocatorResult& current, std::size_t index,
                                    std::size_t count, double fraction)>;

// Runs the benchmark. `context` is the CUDA context for the device and pinned backends
// (ignored for host). Throws UsageError (validate), MemoryError when a request cannot be
// served (a size larger than the device's memory fails before anything runs), and the
// driver's errors.
Result run(const Config& config, std::shared_ptr<const Context> context,
           const Progress& progress = {});

// The host's CPU model ("AMD EPYC 7763 64-Core Processor"; "unknown" if not found).
std::string cpu_model();

// Quantile q (0..1) of unsorted samples, by the nearest-rank method; 0 for none.
double quantile(std::vector<double> samples, double q);

}  // namespace cudatool::bench
