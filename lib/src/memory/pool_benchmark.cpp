#include "cudatool/memory/pool_benchmark.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/memory/allocators.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::bench {

// ---------------------------------------------------------------------------------------
// Names

namespace {

template <class E, std::size_t N>
E parse_name(std::string_view text, std::string_view source, std::string_view what,
             const E (&values)[N]) {
  std::string all;
  for (E v : values) {
    if (name(v) == text) return v;
    all += (all.empty() ? "" : ", ") + std::string(name(v));
  }
  throw UsageError(std::string(source) + ": unknown " + std::string(what) + " " +
                   quote_input(text) + " (" + std::string(what) + "s: " + all + ")");
}

}  // namespace

std::string_view name(Backend b) {
  switch (b) {
    case Backend::device:
      return "device";
    case Backend::pinned:
      return "pinned";
    case Backend::host:
      return "host";
  }
  return "?";
}
std::string_view name(SizeDistribution d) {
  switch (d) {
    case SizeDistribution::fixed:
      return "fixed";
    case SizeDistribution::uniform:
      return "uniform";
    case SizeDistribution::log_uniform:
      return "log-uniform";
  }
  return "?";
}
std::string_view name(Interleaving i) {
  switch (i) {
    case Interleaving::lifo:
      return "lifo";
    case Interleaving::random:
      return "random";
  }
  return "?";
}
std::string_view name(AllocatorKind k) {
  switch (k) {
    case AllocatorKind::pool:
      return "pool";
    case AllocatorKind::raw:
      return "raw";
    case AllocatorKind::stream:
      return "stream";
  }
  return "?";
}

Backend parse_backend(std::string_view text, std::string_view source) {
  static constexpr Backend kAll[] = {Backend::device, Backend::pinned, Backend::host};
  return parse_name(text, source, "backend", kAll);
}
SizeDistribution parse_size_distribution(std::string_view text, std::string_view source) {
  static constexpr SizeDistribution kAll[] = {SizeDistribution::fixed, SizeDistribution::uniform,
                                              SizeDistribution::log_uniform};
  return parse_name(text, source, "workload", kAll);
}
Interleaving parse_interleaving(std::string_view text, std::string_view source) {
  static constexpr Interleaving kAll[] = {Interleaving::lifo, Interleaving::random};
  return parse_name(text, source, "order", kAll);
}
AllocatorKind parse_allocator_kind(std::string_view text, std::string_view source) {
  static constexpr AllocatorKind kAll[] = {AllocatorKind::pool, AllocatorKind::raw,
                                           AllocatorKind::stream};
  return parse_name(text, source, "allocator", kAll);
}

unsigned parse_host_alloc_flags(std::string_view text, std::string_view source) {
  unsigned flags = 0;
  if (text == "none" || text.empty()) return 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (item == "portable")
      flags |= CU_MEMHOSTALLOC_PORTABLE;
    else if (item == "devicemap")
      flags |= CU_MEMHOSTALLOC_DEVICEMAP;
    else if (item == "writecombined")
      flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
    else
      throw UsageError(std::string(source) + ": unknown flag " + quote_input(item) +
                       " (flags: portable, devicemap, writecombined, or none)");
    start = comma + 1;
  }
  return flags;
}

std::vector<AllocatorKind> allocators_for(Backend b) {
  if (b == Backend::device) return {AllocatorKind::pool, AllocatorKind::raw, AllocatorKind::stream};
  return {AllocatorKind::pool, AllocatorKind::raw};
}

