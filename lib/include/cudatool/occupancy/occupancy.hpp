// Exact occupancy: how many blocks of a kernel are resident on one SM, and what limits
// them. The engine is the CUDA toolkit's own header-only calculator, cuda_occupancy.h,
// which models what cuOccupancyMaxActiveBlocksPerMultiprocessor answers; it needs no GPU.
//
// PyCUDA's OccupancyRecord interface, with every resource's block limit added. Results
// are plain structs; rendering is the caller's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/occupancy/device_data.hpp"

namespace cudatool {

// Occupancy that cannot be computed because the architecture table does not know a value
// it depends on (an architecture CUDA compiles for but no document describes, such as
// sm_88): which values, and why. Callers report this instead of a number.
struct OccupancyUnknown {
  std::string architecture;         // "sm_88"
  std::vector<std::string> fields;  // the unknown inputs, by table column name
  std::string reason;               // the table's unknown_reason for the row
  // "occupancy on sm_88 is unknown: cudatool's architecture table does not know its
  // max_threads_per_block, warp_size, ... (reason)"
  std::string message() const;
};
// nullopt when every input is known (DeviceData::unknown_occupancy_inputs() is empty).
std::optional<OccupancyUnknown> occupancy_unknown(const DeviceData& devdata);

// Thrown by OccupancyRecord, the sweeps and suggest_block_size where occupancy_unknown()
// is not nullopt (exit status 4, a requirement unmet, if nobody catches it).
class UnknownValueError : public RequirementError {
 public:
  explicit UnknownValueError(OccupancyUnknown unknown)
      : RequirementError(unknown.message()), unknown_(std::move(unknown)) {}
  const OccupancyUnknown& unknown() const { return unknown_; }

 private:
  OccupancyUnknown unknown_;
};

// The most threads a block has on any GPU since compute capability 2.0 (every row of the
// architecture table): the one range of a block size given as text (`--threads` of
// occupancy, kernels and compile; occupancy's `--sweep` list). A device's or row's own
// maximum is OccupancyRecord's check.
inline constexpr int kMaxBlockThreads = 1024;
// `text` as a block size, 1..kMaxBlockThreads; UsageError `<source> "<text>": expected a
// whole number 1..1024` otherwise (base/numbers.hpp's message).
int parse_block_size(std::string_view text, std::string_view source);

// The blocks per SM each resource allows on its own. nullopt: the resource does not
// limit (the kernel uses none of it, or the limit does not exist on the architecture).
struct BlockLimits {
  int device = 0;  // the hardware's maximum of resident blocks per SM
  int warps = 0;   // resident warps per SM / warps per block (0 above the block maximum)
  std::optional<int> regs;
  std::optional<int> smem;
  std::optional<int> barriers;  // from 9.0 on: block barriers per SM / barriers per block
  friend bool operator==(const BlockLimits&, const BlockLimits&) = default;
};

// The resources, in the order `limited_by` prefers among ties.
enum class OccupancyLimit : std::uint8_t {
  device = 1,
  warps = 2,
  regs = 4,
  smem = 8,
  barriers = 16,
};
std::string_view limit_name(OccupancyLimit limit);  // "device", "warps", ...

struct OccupancyRecord {
  // `threads` per block, `shared_mem` bytes per block in total (static plus dynamic; above
  // the default per-block limit the kernel is taken as opted in), `registers` per thread,
  // `block_barriers` named barriers per block (every kernel has one). Throws UsageError,
  // naming the limit and the value, for a block that no launch could have: threads 0 or
  // above the maximum, registers above the per-thread maximum, shared memory above the
  // opt-in limit, barriers outside 0..16. A block that is valid but needs more registers
  // than one block may have is not an error: tb_per_mp is 0, limited by "regs", as the
  // driver answers. Throws UnknownValueError where occupancy_unknown(devdata) is set.
  OccupancyRecord(const DeviceData& devdata, int threads, std::size_t shared_mem = 0,
                  int registers = 0, int block_barriers = 1);

  // The inputs.
  int threads = 0;
  std::size_t shared_mem = 0;
  int registers = 0;
  int block_barriers = 1;

