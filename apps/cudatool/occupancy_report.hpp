// What `cudatool occupancy` answers, computed whole before anything is printed
// (occupancy_report.cpp), and its three renderers: text (occupancy_text.cpp and
// occupancy_sweep_text.cpp, occupancy_text.hpp), JSON
// (occupancy_json.cpp, the document of share/schemas/occupancy.schema.json) and CSV
// (occupancy_csv.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/compile/driver_clusters.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

// Which question: one launch, or a sweep over one of its parameters.
enum class OccupancyQuestion { launch, block_sizes, registers, shared_memory };

// The kernel --kernel-from took its registers, shared memory and barriers from.
struct KernelSource {
  ScannedKernel kernel;
  std::string file;  // as given
  Arch arch;         // its image's
};

struct OccupancyReport {
  DeviceData devdata;
  std::string where;  // "device 0"; "" for an architecture
  std::optional<KernelSource> source;
  OccupancyQuestion question = OccupancyQuestion::launch;
  // The launch asked for (threads: nullopt when the block size is swept).
  std::optional<int> threads;
  int registers = 0;
  std::size_t shared_mem = 0;
  int barriers = 1;
  // Where the table does not know what occupancy needs: nothing below is set.
  std::optional<OccupancyUnknown> unknown = {};
  // launch, registers, shared_memory: the launch's record.
  std::optional<OccupancyRecord> record = {};
  // launch: what would fit more blocks.
  std::vector<OccupancyImprovement> improvements = {};
  // block_sizes, registers, shared_memory.
  std::optional<OccupancySweep> sweep = {};
  std::optional<BlockSizeSuggestion> suggestion = {};  // block_sizes
  // registers, shared_memory: the swept value given (--regs, --smem) and what less of it
  // would give.
  std::optional<std::size_t> current = {};
  std::optional<OccupancyImprovement> improvement = {};
  // launch with --cluster (or a kernel's compile-time cluster dimensions): the clusters the
  // whole GPU holds, from the product's measured GPCs (topology: --product's, or the one
  // cluster_topology_for finds), or the reason that answer is unknown.
  std::optional<ClusterDims> cluster = {};
  bool non_portable = false;
  const ClusterTopology* topology = nullptr;
  std::string cluster_reason = {};
  std::optional<ClusterOccupancy> clusters = {};
  std::vector<ClusterOccupancy> cluster_sizes = {};  // sizes 1..the kernel's maximum
  std::optional<int> max_potential_cluster_size = {};
  // --device: the driver's own answers (compile/driver_clusters.hpp), which win over the
  // measured GPCs' where both exist, or why the driver gave none.
  std::optional<DriverClusterAnswer> driver_clusters = {};
  std::string driver_error = {};
};

// The library's answer to the report's question, filled in: the occupancy_unknown() values
// or the record, the sweep and what would fit more blocks. block_sizes: the --sweep list,
// or empty for every multiple of the warp size; given_regs, given_smem: whether --regs and
// --smem were given (a register or shared-memory sweep then marks the value and what less
// of it gives).
void answer_occupancy(OccupancyReport& report, std::vector<int> block_sizes, bool given_regs,
                      bool given_smem);

// The report of one launch whose record is already computed (the Python module's
// OccupancyRecord): the record's improvements added, nothing computed again.
OccupancyReport launch_report(const DeviceData& devdata, const OccupancyRecord& record);

void print_occupancy_text(const OccupancyReport& report);
// The --json document without schema_version (print_json adds it).
JsonObject occupancy_json(const OccupancyReport& report);
void print_occupancy_json(const OccupancyReport& report);
// --format csv (header true) or csv,noheader: one line per record.
void print_occupancy_csv(const OccupancyReport& report, bool header);

}  // namespace cudatool::app
