#include "cudatool/occupancy/occupancy.hpp"

#include <cuda_occupancy.h>

#include <algorithm>
#include <climits>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/units.hpp"

namespace cudatool {
namespace {

// PTX has 16 named barriers per block (bar.sync 0..15).
constexpr int kMaxBlockBarriers = 16;

constexpr OccupancyLimit kLimitOrder[] = {OccupancyLimit::device, OccupancyLimit::warps,
                                          OccupancyLimit::regs, OccupancyLimit::smem,
                                          OccupancyLimit::barriers};

cudaOccDeviceProp occ_device(const DeviceProperties& p) {
  cudaOccDeviceProp prop;
  prop.computeMajor = p.compute_capability.major;
  prop.computeMinor = p.compute_capability.minor;
  prop.maxThreadsPerBlock = p.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = p.max_threads_per_multiprocessor;
  prop.regsPerBlock = p.registers_per_block;
  prop.regsPerMultiprocessor = p.registers_per_multiprocessor;
  prop.warpSize = p.warp_size;
  prop.sharedMemPerBlock = p.shared_memory_per_block;
  prop.sharedMemPerMultiprocessor = p.shared_memory_per_multiprocessor;
  // Only the minimum grid size depends on it, and the calculator multiplies it in int
  // arithmetic: one SM here, and suggest_block_size multiplies in 64 bits itself.
  prop.numSms = 1;
  prop.sharedMemPerBlockOptin = p.shared_memory_per_block_optin;
  prop.reservedSharedMemPerBlock = p.reserved_shared_memory_per_block;
  return prop;
}

// All shared memory is dynamic and the kernel opted in to exactly what it uses: the
// calculator then applies the opt-in limit only when the block needs more than the
// default, which is what a kernel that calls cuFuncSetAttribute sees.
cudaOccFuncAttributes occ_function(const DeviceProperties& p, std::size_t shared_mem, int registers,
                                   int block_barriers) {
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock = p.max_threads_per_block;
  attributes.numRegs = registers;
  attributes.sharedSizeBytes = 0;
  attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
  attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attributes.maxDynamicSharedSizeBytes = shared_mem;
  attributes.numBlockBarriers = block_barriers;
  attributes.virtualResourceCount = 0;
  return attributes;
}

[[noreturn]] void calculator_failed(const DeviceProperties& p, cudaOccError status) {
  throw Error("cuda_occupancy.h cannot compute occupancy for " + p.name + " (compute capability " +
              p.compute_capability.str() + "): " +
              (status == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "unknown device" : "invalid input"));
}

std::optional<int> limit_or_none(int limit) {
  return limit == INT_MAX ? std::nullopt : std::optional<int>(limit);
}

void require_known(const DeviceData& devdata) {
  if (auto unknown = occupancy_unknown(devdata)) throw UnknownValueError(std::move(*unknown));
}

void validate(const DeviceData& devdata, int threads, std::size_t shared_mem, int registers,
              int block_barriers) {
  require_known(devdata);
  const auto& p = devdata.properties();
  if (threads < 1)
    throw UsageError("threads per block " + std::to_string(threads) + ": a block needs at least 1");
  if (threads > p.max_threads_per_block)
    throw UsageError("threads per block " + std::to_string(threads) + " is above the maximum of " +
                     std::to_string(p.max_threads_per_block) + " on " + p.name);
  if (registers < 0)
    throw UsageError("registers per thread " + std::to_string(registers) + ": cannot be negative");
  if (registers > p.max_registers_per_thread)
    throw UsageError("registers per thread " + std::to_string(registers) +
                     " is above the maximum of " + std::to_string(p.max_registers_per_thread) +
                     " on " + p.name);
  if (shared_mem > p.shared_memory_per_block_optin)
    throw UsageError("shared memory per block " + std::to_string(shared_mem) +
                     " bytes is above the opt-in maximum of " +
                     std::to_string(p.shared_memory_per_block_optin) + " bytes (" +
                     format_bytes(p.shared_memory_per_block_optin) + ") on " + p.name);
  if (block_barriers < 0 || block_barriers > kMaxBlockBarriers)
    throw UsageError("block barriers " + std::to_string(block_barriers) + ": must be 0 to " +
                     std::to_string(kMaxBlockBarriers));
}

}  // namespace

int parse_block_size(std::string_view text, std::string_view source) {
  return parse_int(text, source, 1, kMaxBlockThreads);
}

std::string OccupancyUnknown::message() const {
  std::string list;
  for (const auto& field : fields) list += (list.empty() ? "" : ", ") + field;
  std::string text = "occupancy on " + architecture +
                     " is unknown: cudatool's architecture table does not know its " + list;
  if (!reason.empty()) text += " (" + reason + ")";
  return text;
}

std::optional<OccupancyUnknown> occupancy_unknown(const DeviceData& devdata) {
  std::vector<std::string> fields = devdata.unknown_occupancy_inputs();
  if (fields.empty()) return std::nullopt;
  const auto& p = devdata.properties();
  return OccupancyUnknown{p.name, std::move(fields), p.unknown_reason};
}

std::string_view limit_name(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::device:
      return "device";
    case OccupancyLimit::warps:
      return "warps";
    case OccupancyLimit::regs:
      return "regs";
    case OccupancyLimit::smem:
      return "smem";
    case OccupancyLimit::barriers:
      return "barriers";
  }
  return "unknown";
}

