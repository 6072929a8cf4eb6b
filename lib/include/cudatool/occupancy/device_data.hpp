// What occupancy depends on, for a live device or for an architecture with no GPU at all:
// PyCUDA's DeviceData with the limits modern GPUs add (registers and shared memory per
// SM, opt-in and reserved shared memory per block, allocation granularities).
//
// The per-architecture constants live in one table, share/architectures.json, which
// names the source of every column (CUDA Programming Guide, cuda_occupancy.h) and is
// compiled into the library: DeviceData(Arch) reads no file and loads no driver.
//
// The table has a row for every architecture CUDA 13 compiles for (sm_75 to sm_121) and
// the older ones, but not every value of every row is known: where no source gives a
// value the table says null, and so does cudatool. Such a column is 0 in DeviceProperties
// and named in its unknown_fields, with unknown_reason saying why. For a name an image or
// a user gives (parsed once into an Arch, base/arch.hpp):
//   - find_architecture(arch.cc): the row, or nullptr where it is not in the table (never
//     throws; DeviceData(arch, source) throws UsageError for the same case);
//   - DeviceData(arch).knows(field) / unknown_occupancy_inputs(): whether occupancy can be
//     computed; where it cannot, occupancy_unknown() (occupancy.hpp) says which values
//     are missing and why, and OccupancyRecord throws UnknownValueError rather than guess.
// For example, per image of a binary:
//   const DeviceProperties* row = find_architecture(image_arch.cc);  // sm_100f: the sm_100 row
//   if (!row) { /* not in the table: report that, no occupancy */ }
//   const DeviceData data(*row, DeviceDataOrigin::architecture_table);
//   if (const auto unknown = occupancy_unknown(data)) { /* null, unknown->message() */ }
//   else { const OccupancyRecord r(data, threads, shared_mem, registers, barriers); }
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/device/device.hpp"

namespace cudatool {

// The plain description DeviceData wraps; tests fill one in by hand. Sizes are bytes.
struct DeviceProperties {
  std::string name;    // "sm_90" for a table row, the device's name for a live device
  std::string family;  // "Hopper"; "" when unknown
  ComputeCapability compute_capability;
  int max_threads_per_block = 0;
  int warp_size = 0;
  int max_threads_per_multiprocessor = 0;
  int max_blocks_per_multiprocessor = 0;
  int registers_per_multiprocessor = 0;
  int registers_per_block = 0;
  int max_registers_per_thread = 0;
  int register_allocation_granularity = 0;  // registers, allocated per warp
  std::size_t shared_memory_per_multiprocessor = 0;
  std::size_t shared_memory_per_block = 0;        // without opting in
  std::size_t shared_memory_per_block_optin = 0;  // with cuFuncSetAttribute's opt-in
  std::size_t reserved_shared_memory_per_block = 0;
  int shared_memory_allocation_granularity = 0;
  int shared_memory_banks = 0;  // PyCUDA's smem_granularity
  int cache_line_size = 0;      // bytes of a global-memory cache line
  // A product fact, not an architecture one: the device's count, or for a table row the
  // count of the part named in sm_count_part, where the architecture has one such part.
  std::optional<int> sm_count;
  std::string sm_count_part;
  // The columns above whose value is not known (each holds 0), by their table names
  // ("max_threads_per_multiprocessor", ...), and why. Empty for a fully known row.
  std::vector<std::string> unknown_fields;
  std::string unknown_reason;
  // Earlier compute capabilities of the same architecture, which parse to this row
  // ({10, 1} for 11.0: CUDA 13 renumbered sm_101 as sm_110).
  std::vector<ComputeCapability> former_compute_capabilities;

