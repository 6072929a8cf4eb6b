// The pool benchmark's engine: each allocator of the backend in turn, its threads started
// together (pool_benchmark_thread.hpp) over the same workloads, their timings merged into
// one AllocatorResult.
#include "cudatool/bench/pool_benchmark.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench/pool_benchmark_subjects.hpp"
#include "bench/pool_benchmark_thread.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/memory/allocators.hpp"

namespace cudatool::bench {

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

namespace {

using namespace detail;

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
      start_failure = c.names.benchmark + ": cannot start thread " + std::to_string(t + 1) +
                      " of " + std::to_string(c.threads) + ": " + e.what() +
                      " (a limit on processes or threads; try fewer " + c.names.threads + ")";
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
      throw LogicError(c.names.benchmark + ": the " + std::string(name(c.backend)) +
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