  int tb_per_mp = 0;               // resident blocks per SM
  std::string_view limited_by;     // the first of limiting_factors, in OccupancyLimit order
  std::uint8_t limiting_mask = 0;  // every resource whose limit equals tb_per_mp
  int warps_per_mp = 0;            // resident warps per SM
  int max_warps_per_mp = 0;        // the SM's maximum
  double occupancy = 0;            // warps_per_mp / max_warps_per_mp
  BlockLimits limits;
  int allocated_registers_per_block = 0;
  std::size_t allocated_shared_mem_per_block = 0;  // rounded up, reserved part included
  bool opted_in = false;  // shared_mem is above the default per-block limit

  std::vector<std::string_view> limiting_factors() const;
};

// Fewer registers or less shared memory that would fit more blocks per SM.
struct OccupancyImprovement {
  std::string_view resource;  // "regs" or "smem"
  std::size_t value = 0;      // the registers per thread or bytes per block to use instead
  std::size_t reduction = 0;  // how many fewer
  int tb_per_mp = 0;          // blocks per SM then
  double occupancy = 0;       // occupancy then
};

// The smallest cut in registers per thread that gives more blocks per SM; nullopt when
// none does (the registers do not limit, or no cut would help).
std::optional<OccupancyImprovement> fewer_registers_for_more_blocks(const DeviceData& devdata,
                                                                    const OccupancyRecord& record);
// The smallest cut in shared memory per block that gives more blocks per SM.
std::optional<OccupancyImprovement> less_shared_memory_for_more_blocks(
    const DeviceData& devdata, const OccupancyRecord& record);

// One parameter varied, the others fixed.
struct OccupancySweep {
  std::string_view parameter;  // "threads", "registers" or "shared_mem"
  std::vector<OccupancyRecord> records;
};

// 32, 64, ... up to the maximum block size, in steps of the warp size. Like every function
// below, throws UnknownValueError where occupancy_unknown(devdata) is set.
std::vector<int> default_block_sizes(const DeviceData& devdata);
OccupancySweep sweep_block_sizes(const DeviceData& devdata, std::span<const int> block_sizes,
                                 std::size_t shared_mem = 0, int registers = 0,
                                 int block_barriers = 1);
// Registers per thread from 0 to the per-thread maximum.
OccupancySweep sweep_registers(const DeviceData& devdata, int threads, std::size_t shared_mem = 0,
                               int block_barriers = 1);
// Shared memory per block from 0 to the opt-in limit, in steps of the allocation
// granularity (sizes between two steps behave like the next step up).
OccupancySweep sweep_shared_memory(const DeviceData& devdata, int threads, int registers = 0,
                                   int block_barriers = 1);

// A run of consecutive sweep values with the same blocks per SM: where the cliffs are.
// For a shared-memory sweep the runs cover every byte count (first is one above the
// previous run's last).
struct SweepStep {
  std::size_t first = 0;  // the parameter's first and last value in the run
  std::size_t last = 0;
  int tb_per_mp = 0;
  int warps_per_mp = 0;
  double occupancy = 0;
  std::string_view limited_by;
};
std::vector<SweepStep> sweep_steps(const OccupancySweep& sweep);

// The block size cudaOccupancyMaxPotentialBlockSize chooses: the highest occupancy in
// threads (block size x blocks per SM); among equals, the largest block size, as the
// calculator scans from the largest down and keeps the first best.
struct BlockSizeSuggestion {
  int block_size = 0;
  int tb_per_mp = 0;
  double occupancy = 0;
  int smallest_block_size = 0;                // the smallest block size with the same occupancy
  std::optional<std::int64_t> min_grid_size;  // blocks for one full wave; needs the SM count
};
// Over every block size from the warp size to the maximum, through cuda_occupancy.h's
// cudaOccMaxPotentialOccupancyBlockSize.
BlockSizeSuggestion suggest_block_size(const DeviceData& devdata, std::size_t shared_mem = 0,
                                       int registers = 0, int block_barriers = 1);
// The same rule over the block sizes of a sweep (a given list). `sweep` must be over
// "threads" and not empty.
BlockSizeSuggestion suggest_block_size(const DeviceData& devdata, const OccupancySweep& sweep);

}  // namespace cudatool