  friend bool operator==(const DeviceProperties&, const DeviceProperties&) = default;
};

// Where a DeviceData's values came from.
enum class DeviceDataOrigin { architecture_table, device, custom };

class DeviceData {
 public:
  // Any properties; throws UsageError naming the first field that is not positive (fields
  // listed in unknown_fields are exempt; an unknown_fields entry that names no column is a
  // UsageError too).
  explicit DeviceData(DeviceProperties properties,
                      DeviceDataOrigin origin = DeviceDataOrigin::custom);
  // A live device's attributes (no context is created); the granularities and limits the
  // driver does not report come from the table row of its compute capability. Throws
  // RequirementError for a compute capability the table does not know.
  explicit DeviceData(const Device& device);
  // An architecture's row of the table, for a name a flag gave (Arch::parse) or a binary
  // holds: a variant shares its base row's limits (sm_90a: sm_90's), a former number maps
  // to the row it was renamed to (sm_101: sm_110). Never touches the driver. Throws
  // UsageError `<source> "<spelled>": compute capability X.Y is not in cudatool's table
  // (known: ...)` for one the table lacks, quoting `spelled` (the text it was parsed from,
  // as the user wrote it: "12.1") or, where that is empty, its canonical name. One outside
  // the grammar (sm_5 from a malformed fatbin entry) is refused as its name would be. A row
  // with unknown values is accepted: check unknown_occupancy_inputs() before asking for
  // occupancy.
  explicit DeviceData(const Arch& architecture, std::string_view source = "architecture",
                      std::string_view spelled = {});

  const DeviceProperties& properties() const { return properties_; }
  DeviceDataOrigin origin() const { return origin_; }
  // Replaces the SM count (which only the minimum grid size depends on).
  void set_sm_count(int sm_count);

  // Whether `field` (a column name: "warp_size", "shared_memory_per_multiprocessor", ...)
  // has a known value. Names that are no column are known (false only for unknown_fields).
  bool knows(std::string_view field) const;
  // The unknown columns occupancy depends on, in table order; empty when OccupancyRecord
  // and the sweeps can answer. (shared_memory_banks and cache_line_size only matter to the
  // alignment helpers, sm_count only to the minimum grid size.)
  std::vector<std::string> unknown_occupancy_inputs() const;

  // PyCUDA's names. Where the table does not know a value they return 0.
  int max_threads() const { return properties_.max_threads_per_block; }
  int warp_size() const { return properties_.warp_size; }
  int warps_per_mp() const {
    return properties_.warp_size == 0
               ? 0
               : properties_.max_threads_per_multiprocessor / properties_.warp_size;
  }
  int thread_blocks_per_mp() const { return properties_.max_blocks_per_multiprocessor; }
  int registers() const { return properties_.registers_per_block; }
  std::size_t shared_memory() const { return properties_.shared_memory_per_block; }
  int smem_granularity() const { return properties_.shared_memory_banks; }
  int smem_alloc_granularity() const { return properties_.shared_memory_allocation_granularity; }

  // The base-address alignment at which a warp's accesses of `word_size`-byte words
  // (1, 2, 4, 8 or 16) coalesce into the fewest cache lines: the warp's span, capped at
  // one cache line. Throws UsageError for another word size, RequirementError where the
  // table knows no warp size or cache line size.
  int align_bytes(int word_size = 4) const;
  // `bytes` rounded up to align_bytes(word_size).
  std::size_t align(std::size_t bytes, int word_size = 4) const;
  // align_bytes(word_size) / word_size.
  int align_words(int word_size) const;
  // `elements` rounded up so that elements * dtype_size is a multiple of
  // align_bytes(dtype_size).
  std::size_t align_dtype(std::size_t elements, int dtype_size) const;
  // Rounds up to a channel count a texture can have (1, 2 or 4); UsageError above 4 or
  // below 1.
  static int make_valid_tex_channel_count(int size);

 private:
  DeviceProperties properties_;
  DeviceDataOrigin origin_ = DeviceDataOrigin::custom;
};

// Every row of the architecture table, in compute-capability order (rows with unknown
// values included).
std::span<const DeviceProperties> known_architectures();

// The table row of `cc` (or of the row `cc` is a former number of), or nullptr.
const DeviceProperties* find_architecture(ComputeCapability cc);

// The names of the table's numeric columns, in table order.
std::span<const std::string_view> architecture_columns();

std::string_view origin_name(DeviceDataOrigin origin);  // "architecture_table", ...

}  // namespace cudatool
