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

}  // namespace cudatool::bench::detail