std::string allocator_label(Backend b, AllocatorKind k) {
  if (k == AllocatorKind::pool) return "pool";
  if (k == AllocatorKind::stream) return "cuMemAllocAsync";
  switch (b) {
    case Backend::device:
      return "cuMemAlloc";
    case Backend::pinned:
      return "cuMemHostAlloc";
    case Backend::host:
      return "malloc";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Validation and workloads

void validate(const Config& c) {
  auto size_check = [](std::uint64_t v, const char* flag) {
    if (v == 0) throw UsageError(std::string(flag) + ": a request must be at least 1 byte");
    if (v > kMaxRequestBytes)
      throw UsageError(std::string(flag) + " " + format_bytes(v) +
                       ": absurd, larger than the 128 TiB a process can address");
  };
  if (c.distribution == SizeDistribution::fixed) {
    size_check(c.size, "--size");
  } else {
    size_check(c.min_size, "--min-size");
    size_check(c.max_size, "--max-size");
    if (c.min_size > c.max_size)
      throw UsageError("--min-size " + format_bytes(c.min_size) + " is larger than --max-size " +
                       format_bytes(c.max_size));
  }
  if (c.live == 0 || c.live > kMaxLive)
    throw UsageError("--live " + std::to_string(c.live) + ": must be 1.." +
                     std::to_string(kMaxLive));
  if (c.threads == 0 || c.threads > kMaxThreads)
    throw UsageError("--threads " + std::to_string(c.threads) + ": must be 1.." +
                     std::to_string(kMaxThreads));
  if (!c.iterations && !c.duration_s)
    throw UsageError("bench-pool: give --iterations or --duration");
  if (c.iterations && *c.iterations == 0) throw UsageError("--iterations 0: must be at least 1");
  if (c.duration_s && !(*c.duration_s > 0 && *c.duration_s <= 3600))
    throw UsageError("--duration " + std::to_string(*c.duration_s) +
                     ": must be more than 0 and at most 3600 seconds");
  if (c.pool.leading_bits_in_bin_id > BinRule::kMaxLeadingBits)
    throw UsageError("--leading-bits " + std::to_string(c.pool.leading_bits_in_bin_id) +
                     ": must be 0.." + std::to_string(BinRule::kMaxLeadingBits));
  if (c.pool.small_block_bytes < 1 || c.pool.small_block_bytes > BinRule::kMaxSmallBlockBytes)
    throw UsageError("--small-block " + std::to_string(c.pool.small_block_bytes) +
                     ": must be 1 B..1 MiB");
  if (c.pool.shards > 256)
    throw UsageError("--shards " + std::to_string(c.pool.shards) + ": must be 0..256");
  if (c.host_alloc_flags & ~PageLockedAllocator::kValidFlags)
    throw UsageError("bench-pool: unknown page-locked allocation flags");
  const auto offered = allocators_for(c.backend);
  for (AllocatorKind k : c.allocators)
    if (std::find(offered.begin(), offered.end(), k) == offered.end())
      throw UsageError("--allocators: '" + std::string(name(k)) + "' is not offered by the " +
                       std::string(name(c.backend)) + " backend (it offers pool, raw" +
                       (c.backend == Backend::device ? ", stream" : "") + ")");
}

namespace {

// splitmix64: a small, fast generator whose output is the same everywhere.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n >= 1), by multiply-shift.
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

std::size_t stream_steps(const Config& c) {
  std::size_t steps = kMaxStreamSteps;
  if (c.iterations) steps = static_cast<std::size_t>(std::min<std::uint64_t>(steps, *c.iterations));
  if (c.interleaving == Interleaving::lifo) {
    // Whole rounds, so that rounds line up with the stream when it is cycled.
    steps = std::max<std::size_t>(c.live, steps / c.live * c.live);
  }
  return std::max<std::size_t>(steps, 1);
}

}  // namespace

Workload make_workload(const Config& c, unsigned thread) {
  Workload w;
  const std::size_t steps = stream_steps(c);
  Rng rng{c.seed * 0x2545f4914f6cdd1dull + thread + 1};
  w.sizes.resize(steps);
  const double log_min = std::log(static_cast<double>(c.min_size));
  const double log_max = std::log(static_cast<double>(c.max_size) + 1.0);
  for (auto& s : w.sizes) {
    switch (c.distribution) {
      case SizeDistribution::fixed:
        s = c.size;
        break;
      case SizeDistribution::uniform:
        s = c.min_size + rng.below(c.max_size - c.min_size + 1);
        break;
      case SizeDistribution::log_uniform: {
        const double v = std::exp(log_min + rng.unit() * (log_max - log_min));
        s = std::clamp(static_cast<std::uint64_t>(v), c.min_size, c.max_size);
        break;
      }
    }
  }
  if (c.interleaving == Interleaving::random) {
    w.victims.resize(steps);
    for (auto& v : w.victims) v = static_cast<std::uint32_t>(rng.below(c.live + 1));
  }
  return w;
}

std::uint64_t peak_live_bytes(const Config& c, const Workload& w, std::uint64_t pairs) {
  const std::size_t n = w.sizes.size();
  if (c.interleaving == Interleaving::lifo) {
    // Rounds of `live` requests, aligned with the stream: the peak is the largest round.
    std::uint64_t peak = 0;
    const std::uint64_t rounds = (pairs + c.live - 1) / c.live;
    const std::uint64_t distinct = std::min<std::uint64_t>(rounds, n / c.live);
    for (std::uint64_t r = 0; r < distinct; ++r) {
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < c.live; ++i) sum += w.sizes[r * c.live + i];
      peak = std::max(peak, sum);
    }
    return peak;
  }
  // Random: the first `live` requests fill the live set (slots 0..live-1), then each step
  // allocates into the empty slot and frees its victim, which becomes the empty slot.
  std::vector<std::uint64_t> slot(c.live + 1, 0);
  std::uint64_t live_bytes = 0;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < c.live; ++i) {
    slot[i] = w.sizes[pos];
    live_bytes += slot[i];
    pos = pos + 1 == n ? 0 : pos + 1;
  }
  std::uint64_t peak = live_bytes;
  std::size_t empty = c.live;
  for (std::uint64_t step = 0; step < pairs; ++step) {
    slot[empty] = w.sizes[pos];
    live_bytes += slot[empty];
    peak = std::max(peak, live_bytes);
    const std::size_t victim = w.victims[pos];
    live_bytes -= slot[victim];
    slot[victim] = 0;
    empty = victim;
    pos = pos + 1 == n ? 0 : pos + 1;
  }
  return peak;
}