OccupancyRecord::OccupancyRecord(const DeviceData& devdata, int threads_, std::size_t shared_mem_,
                                 int registers_, int block_barriers_)
    : threads(threads_),
      shared_mem(shared_mem_),
      registers(registers_),
      block_barriers(block_barriers_) {
  validate(devdata, threads, shared_mem, registers, block_barriers);
  const auto& p = devdata.properties();
  const cudaOccDeviceProp prop = occ_device(p);
  const cudaOccFuncAttributes attributes = occ_function(p, shared_mem, registers, block_barriers);
  const cudaOccDeviceState state;
  cudaOccResult result{};
  const cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attributes,
                                                                      &state, threads, shared_mem);
  if (status != CUDA_OCC_SUCCESS) calculator_failed(p, status);

  tb_per_mp = result.activeBlocksPerMultiprocessor;
  limits.device = result.blockLimitBlocks;
  limits.warps = result.blockLimitWarps;
  limits.regs = limit_or_none(result.blockLimitRegs);
  limits.smem = limit_or_none(result.blockLimitSharedMem);
  limits.barriers = limit_or_none(result.blockLimitBarriers);

  const std::optional<int> by_resource[] = {limits.device, limits.warps, limits.regs, limits.smem,
                                            limits.barriers};
  for (std::size_t i = 0; i < std::size(kLimitOrder); ++i) {
    if (by_resource[i] && *by_resource[i] == tb_per_mp) {
      if (limiting_mask == 0) limited_by = limit_name(kLimitOrder[i]);
      limiting_mask |= static_cast<std::uint8_t>(kLimitOrder[i]);
    }
  }
  const int warps_per_block = (threads + p.warp_size - 1) / p.warp_size;
  warps_per_mp = tb_per_mp * warps_per_block;
  max_warps_per_mp = devdata.warps_per_mp();
  occupancy = static_cast<double>(warps_per_mp) / max_warps_per_mp;
  allocated_registers_per_block = result.allocatedRegistersPerBlock;
  allocated_shared_mem_per_block = result.allocatedSharedMemPerBlock;
  opted_in = shared_mem > p.shared_memory_per_block;
}

std::vector<std::string_view> OccupancyRecord::limiting_factors() const {
  std::vector<std::string_view> names;
  for (const auto limit : kLimitOrder)
    if (limiting_mask & static_cast<std::uint8_t>(limit)) names.push_back(limit_name(limit));
  return names;
}

