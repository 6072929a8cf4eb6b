// clusters_vs_driver RECORD.json...: the offline cluster answer against records of the
// driver's own answers (record_clusters.cu; see cluster_comparison.hpp). Prints each
// difference and a line per record, then the totals. Exit 0 when something was compared and
// nothing differed, 1 on any difference or unreadable record.
// On a GPU: tools/gpu-clusters.sh records the GPU's answers and runs this over them.
#include <iostream>
#include <string>

#include "cluster_comparison.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/text.hpp"

int main(int argc, char** argv) {
  using namespace cudatool;
  if (argc < 2) {
    std::cerr << "usage: clusters_vs_driver RECORD.json...\n";
    return 2;
  }
  tools::ClusterComparisonCounts total;
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      const auto c =
          tools::compare_cluster_record(read_input_file(argv[i], "record"), argv[i], std::cout);
      total.kernels += c.kernels;
      total.per_sm += c.per_sm;
      total.active_clusters += c.active_clusters;
      total.potential_sizes += c.potential_sizes;
      total.placements += c.placements;
      total.differences += c.differences;
    } catch (const std::exception& e) {
      ++failed;
      std::cout << "FAILED " << printable(e.what(), 400) << '\n';
    }
  }
  std::cout << "TOTAL: " << argc - 1 << " records (" << failed << " unreadable), " << total.kernels
            << " kernels, " << total.per_sm << " per-SM figures, " << total.active_clusters
            << " cuOccupancyMaxActiveClusters and " << total.potential_sizes
            << " cuOccupancyMaxPotentialClusterSize answers, " << total.placements
            << " placements compared: " << total.differences << " differences\n";
  return failed == 0 && total.differences == 0 && total.active_clusters > 0 ? 0 : 1;
}