RoundingSummary rounding_summary(const Config& c, const std::vector<Workload>& workloads) {
  const BinRule rule(c.pool.leading_bits_in_bin_id, c.pool.small_block_bytes);
  RoundingSummary r;
  for (const auto& w : workloads) {
    for (std::size_t s : w.sizes) {
      const std::size_t block = rule.round_up(s);
      r.requested_bytes += s;
      r.block_bytes += block;
      ++r.requests;
      if (s <= rule.small_block_bytes()) {
        ++r.small_requests;
      } else {
        r.max_overhead_pct = std::max(
            r.max_overhead_pct, 100.0 * static_cast<double>(block - s) / static_cast<double>(s));
      }
    }
  }
  if (r.requested_bytes)
    r.overhead_pct = 100.0 * static_cast<double>(r.block_bytes - r.requested_bytes) /
                     static_cast<double>(r.requested_bytes);
  return r;
}

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  rank = std::clamp<std::size_t>(rank, 1, samples.size());
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   samples.end());
  return samples[rank - 1];
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) break;
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------
// The subjects: each makes a per-thread `Local` with alloc(size) -> Handle and
// release(Handle&) (which empties the handle), and end_batch() outside the timed part.

namespace {

using Clock = std::chrono::steady_clock;

template <class Allocator>
struct PoolSubject {
  MemoryPool<Allocator>* pool;
  const Context* context;  // made current on each thread (null for host)
  struct Local {
    using Handle = PooledAllocation<Allocator>;
    MemoryPool<Allocator>* pool;
    Handle alloc(std::size_t size) { return pool->allocate(size); }
    static void release(Handle& h) noexcept { h.free(); }
    void end_batch() {}
  };
  Local local() const {
    if (context) context->make_current();
    return Local{pool};
  }
};

struct MallocSubject {
  struct Local {
    using Handle = void*;
    Handle alloc(std::size_t size) {
      void* p = std::malloc(size);
      if (p == nullptr)
        throw MemoryError("malloc(" + std::to_string(size) + ") failed: out of host memory");
      return p;
    }
    static void release(Handle& h) noexcept {
      std::free(h);
      h = nullptr;
    }
    void end_batch() {}
  };
  Local local() const { return {}; }
};

struct RawDeviceSubject {
  const Context* context;
  struct Local {
    using Handle = CUdeviceptr;
    Handle alloc(std::size_t size) {
      CUdeviceptr p = 0;
      CUDATOOL_CU(cuMemAlloc, &p, size);
      return p;
    }
    static void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFree(h);
      h = 0;
    }
    void end_batch() {}
  };
  Local local() const {
    context->make_current();
    return {};
  }
};

