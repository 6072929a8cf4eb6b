// The pool benchmark's names (backends, workloads, orders, allocators), their parsers, and
// the validation of a Config: what can run, refused before anything does.
#include <algorithm>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/bench/pool_benchmark.hpp"
#include "cudatool/memory/allocators.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::bench {

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
  for (const std::string& item : split_list(text, source, "portable,devicemap")) {
    if (item == "portable")
      flags |= CU_MEMHOSTALLOC_PORTABLE;
    else if (item == "devicemap")
      flags |= CU_MEMHOSTALLOC_DEVICEMAP;
    else if (item == "writecombined")
      flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
    else
      throw UsageError(std::string(source) + ": unknown flag " + quote_input(item) +
                       " (flags: portable, devicemap, writecombined, or none)");
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

void validate(const Config& c) {
  const ConfigNames& n = c.names;
  auto size_check = [](std::uint64_t v, const std::string& source) {
    if (v == 0) throw UsageError(source + ": a request must be at least 1 byte");
    if (v > kMaxRequestBytes)
      throw UsageError(source + " " + format_bytes(v) +
                       ": absurd, larger than the 128 TiB a process can address");
  };
  if (c.distribution == SizeDistribution::fixed) {
    size_check(c.size, n.size);
  } else {
    size_check(c.min_size, n.min_size);
    size_check(c.max_size, n.max_size);
    if (c.min_size > c.max_size)
      throw UsageError(n.min_size + " " + format_bytes(c.min_size) + " is larger than " +
                       n.max_size + " " + format_bytes(c.max_size));
  }
  if (c.live == 0 || c.live > kMaxLive)
    throw UsageError(n.live + " " + std::to_string(c.live) + ": must be 1.." +
                     std::to_string(kMaxLive));
  if (c.threads == 0 || c.threads > kMaxThreads)
    throw UsageError(n.threads + " " + std::to_string(c.threads) + ": must be 1.." +
                     std::to_string(kMaxThreads));
  if (!c.iterations && !c.duration_s)
    throw UsageError(n.benchmark + ": give " + n.iterations + " or " + n.duration);
  if (c.iterations && *c.iterations == 0) throw UsageError(n.iterations + " 0: must be at least 1");
  if (c.duration_s && !(*c.duration_s > 0 && *c.duration_s <= 3600))
    throw UsageError(n.duration + " " + std::to_string(*c.duration_s) +
                     ": must be more than 0 and at most 3600 seconds");
  if (c.pool.leading_bits_in_bin_id > BinRule::kMaxLeadingBits)
    throw UsageError(n.leading_bits + " " + std::to_string(c.pool.leading_bits_in_bin_id) +
                     ": must be 0.." + std::to_string(BinRule::kMaxLeadingBits));
  if (c.pool.small_block_bytes < 1 || c.pool.small_block_bytes > BinRule::kMaxSmallBlockBytes)
    throw UsageError(n.small_block + " " + std::to_string(c.pool.small_block_bytes) +
                     ": must be 1 B..1 MiB");
  if (c.pool.shards > 256)
    throw UsageError(n.shards + " " + std::to_string(c.pool.shards) + ": must be 0..256");
  if (c.host_alloc_flags & ~PageLockedAllocator::kValidFlags)
    throw UsageError(n.benchmark + ": unknown page-locked allocation flags");
  const auto offered = allocators_for(c.backend);
  for (AllocatorKind k : c.allocators)
    if (std::find(offered.begin(), offered.end(), k) == offered.end())
      throw UsageError(n.allocators + ": '" + std::string(name(k)) + "' is not offered by the " +
                       std::string(name(c.backend)) + " backend (it offers pool, raw" +
                       (c.backend == Backend::device ? ", stream" : "") + ")");
}

}  // namespace cudatool::bench
