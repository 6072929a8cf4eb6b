// What changed between two builds: two scans (kernel_scan.hpp; the baseline may also be a
// scan rebuilt from a saved `kernels --json`), kernel by kernel. A kernel is matched by its
// mangled name, its architecture (sm_90a is not sm_90) and whether it is relocatable;
// file paths are not part of the match (two builds put their files in different places).
// Identical images (ScannedImage::same_bytes_as) count once; where one side holds a kernel
// in several distinct images (several translation units), the k-th copy is matched with
// the k-th. A renamed kernel stays "removed + added": no rename is guessed.
//
// Occupancy is the one occupancy_for_kernel, at one block size, from the architecture table.
// Regressions are what the caller's rules name (more registers, a new spill, lower
// occupancy, ...), each with a threshold, absolute or relative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"

namespace cudatool {

// What is compared, in this order (also the order of KernelMeasures::values).
enum class KernelMetric {
  registers,     // num_regs
  spill_stores,  // spill_store_bytes
  spill_loads,   // spill_load_bytes
  local,         // local_size_bytes (the stack)
  shared,        // shared_size_bytes (static)
  barriers,      // num_barriers
  occupancy,     // at ComparisonOptions::threads, 0 to 1 (lower is worse; the others higher)
  code_size,     // code_size_bytes
};
inline constexpr std::size_t kKernelMetricCount = 8;
// "registers", "spill_stores", ... (the JSON keys).
const char* metric_name(KernelMetric metric);

// One side's numbers for a kernel; nullopt where unknown (spills an old toolkit did not
// mark, occupancy the table cannot give at that block size).
struct KernelMeasures {
  std::optional<double> values[kKernelMetricCount];
  std::string occupancy_reason;  // why occupancy is unknown
  const std::optional<double>& operator[](KernelMetric m) const {
    return values[static_cast<std::size_t>(m)];
  }
};

// What fails a comparison. `metric` worse by more than `threshold` (in its unit: registers,
// bytes, occupancy points of 0-100), or by more than `threshold` percent of the old value
// where `relative`. Spill rules apply to either spill metric; kernels_removed to any kernel
// or architecture gone; total_size to the device code of all files together (the images'
// file_bytes).
struct RegressionRule {
  enum class Kind { metric, spills, kernels_removed, total_size } kind = Kind::metric;
  KernelMetric metric = KernelMetric::registers;
  double threshold = 0;
  bool relative = false;
  std::string name;  // as the caller spelled it, for the report ("registers", "size=5%")
};

struct ComparisonOptions {
  int threads = 256;  // block size for occupancy
  std::vector<RegressionRule> rules;
};

struct KernelChange {
  enum class Kind { changed, added, removed };
  Kind kind = Kind::changed;
  std::string name, demangled;
  Arch arch;
  bool relocatable = false;
  std::optional<std::size_t> old_kernel, new_kernel;  // indices into each scan's kernels
  std::optional<KernelMeasures> old_measures, new_measures;
  std::vector<std::string> regressions;  // the names of the rules it breaks
};

struct ArchitectureChange {
  std::optional<Arch> arch;  // nullopt: entries of unknown kind
  std::size_t old_images = 0, new_images = 0;
  std::uint64_t old_bytes = 0, new_bytes = 0;  // file_bytes of its images
};

struct KernelComparison {
  int threads = 0;
  // Only kernels with a difference, added or removed; most impact first: regressions, then
  // lost occupancy, new spill bytes, registers, then the size of the change in code.
  std::vector<KernelChange> changes;
  std::size_t old_kernels = 0, new_kernels = 0;  // distinct, as matched
  std::size_t unchanged = 0, changed = 0, added = 0, removed = 0;
  std::size_t improved = 0, worsened = 0;         // changed kernels with any metric better / worse
  std::vector<ArchitectureChange> architectures;  // every architecture of either side
  std::uint64_t old_bytes = 0, new_bytes = 0;     // every image's file_bytes
  std::vector<std::string> broken_rules;          // rules broken at least once, in rule order
  std::size_t regressions = 0;                    // kernels (and totals) breaking a rule
};

// The measures of one kernel of `scan`, occupancy at `threads` from `table`.
KernelMeasures measure_kernel(const ScanResult& scan, std::size_t kernel, ArchitectureTable& table,
                              int threads);

KernelComparison compare_kernels(const ScanResult& old_scan, const ScanResult& new_scan,
                                 const ComparisonOptions& options, ArchitectureTable& table);

}  // namespace cudatool