struct RawPinnedSubject {
  const Context* context;
  unsigned flags;
  struct Local {
    using Handle = void*;
    unsigned flags;
    Handle alloc(std::size_t size) {
      void* p = nullptr;
      CUDATOOL_CU(cuMemHostAlloc, &p, size, flags);
      return p;
    }
    static void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFreeHost(h);
      h = nullptr;
    }
    void end_batch() {}
  };
  Local local() const {
    context->make_current();
    return Local{flags};
  }
};

// A CUDA stream, owned.
class Stream {
 public:
  Stream() { CUDATOOL_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING); }
  ~Stream() {
    if (stream_) driver::api().cuStreamDestroy(stream_);
  }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&&) = delete;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

struct StreamOrderedSubject {
  const Context* context;
  struct Local {
    using Handle = CUdeviceptr;
    Stream stream;
    Handle alloc(std::size_t size) {
      CUdeviceptr p = 0;
      CUDATOOL_CU(cuMemAllocAsync, &p, size, stream.get());
      return p;
    }
    void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFreeAsync(h, stream.get());
      h = 0;
    }
    // Untimed: keeps the stream's queue from growing without bound.
    void end_batch() { CUDATOOL_CU(cuStreamSynchronize, stream.get()); }
    ~Local() {
      if (stream.get()) driver::api().cuStreamSynchronize(stream.get());
    }
    Local() = default;
    Local(Local&&) = default;
  };
  Local local() const {
    context->make_current();
    return Local{};
  }
};

// The driver's default memory pool of a device, with its release threshold raised for
// the run (so that it keeps its memory between frees) and restored, trimmed, after.
class DefaultPoolGuard {
 public:
  explicit DefaultPoolGuard(const Device& device) {
    CUDATOOL_CU(cuDeviceGetDefaultMemPool, &pool_, device.handle());
    cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
    CUDATOOL_CU(cuMemPoolSetAttribute, pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  }
  ~DefaultPoolGuard() {
    const auto& api = driver::api();
    cuuint64_t threshold = 0;
    api.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
    api.cuMemPoolTrimTo(pool_, 0);
  }
  DefaultPoolGuard(const DefaultPoolGuard&) = delete;
  DefaultPoolGuard& operator=(const DefaultPoolGuard&) = delete;

 private:
  CUmemoryPool pool_ = nullptr;
};

// All threads start the timed part together; a thread that failed opens the gate too.
class StartGate {
 public:
  explicit StartGate(unsigned n) : n_(n) {}
  // False when another thread failed.
  bool arrive() {
    std::unique_lock lock(m_);
    if (++waiting_ == n_) {
      open_ = true;
      start_ = Clock::now();
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return open_ || failed_; });
    }
    return !failed_;
  }
  void fail() {
    std::lock_guard lock(m_);
    failed_ = true;
    cv_.notify_all();
  }
  Clock::time_point start() {
    std::lock_guard lock(m_);
    return start_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned n_;
  unsigned waiting_ = 0;
  bool open_ = false;
  bool failed_ = false;
  Clock::time_point start_;
};

// One per thread, on its own cache lines: written after every batch.
struct alignas(64) ThreadOutput {
  std::vector<double> samples;
  std::uint64_t timed_pairs = 0;
  std::uint64_t all_pairs = 0;  // warm-up included
  std::uint64_t batch_pairs = 0;
  double timed_ns = 0;
  Clock::time_point end;
  std::uint64_t peak_requested = 0;
  std::exception_ptr error;
};

struct Shared {
  const Config* config;
  StartGate gate;
  std::atomic<bool> stop{false};
  const Progress* progress;
  AllocatorResult* current;
  std::size_t index, count;
};

constexpr double kBatchTargetNs = 2000;

