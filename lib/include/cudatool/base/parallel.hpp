// Work spread over threads: a fixed set of threads that take job indices from an atomic
// counter, so that each job writes into its own pre-sized result slot, nothing is locked
// and the output order is the callers' own. Used by the binary readers (one job per
// fatbin entry, per chunk of a scanned section) and by the renderers of large documents.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace cudatool {

// The CPUs this process may run on (its affinity mask: taskset, a batch scheduler's
// cpuset), which may be far fewer than the machine has.
inline unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// The number of threads `requested` means: 0 for one per usable CPU; never more than
// `jobs` (there is no use for them) and never less than 1.
inline unsigned worker_count(unsigned requested, std::size_t jobs) {
  unsigned n = requested != 0 ? requested : usable_cpus();
  if (n == 0) n = 1;
  if (jobs < n) n = static_cast<unsigned>(std::max<std::size_t>(jobs, 1));
  return n;
}

// Runs job(i) -- or job(i, worker), worker < worker_count(threads, count) naming the thread,
// for per-thread state -- for every i in [0, count) on worker_count(threads, count) threads. Where
// `poll` is given, the calling thread does no job but calls poll() about every
// `poll_interval` until all are done (a progress bar; it returns as soon as they are); otherwise it
// is one of the workers. A thread that cannot be created (a process limit) leaves its share to the
// others. The first exception a job throws is rethrown here once every thread has stopped; the jobs
// not yet started are then not run.
template <class Job>
void parallel_for(std::size_t count, unsigned threads, Job&& job,
                  const std::function<void()>& poll = {},
                  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(100)) {
  if (count == 0) return;
  std::atomic<std::size_t> next{0};
  std::atomic<unsigned> running{0};  // spawned threads still taking jobs
  std::mutex done_mutex;
  std::condition_variable done;  // signalled when the last spawned thread stops
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&](unsigned worker) {
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) break;
      try {
        if constexpr (std::is_invocable_v<Job&, std::size_t, unsigned>)
          job(i, worker);
        else
          job(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next.store(count, std::memory_order_relaxed);
      }
    }
  };
  const unsigned n = worker_count(threads, count);
  std::vector<std::thread> pool;
  pool.reserve(n);
  const unsigned spawn = poll ? n : n - 1;
  for (unsigned t = 0; t < spawn; ++t) {
    running.fetch_add(1, std::memory_order_relaxed);
    try {
      pool.emplace_back([&, t] {
        work(t);
        const std::lock_guard<std::mutex> lock(done_mutex);
        if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) done.notify_all();
      });
    } catch (const std::system_error&) {
      running.fetch_sub(1, std::memory_order_relaxed);
      break;  // no more threads: those running (or this one) do the rest
    }
  }
  if (poll && !pool.empty()) {
    std::unique_lock<std::mutex> lock(done_mutex);
    while (running.load(std::memory_order_acquire) > 0) {
      lock.unlock();
      poll();
      lock.lock();
      done.wait_for(lock, poll_interval,
                    [&] { return running.load(std::memory_order_acquire) == 0; });
    }
  } else {
    work(static_cast<unsigned>(pool.size()));
  }
  for (auto& t : pool) t.join();
  if (poll) poll();
  if (failure) std::rethrow_exception(failure);
}

// The same over [0, count) cut into blocks of `block` indices (the last one shorter):
// block(b, begin, end) for the b-th block, each on one thread. For work too small per
// index to be a job of its own (a name to match, a row to render).
template <class Block>
void parallel_for_blocks(std::size_t count, std::size_t block, unsigned threads, Block&& job) {
  parallel_for((count + block - 1) / block, threads,
               [&](std::size_t b) { job(b, b * block, std::min(count, (b + 1) * block)); });
}

}  // namespace cudatool
