// The text of `cudatool occupancy` (print_occupancy_text, occupancy_report.hpp), in two
// files: one configuration, its limits and what would fit more blocks
// (occupancy_text.cpp), and the sweeps' tables (occupancy_sweep_text.cpp). These are the
// pieces both use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "occupancy_report.hpp"

namespace cudatool::app {

// "device 0: NVIDIA H100 (compute capability 9.0, Hopper)", with the table's origin.
std::string device_text(const DeviceData& devdata, const std::string& where);
// "256 threads (8 warps), 32 registers per thread, 0 B shared memory"; without the threads
// where `threads` is 0.
std::string block_text(int threads, int registers, std::size_t shared_mem, int barriers,
                       int warp_size);
// "8 fewer registers per thread (24) would give 2 more blocks per SM: ...".
std::string improvement_text(const OccupancyImprovement& i, const OccupancyRecord& now);

// Right-aligns `text` in `width` characters.
inline std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// --cluster (occupancy_cluster_text.cpp): the clusters of the launch, or why unknown.
void print_clusters(const OccupancyReport& report);

// --sweep: a row per block size, then the suggestion.
void print_block_size_sweep(const DeviceData& devdata, const std::string& where,
                            const OccupancySweep& sweep, const BlockSizeSuggestion& suggestion);
// --sweep-regs, --sweep-smem: a row per run of values with the same answer, the given value
// marked, then what less of it would give.
void print_steps(const DeviceData& devdata, const std::string& where, const OccupancySweep& sweep,
                 const std::optional<std::size_t>& current,
                 const std::optional<OccupancyImprovement>& improvement,
                 const std::optional<OccupancyRecord>& current_record);

}  // namespace cudatool::app