// One thread's run of a subject over its workload.
template <class Local>
void run_thread(Local& local, const Workload& w, Shared& shared, ThreadOutput& out, bool reports) {
  const Config& c = *shared.config;
  using Handle = typename Local::Handle;
  const std::size_t n = w.sizes.size();
  const bool lifo = c.interleaving == Interleaving::lifo;
  const std::size_t unit_pairs = lifo ? c.live : 1;
  std::vector<Handle> slots(c.live + 1);
  std::size_t pos = 0, empty = c.live;

  auto release_all = [&] {
    for (auto& h : slots) local.release(h);
  };
  // Runs `units` units (rounds for lifo, steps for random).
  auto run_units = [&](std::uint64_t units) {
    if (lifo) {
      for (std::uint64_t u = 0; u < units; ++u) {
        for (std::size_t i = 0; i < c.live; ++i) {
          slots[i] = local.alloc(w.sizes[pos]);
          pos = pos + 1 == n ? 0 : pos + 1;
        }
        for (std::size_t i = c.live; i-- > 0;) local.release(slots[i]);
      }
    } else {
      for (std::uint64_t u = 0; u < units; ++u) {
        slots[empty] = local.alloc(w.sizes[pos]);
        const std::size_t victim = w.victims[pos];
        local.release(slots[victim]);
        empty = victim;
        pos = pos + 1 == n ? 0 : pos + 1;
      }
    }
  };

  try {
    if (!lifo) {
      for (std::size_t i = 0; i < c.live; ++i) {
        slots[i] = local.alloc(w.sizes[pos]);
        pos = pos + 1 == n ? 0 : pos + 1;
      }
    }
    // Warm-up: at least one unit, then up to `warmup` pairs within a tenth of the
    // duration (or a second).
    const double warm_limit_s = c.duration_s ? *c.duration_s / 10 : 1.0;
    const std::uint64_t warm_units =
        std::max<std::uint64_t>(1, (c.warmup + unit_pairs - 1) / unit_pairs);
    const auto w0 = Clock::now();
    std::uint64_t warmed = 0;
    while (warmed < warm_units) {
      run_units(1);
      ++warmed;
      local.end_batch();
      if (Clock::now() - w0 > std::chrono::duration<double>(warm_limit_s)) break;
    }
    // Calibration: chunks of doubling size until one takes 20 us (or has 2^16 units)
    // give a first estimate; where a unit is quick, the median of nine chunks of about
    // 20 us each refines it, so that a few slow units (a cold bin, a preempted thread) do
    // not make the batches too small.
    auto time_units = [&](std::uint64_t units) {
      const auto t0 = Clock::now();
      run_units(units);
      const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      local.end_batch();
      warmed += units;
      return ns;
    };
    double unit_ns = 0;
    for (std::uint64_t chunk = 1;; chunk *= 2) {
      const double ns = time_units(chunk);
      unit_ns = ns / static_cast<double>(chunk);
      if (ns >= 20000 || chunk >= 65536) break;
    }
    if (unit_ns < kBatchTargetNs) {
      const auto chunk = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(20000 / unit_ns));
      std::vector<double> per_unit;
      for (int i = 0; i < 9; ++i)
        per_unit.push_back(time_units(chunk) / static_cast<double>(chunk));
      unit_ns = quantile(per_unit, 0.5);
    }
    std::uint64_t batch_units = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(kBatchTargetNs / std::max(unit_ns, 1.0)));
    std::uint64_t total_units = std::numeric_limits<std::uint64_t>::max();
    if (c.iterations) {
      total_units = (*c.iterations + unit_pairs - 1) / unit_pairs;
      // At least ~100 samples where the count allows.
      batch_units =
          std::clamp<std::uint64_t>(batch_units, 1, std::max<std::uint64_t>(1, total_units / 100));
    }
    out.batch_pairs = batch_units * unit_pairs;
    out.all_pairs = warmed * unit_pairs;

    if (!shared.gate.arrive()) {
      release_all();
      return;
    }
    const auto start = shared.gate.start();
    const auto deadline = c.duration_s ? start + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(*c.duration_s))
                                       : Clock::time_point::max();
    if (c.duration_s) {
      const double expected = *c.duration_s * 1e9 / std::max(unit_ns, 1.0);
      out.samples.reserve(static_cast<std::size_t>(std::min(expected / batch_units + 16, 1e7)));
    } else {
      out.samples.reserve(static_cast<std::size_t>(
          std::min<std::uint64_t>(total_units / batch_units + 2, 10000000)));
    }
    std::uint64_t done = 0;
    auto last_report = start;
    Clock::time_point t1 = start;
    while (done < total_units) {
      const std::uint64_t units = std::min(batch_units, total_units - done);
      const auto t0 = Clock::now();
      run_units(units);
      t1 = Clock::now();
      const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
      out.timed_ns += ns;
      out.samples.push_back(ns / static_cast<double>(units * unit_pairs));
      done += units;
      local.end_batch();
      if (t1 >= deadline || shared.stop.load(std::memory_order_relaxed)) break;
      if (reports && *shared.progress && t1 - last_report > std::chrono::milliseconds(100)) {
        last_report = t1;
        double fraction = 0;
        if (c.iterations) fraction = static_cast<double>(done) / static_cast<double>(total_units);
        if (c.duration_s)
          fraction =
              std::max(fraction, std::chrono::duration<double>(t1 - start).count() / *c.duration_s);
        (*shared.progress)(*shared.current, shared.index, shared.count, std::min(fraction, 1.0));
      }
    }
    out.end = t1;
    out.timed_pairs = done * unit_pairs;
    out.all_pairs += out.timed_pairs;
    release_all();
    out.peak_requested = peak_live_bytes(c, w, out.all_pairs);
  } catch (...) {
    release_all();
    out.error = std::current_exception();
    shared.stop.store(true);
    shared.gate.fail();
  }
}