std::optional<OccupancyImprovement> fewer_registers_for_more_blocks(const DeviceData& devdata,
                                                                    const OccupancyRecord& record) {
  // Blocks per SM never fall as registers fall, so the first count below that gives more
  // blocks is the smallest cut.
  for (int regs = record.registers - 1; regs >= 0; --regs) {
    const OccupancyRecord fewer(devdata, record.threads, record.shared_mem, regs,
                                record.block_barriers);
    if (fewer.tb_per_mp > record.tb_per_mp)
      return OccupancyImprovement{"regs", static_cast<std::size_t>(regs),
                                  static_cast<std::size_t>(record.registers - regs),
                                  fewer.tb_per_mp, fewer.occupancy};
  }
  return std::nullopt;
}

std::optional<OccupancyImprovement> less_shared_memory_for_more_blocks(
    const DeviceData& devdata, const OccupancyRecord& record) {
  if (record.shared_mem == 0) return std::nullopt;
  auto blocks = [&](std::size_t bytes) {
    return OccupancyRecord(devdata, record.threads, bytes, record.registers, record.block_barriers)
        .tb_per_mp;
  };
  if (blocks(0) <= record.tb_per_mp) return std::nullopt;
  // Blocks per SM never fall as shared memory falls: find the largest size below the
  // current one that gives more blocks.
  std::size_t low = 0, high = record.shared_mem;  // blocks(low) > tb, blocks(high) == tb
  while (high - low > 1) {
    const std::size_t mid = low + (high - low) / 2;
    (blocks(mid) > record.tb_per_mp ? low : high) = mid;
  }
  const OccupancyRecord less(devdata, record.threads, low, record.registers, record.block_barriers);
  return OccupancyImprovement{"smem", low, record.shared_mem - low, less.tb_per_mp, less.occupancy};
}

std::vector<int> default_block_sizes(const DeviceData& devdata) {
  require_known(devdata);
  std::vector<int> sizes;
  const auto& p = devdata.properties();
  for (int threads = p.warp_size; threads <= p.max_threads_per_block; threads += p.warp_size)
    sizes.push_back(threads);
  return sizes;
}

OccupancySweep sweep_block_sizes(const DeviceData& devdata, std::span<const int> block_sizes,
                                 std::size_t shared_mem, int registers, int block_barriers) {
  require_known(devdata);
  OccupancySweep sweep{"threads", {}};
  sweep.records.reserve(block_sizes.size());
  for (const int threads : block_sizes)
    sweep.records.emplace_back(devdata, threads, shared_mem, registers, block_barriers);
  return sweep;
}

OccupancySweep sweep_registers(const DeviceData& devdata, int threads, std::size_t shared_mem,
                               int block_barriers) {
  require_known(devdata);
  OccupancySweep sweep{"registers", {}};
  const int max = devdata.properties().max_registers_per_thread;
  sweep.records.reserve(static_cast<std::size_t>(max) + 1);
  for (int regs = 0; regs <= max; ++regs)
    sweep.records.emplace_back(devdata, threads, shared_mem, regs, block_barriers);
  return sweep;
}

OccupancySweep sweep_shared_memory(const DeviceData& devdata, int threads, int registers,
                                   int block_barriers) {
  require_known(devdata);
  OccupancySweep sweep{"shared_mem", {}};
  const auto& p = devdata.properties();
  const auto step = static_cast<std::size_t>(p.shared_memory_allocation_granularity);
  sweep.records.reserve(p.shared_memory_per_block_optin / step + 2);
  for (std::size_t bytes = 0; bytes <= p.shared_memory_per_block_optin; bytes += step)
    sweep.records.emplace_back(devdata, threads, bytes, registers, block_barriers);
  if (p.shared_memory_per_block_optin % step != 0)
    sweep.records.emplace_back(devdata, threads, p.shared_memory_per_block_optin, registers,
                               block_barriers);
  return sweep;
}

namespace {
std::size_t swept_value(const OccupancySweep& sweep, const OccupancyRecord& record) {
  if (sweep.parameter == "threads") return static_cast<std::size_t>(record.threads);
  if (sweep.parameter == "registers") return static_cast<std::size_t>(record.registers);
  return record.shared_mem;
}
}  // namespace

