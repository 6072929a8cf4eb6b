// Internal: one thread's timed run of a pool-benchmark subject over its workload (warm-up,
// calibration of the batch size, then timed batches until the count or the deadline), and
// what the threads of one allocator's run share: the gate that starts them together, the
// stop flag, the progress callback.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <vector>

#include "cudatool/bench/pool_benchmark.hpp"

namespace cudatool::bench::detail {

using Clock = std::chrono::steady_clock;

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

// How the timed part runs: units per batch (each batch one sample), and units in all (the
// count asked for, or no end but the deadline).
struct BatchPlan {
  std::uint64_t batch_units = 1;
  std::uint64_t total_units = std::numeric_limits<std::uint64_t>::max();
};

// Batches of about kBatchTargetNs at the calibrated `unit_ns`; with a count, at least ~100
// samples where the count allows.
inline BatchPlan batch_plan(const Config& c, double unit_ns, std::size_t unit_pairs) {
  BatchPlan plan;
  plan.batch_units = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(kBatchTargetNs / std::max(unit_ns, 1.0)));
  if (c.iterations) {
    plan.total_units = (*c.iterations + unit_pairs - 1) / unit_pairs;
    plan.batch_units = std::clamp<std::uint64_t>(
        plan.batch_units, 1, std::max<std::uint64_t>(1, plan.total_units / 100));
  }
  return plan;
}

// Room for the samples the run will take, so that no sample is timed with a reallocation.
inline std::size_t expected_samples(const Config& c, const BatchPlan& plan, double unit_ns) {
  if (c.duration_s) {
    const double expected = *c.duration_s * 1e9 / std::max(unit_ns, 1.0);
    return static_cast<std::size_t>(std::min(expected / plan.batch_units + 16, 1e7));
  }
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(plan.total_units / plan.batch_units + 2, 10000000));
}

// How far the timed part is, 0 to 1: by the count or the duration, whichever is further.
inline double progress_fraction(const Config& c, std::uint64_t done, const BatchPlan& plan,
                                Clock::duration elapsed) {
  double fraction = 0;
  if (c.iterations) fraction = static_cast<double>(done) / static_cast<double>(plan.total_units);
  if (c.duration_s)
    fraction = std::max(fraction, std::chrono::duration<double>(elapsed).count() / *c.duration_s);
  return std::min(fraction, 1.0);
}

// One thread's run of a subject over its workload: the allocations it holds, where it is in
// the workload, and the steps of its run.
template <class Local>
class ThreadRun {
 public:
  ThreadRun(Local& local, const Workload& w, const Config& c)
      : local_(local),
        w_(w),
        c_(c),
        n_(w.sizes.size()),
        lifo_(c.interleaving == Interleaving::lifo),
        unit_pairs_(lifo_ ? c.live : 1),
        slots_(c.live + 1),
        empty_(c.live) {}

  // Pairs per unit: a round of `live` for lifo, one step for random.
  std::size_t unit_pairs() const { return unit_pairs_; }
  // Units run before the timed part (warm-up and calibration).
  std::uint64_t warmed() const { return warmed_; }

  void release_all() {
    for (auto& h : slots_) local_.release(h);
  }

  // Random interleaving starts with `live` allocations held.
  void fill() {
    if (lifo_) return;
    for (std::size_t i = 0; i < c_.live; ++i) {
      slots_[i] = local_.alloc(w_.sizes[pos_]);
      pos_ = next(pos_);
    }
  }

  // Warm-up: at least one unit, then up to `warmup` pairs within a tenth of the duration
  // (or a second).
  void warm_up() {
    const double warm_limit_s = c_.duration_s ? *c_.duration_s / 10 : 1.0;
    const std::uint64_t warm_units =
        std::max<std::uint64_t>(1, (c_.warmup + unit_pairs_ - 1) / unit_pairs_);
    const auto w0 = Clock::now();
    while (warmed_ < warm_units) {
      run_units(1);
      ++warmed_;
      local_.end_batch();
      if (Clock::now() - w0 > std::chrono::duration<double>(warm_limit_s)) break;
    }
  }

  // Calibration, the time of one unit: chunks of doubling size until one takes 20 us (or
  // has 2^16 units) give a first estimate; where a unit is quick, the median of nine chunks
  // of about 20 us each refines it, so that a few slow units (a cold bin, a preempted
  // thread) do not make the batches too small.
  double calibrate() {
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
    return unit_ns;
  }