template <class Subject>
void run_subject(const Subject& subject, const Config& c, const std::vector<Workload>& workloads,
                 AllocatorResult& result, const Progress& progress, std::size_t index,
                 std::size_t count) {
  Shared shared{&c, StartGate(c.threads), {}, &progress, &result, index, count};
  std::vector<ThreadOutput> outputs(c.threads);
  std::vector<std::thread> threads;
  threads.reserve(c.threads);
  std::string start_failure;
  for (unsigned t = 0; t < c.threads; ++t) {
    try {
      threads.emplace_back([&, t] {
        try {
          auto local = subject.local();
          run_thread(local, workloads[t], shared, outputs[t], t == 0);
        } catch (...) {
          outputs[t].error = std::current_exception();
          shared.stop.store(true);
          shared.gate.fail();
        }
      });
    } catch (const std::system_error& e) {
      // No thread (a process limit, RLIMIT_NPROC): stop the ones started, which wait at
      // the gate or run, and join them before reporting; a joinable std::thread must
      // never be destroyed.
      start_failure = "bench-pool: cannot start thread " + std::to_string(t + 1) + " of " +
                      std::to_string(c.threads) + ": " + e.what() +
                      " (a limit on processes or threads; try fewer --threads)";
      shared.stop.store(true);
      shared.gate.fail();
      break;
    }
  }
  for (auto& th : threads) th.join();
  if (!start_failure.empty()) throw RuntimeError(start_failure);
  for (auto& o : outputs)
    if (o.error) std::rethrow_exception(o.error);

  std::vector<double> samples;
  double timed_ns = 0;
  auto end = shared.gate.start();
  for (auto& o : outputs) {
    samples.insert(samples.end(), o.samples.begin(), o.samples.end());
    result.pairs += o.timed_pairs;
    result.peak_requested_bytes += o.peak_requested;
    timed_ns += o.timed_ns;
    end = std::max(end, o.end);
  }
  result.batch_pairs = outputs[0].batch_pairs;
  result.samples = samples.size();
  result.seconds = std::chrono::duration<double>(end - shared.gate.start()).count();
  result.median_ns = quantile(samples, 0.5);
  result.p99_ns = quantile(samples, 0.99);
  result.min_ns = samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
  result.mean_ns = result.pairs ? timed_ns / static_cast<double>(result.pairs) : 0;
  result.throughput = result.seconds > 0 ? static_cast<double>(result.pairs) / result.seconds : 0;
  if (progress) progress(result, index, count, 1.0);
}