std::vector<SweepStep> sweep_steps(const OccupancySweep& sweep) {
  std::vector<SweepStep> steps;
  for (const auto& record : sweep.records) {
    const std::size_t value = swept_value(sweep, record);
    if (!steps.empty() && steps.back().tb_per_mp == record.tb_per_mp &&
        steps.back().warps_per_mp == record.warps_per_mp) {
      steps.back().last = value;
      continue;
    }
    // Shared-memory sizes between two sweep values behave like the upper one (allocation
    // rounds up), so a run starts right after the previous one ends.
    const std::size_t first =
        sweep.parameter == "shared_mem" && !steps.empty() ? steps.back().last + 1 : value;
    steps.push_back(SweepStep{first, value, record.tb_per_mp, record.warps_per_mp, record.occupancy,
                              record.limited_by});
  }
  return steps;
}

BlockSizeSuggestion suggest_block_size(const DeviceData& devdata, std::size_t shared_mem,
                                       int registers, int block_barriers) {
  // Validates the fixed inputs the same way a record does.
  const OccupancyRecord smallest(devdata, devdata.warp_size(), shared_mem, registers,
                                 block_barriers);
  const auto& p = devdata.properties();
  const cudaOccDeviceProp prop = occ_device(p);
  const cudaOccFuncAttributes attributes = occ_function(p, shared_mem, registers, block_barriers);
  const cudaOccDeviceState state;
  int min_grid_size = 0, block_size = 0;  // min_grid_size: for one SM, unused
  const cudaOccError status = cudaOccMaxPotentialOccupancyBlockSize(
      &min_grid_size, &block_size, &prop, &attributes, &state, shared_mem);
  if (status != CUDA_OCC_SUCCESS) calculator_failed(p, status);

  BlockSizeSuggestion suggestion;
  suggestion.block_size = block_size;
  if (block_size == 0) return suggestion;  // no block size fits at all
  const OccupancyRecord best(devdata, block_size, shared_mem, registers, block_barriers);
  suggestion.tb_per_mp = best.tb_per_mp;
  suggestion.occupancy = best.occupancy;
  if (p.sm_count) suggestion.min_grid_size = std::int64_t{best.tb_per_mp} * *p.sm_count;
  const long long best_threads = static_cast<long long>(block_size) * best.tb_per_mp;
  suggestion.smallest_block_size = block_size;
  // The calculator tries multiples of the warp size only; so does this.
  for (int threads = block_size - p.warp_size; threads >= p.warp_size; threads -= p.warp_size) {
    const OccupancyRecord record(devdata, threads, shared_mem, registers, block_barriers);
    if (static_cast<long long>(threads) * record.tb_per_mp == best_threads)
      suggestion.smallest_block_size = threads;
  }
  return suggestion;
}

BlockSizeSuggestion suggest_block_size(const DeviceData& devdata, const OccupancySweep& sweep) {
  require_known(devdata);
  if (sweep.parameter != "threads" || sweep.records.empty())
    throw LogicError("suggest_block_size needs a non-empty sweep over block sizes");
  // The calculator's rule: most threads resident; among equals, the largest block.
  const OccupancyRecord* best = nullptr;
  for (const auto& record : sweep.records) {
    const long long resident = static_cast<long long>(record.threads) * record.tb_per_mp;
    const long long best_resident =
        best ? static_cast<long long>(best->threads) * best->tb_per_mp : -1;
    if (resident > best_resident || (resident == best_resident && record.threads > best->threads))
      best = &record;
  }
  BlockSizeSuggestion suggestion;
  if (best->tb_per_mp == 0) return suggestion;
  suggestion.block_size = best->threads;
  suggestion.tb_per_mp = best->tb_per_mp;
  suggestion.occupancy = best->occupancy;
  suggestion.smallest_block_size = best->threads;
  const long long best_resident = static_cast<long long>(best->threads) * best->tb_per_mp;
  for (const auto& record : sweep.records)
    if (static_cast<long long>(record.threads) * record.tb_per_mp == best_resident)
      suggestion.smallest_block_size = std::min(suggestion.smallest_block_size, record.threads);
  if (const auto sms = devdata.properties().sm_count)
    suggestion.min_grid_size = std::int64_t{best->tb_per_mp} * *sms;
  return suggestion;
}

}  // namespace cudatool
