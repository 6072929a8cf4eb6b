// What occupancy depends on, for a live device or for an architecture with no GPU at all:
// PyCUDA's DeviceData with the limits modern GPUs add (registers and shared memory per
// SM, opt-in and reserved shared memory per block, allocation granularities).
//
// The per-architecture constants live in one table, share/architectures.json, which
// names the source of every column (CUDA C++ Programming Guide, cuda_occupancy.h) and is
// compiled into the library: DeviceData("sm_90") reads no file and loads no driver.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

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

  friend bool operator==(const DeviceProperties&, const DeviceProperties&) = default;
};

// Where a DeviceData's values came from.
enum class DeviceDataOrigin { architecture_table, device, custom };

class DeviceData {
 public:
  // Any properties; throws UsageError naming the first field that is not positive.
  explicit DeviceData(DeviceProperties properties,
                      DeviceDataOrigin origin = DeviceDataOrigin::custom);
  // A live device's attributes (no context is created); the granularities and limits the
  // driver does not report come from the table row of its compute capability. Throws
  // RequirementError for a compute capability the table does not know.
  explicit DeviceData(const Device& device);
  // An architecture from the table: "sm_90", "sm_90a", "compute_90", "9.0" (case does
  // not matter). Never touches the driver. Throws UsageError for anything else.
  explicit DeviceData(std::string_view architecture);

  const DeviceProperties& properties() const { return properties_; }
  DeviceDataOrigin origin() const { return origin_; }
  // Replaces the SM count (which only the minimum grid size depends on).
  void set_sm_count(int sm_count);

  // PyCUDA's names.
  int max_threads() const { return properties_.max_threads_per_block; }
  int warp_size() const { return properties_.warp_size; }
  int warps_per_mp() const {
    return properties_.max_threads_per_multiprocessor / properties_.warp_size;
  }
  int thread_blocks_per_mp() const { return properties_.max_blocks_per_multiprocessor; }
  int registers() const { return properties_.registers_per_block; }
  std::size_t shared_memory() const { return properties_.shared_memory_per_block; }
  int smem_granularity() const { return properties_.shared_memory_banks; }
  int smem_alloc_granularity() const { return properties_.shared_memory_allocation_granularity; }

  // The base-address alignment at which a warp's accesses of `word_size`-byte words
  // (1, 2, 4, 8 or 16) coalesce into the fewest cache lines: the warp's span, capped at
  // one cache line. Throws UsageError for another word size.
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

// Every row of the architecture table, in compute-capability order.
std::span<const DeviceProperties> known_architectures();

// "sm_90", "sm_90a", "sm_100f", "compute_90", "9.0" -> {9, 0}. Throws UsageError naming
// the value for a malformed name or one not in the table (listing the known ones).
ComputeCapability parse_architecture(std::string_view text);

// The table row of `cc`, or nullptr.
const DeviceProperties* find_architecture(ComputeCapability cc);

std::string_view origin_name(DeviceDataOrigin origin);  // "architecture_table", ...

void to_json(nlohmann::json& j, const DeviceProperties& properties);
// The properties plus "origin" and PyCUDA's derived fields (warps_per_mp, ...).
void to_json(nlohmann::json& j, const DeviceData& data);

}  // namespace cudatool