template <class Allocator>
void run_pool(Allocator allocator, const Context* context, const Config& c,
              const std::vector<Workload>& workloads, AllocatorResult& result,
              const Progress& progress, std::size_t index, std::size_t count) {
  MemoryPool<Allocator> pool(std::move(allocator), c.pool);
  run_subject(PoolSubject<Allocator>{&pool, context}, c, workloads, result, progress, index, count);
  const PoolStatistics stats = pool.statistics();
  result.final_statistics = stats;
  result.peak_held_bytes = stats.peak_managed_bytes;
  if (result.peak_requested_bytes)
    result.overhead_pct = 100.0 * (static_cast<double>(stats.peak_managed_bytes) /
                                       static_cast<double>(result.peak_requested_bytes) -
                                   1.0);
}

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

}  // namespace

Result run(const Config& config, std::shared_ptr<const Context> context, const Progress& progress) {
  validate(config);
  Result r;
  r.config = config;
  if (r.config.allocators.empty()) r.config.allocators = allocators_for(config.backend);
  const Config& c = r.config;
  r.cpu = cpu_model();
  r.cpus = std::max(1u, std::thread::hardware_concurrency());
  if (c.backend != Backend::host) {
    if (!context)
      throw LogicError("bench-pool: the " + std::string(name(c.backend)) +
                       " backend needs a CUDA context");
    r.device_ordinal = context->device().ordinal();
    r.device_name = context->device().name();
    r.device_memory = context->device().total_memory();
  }

  // A request no allocator could serve fails before anything runs.
  const std::uint64_t largest = c.distribution == SizeDistribution::fixed ? c.size : c.max_size;
  const std::uint64_t limit = c.backend == Backend::device ? r.device_memory : physical_memory();
  if (limit && largest > limit) {
    const std::string where = c.backend == Backend::device
                                  ? "device " + std::to_string(*r.device_ordinal) + "'s memory"
                                  : "this machine's memory";
    throw MemoryError("out of memory: a request of " + format_bytes(largest) + " (" +
                      std::to_string(largest) + " bytes) is larger than " + where + " (" +
                      format_bytes(limit) + ")");
  }

  std::vector<Workload> workloads;
  workloads.reserve(c.threads);
  for (unsigned t = 0; t < c.threads; ++t) workloads.push_back(make_workload(c, t));
  r.rounding = rounding_summary(c, workloads);

  const std::size_t count = c.allocators.size();
  for (std::size_t i = 0; i < count; ++i) {
    AllocatorResult a;
    a.kind = c.allocators[i];
    a.label = allocator_label(c.backend, a.kind);
    if (progress) progress(a, i, count, 0.0);
    const Context* ctx = context.get();
    switch (c.backend) {
      case Backend::host:
        if (a.kind == AllocatorKind::pool)
          run_pool(HostAllocator{}, nullptr, c, workloads, a, progress, i, count);
        else
          run_subject(MallocSubject{}, c, workloads, a, progress, i, count);
        break;
      case Backend::device:
        if (a.kind == AllocatorKind::pool) {
          run_pool(DeviceAllocator(context), ctx, c, workloads, a, progress, i, count);
        } else if (a.kind == AllocatorKind::raw) {
          run_subject(RawDeviceSubject{ctx}, c, workloads, a, progress, i, count);
        } else {
          ctx->make_current();
          DefaultPoolGuard guard(ctx->device());
          run_subject(StreamOrderedSubject{ctx}, c, workloads, a, progress, i, count);
        }
        break;
      case Backend::pinned:
        if (a.kind == AllocatorKind::pool)
          run_pool(PageLockedAllocator(context, c.host_alloc_flags), ctx, c, workloads, a, progress,
                   i, count);
        else
          run_subject(RawPinnedSubject{ctx, c.host_alloc_flags}, c, workloads, a, progress, i,
                      count);
        break;
    }
    r.allocators.push_back(std::move(a));
  }
  const auto raw =
      std::find_if(r.allocators.begin(), r.allocators.end(),
                   [](const AllocatorResult& a) { return a.kind == AllocatorKind::raw; });
  if (raw != r.allocators.end())
    for (auto& a : r.allocators)
      if (a.median_ns > 0) a.speedup_vs_raw = raw->median_ns / a.median_ns;
  return r;
}

}  // namespace cudatool::bench