  // The timed part, from the gate's start: batches until the count, the deadline or
  // another thread's failure, each batch a sample of its time per pair; `reports`: this
  // thread calls the progress callback, every 100 ms at most.
  void timed(Shared& shared, ThreadOutput& out, const BatchPlan& plan, bool reports) {
    const auto start = shared.gate.start();
    const auto deadline = c_.duration_s ? start + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(*c_.duration_s))
                                        : Clock::time_point::max();
    std::uint64_t done = 0;
    auto last_report = start;
    Clock::time_point t1 = start;
    while (done < plan.total_units) {
      const std::uint64_t units = std::min(plan.batch_units, plan.total_units - done);
      const auto t0 = Clock::now();
      run_units(units);
      t1 = Clock::now();
      const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
      out.timed_ns += ns;
      out.samples.push_back(ns / static_cast<double>(units * unit_pairs_));
      done += units;
      local_.end_batch();
      if (t1 >= deadline || shared.stop.load(std::memory_order_relaxed)) break;
      if (reports && *shared.progress && t1 - last_report > std::chrono::milliseconds(100)) {
        last_report = t1;
        (*shared.progress)(*shared.current, shared.index, shared.count,
                           progress_fraction(c_, done, plan, t1 - start));
      }
    }
    out.end = t1;
    out.timed_pairs = done * unit_pairs_;
  }

 private:
  using Handle = typename Local::Handle;

  // The workload's place after `pos` (it wraps around).
  std::size_t next(std::size_t pos) const { return pos + 1 == n_ ? 0 : pos + 1; }

  // Runs `units` units (rounds for lifo, steps for random). The places are locals in the
  // loop, which the allocator's calls cannot change: they stay in registers.
  void run_units(std::uint64_t units) {
    std::size_t pos = pos_, empty = empty_;
    if (lifo_) {
      for (std::uint64_t u = 0; u < units; ++u) {
        for (std::size_t i = 0; i < c_.live; ++i) {
          slots_[i] = local_.alloc(w_.sizes[pos]);
          pos = next(pos);
        }
        for (std::size_t i = c_.live; i-- > 0;) local_.release(slots_[i]);
      }
    } else {
      for (std::uint64_t u = 0; u < units; ++u) {
        slots_[empty] = local_.alloc(w_.sizes[pos]);
        const std::size_t victim = w_.victims[pos];
        local_.release(slots_[victim]);
        empty = victim;
        pos = next(pos);
      }
    }
    pos_ = pos;
    empty_ = empty;
  }

  // Runs `units` units as one calibration chunk, counted as warmed: its time in ns.
  double time_units(std::uint64_t units) {
    const auto t0 = Clock::now();
    run_units(units);
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    local_.end_batch();
    warmed_ += units;
    return ns;
  }

  Local& local_;
  const Workload& w_;
  const Config& c_;
  const std::size_t n_;  // the workload's length
  const bool lifo_;
  const std::size_t unit_pairs_;
  std::vector<Handle> slots_;
  std::size_t pos_ = 0;  // the next allocation's place in the workload
  std::size_t empty_;    // random: the slot free for the next allocation
  std::uint64_t warmed_ = 0;
};

// One thread's run of a subject over its workload: warm-up, calibration of the batch size,
// then, once every thread is there, the timed batches. A failure stops the other threads.
template <class Local>
void run_thread(Local& local, const Workload& w, Shared& shared, ThreadOutput& out, bool reports) {
  const Config& c = *shared.config;
  ThreadRun<Local> run(local, w, c);
  try {
    run.fill();
    run.warm_up();
    const double unit_ns = run.calibrate();
    const BatchPlan plan = batch_plan(c, unit_ns, run.unit_pairs());
    out.batch_pairs = plan.batch_units * run.unit_pairs();
    out.all_pairs = run.warmed() * run.unit_pairs();
    if (!shared.gate.arrive()) {
      run.release_all();
      return;
    }
    out.samples.reserve(expected_samples(c, plan, unit_ns));
    run.timed(shared, out, plan, reports);
    out.all_pairs += out.timed_pairs;
    run.release_all();
    out.peak_requested = peak_live_bytes(c, w, out.all_pairs);
  } catch (...) {
    run.release_all();
    out.error = std::current_exception();
    shared.stop.store(true);
    shared.gate.fail();
  }
}

}  // namespace cudatool::bench::detail
