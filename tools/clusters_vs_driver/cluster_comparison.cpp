#include "cluster_comparison.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"

namespace cudatool::tools {
namespace {

// The driver's error for a cluster size the kernel may not launch.
constexpr int kInvalidClusterSize = 912;  // CUDA_ERROR_INVALID_CLUSTER_SIZE
// The grid record_clusters.cu gives cuOccupancyMaxPotentialClusterSize: 48x1x1.
constexpr int kPotentialGridX = 48;

struct Comparer {
  std::ostream& log;
  std::size_t max_printed;
  ClusterComparisonCounts counts;

  void differs(const std::string& what, long long driver, long long offline) {
    if (counts.differences++ < max_printed)
      log << "DIFFERENCE " << what << ": driver " << driver << ", offline " << offline << '\n';
  }
  void expect(const std::string& what, long long driver, long long offline, std::size_t& counter) {
    ++counter;
    if (driver != offline) differs(what, driver, offline);
  }
};

// A driver answer that is an error (the recorder writes -CUresult) counts as the offline
// answer "the driver refuses this size".
long long offline_clusters(const ClusterOccupancy& c) {
  return c.limited_by == "cluster_size" ? -kInvalidClusterSize : c.max_active_clusters;
}

}  // namespace

ClusterComparisonCounts compare_cluster_record(const std::string& text, const std::string& source,
                                               std::ostream& log, std::size_t max_printed) {
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": not JSON: " + e.what());
  }
  if (!record.is_object() || record.value("schema", "") != "cudatool-clusters-record-1")
    throw Error(source + ": not a record of record_clusters (schema cudatool-clusters-record-1)");
  Comparer cmp{log, max_printed, {}};
  try {
    const auto& device = record.at("device");
    cmp.counts.device = device.at("name").get<std::string>();
    const int sm_count = device.at("sm_count").get<int>();
    const ClusterTopology* topology = find_cluster_topology(cmp.counts.device);
    if (!topology || topology->sm_count != sm_count)
      throw Error(source + ": no product of cudatool's cluster table is " + cmp.counts.device +
                  " with " + std::to_string(sm_count) + " SMs");
    cmp.counts.product = topology->product;
    // The offline per-SM figure: the architecture table's row, as `occupancy --arch` gives it.
    const std::string cc = device.at("compute_capability").get<std::string>();
    const DeviceData table(Arch::parse(cc, source), source, cc);

    std::map<std::pair<int, int>, int> per_sm_of_live_0;  // (threads, shared) -> blocks
    for (const auto& kernel : record.at("kernels")) {
      ++cmp.counts.kernels;
      const std::string name = kernel.at("name").get<std::string>();
      const int regs = kernel.at("num_regs").get<int>();
      const int static_shared = kernel.at("static_shared").get<int>();
      const auto required = kernel.at("required_cluster").get<std::vector<int>>();
      const bool compiled = required.at(0) > 0;
      const ClusterDims compiled_dims{std::max(1, required.at(0)), std::max(1, required.at(1)),
                                      std::max(1, required.at(2))};
      for (const auto& row : kernel.at("rows")) {
        const int threads = row.at(0).get<int>(), dynamic = row.at(1).get<int>();
        const std::string at =
            name + " threads " + std::to_string(threads) + " shared " + std::to_string(dynamic);
        const OccupancyRecord offline(table, threads,
                                      static_cast<std::size_t>(static_shared + dynamic), regs, 1);
        cmp.expect(at + " blocks per SM", row.at(2).get<int>(), offline.tb_per_mp,
                   cmp.counts.per_sm);
        if (name == "live_0") per_sm_of_live_0[{threads, dynamic}] = offline.tb_per_mp;
        // Recorded with non-portable sizes allowed, for a grid of 48x1x1; the driver ignores
        // compile-time dims here, except that it refuses a grid that is not a multiple of
        // them (2x2x1: CUDA_ERROR_INVALID_CLUSTER_SIZE).
        const bool grid_fits = !compiled || (kPotentialGridX % compiled_dims.x == 0 &&
                                             compiled_dims.y == 1 && compiled_dims.z == 1);
        cmp.expect(at + " max potential cluster size", row.at(3).get<int>(),
                   grid_fits ? max_potential_cluster_size(*topology, offline.tb_per_mp, true)
                             : -kInvalidClusterSize,
                   cmp.counts.potential_sizes);
        if (compiled) {
          const auto c = cluster_occupancy(*topology, offline.tb_per_mp, compiled_dims, true);
          cmp.expect(at + " clusters of " + std::to_string(compiled_dims.size()) + " (compiled)",
                     row.at(4).get<int>(), offline_clusters(c), cmp.counts.active_clusters);
        } else {
          for (std::size_t i = 4; i < row.size(); ++i) {
            const int size = static_cast<int>(i - 3);
            const auto c = cluster_occupancy(*topology, offline.tb_per_mp, {size, 1, 1}, true);
            cmp.expect(at + " clusters of " + std::to_string(size), row.at(i).get<int>(),
                       offline_clusters(c), cmp.counts.active_clusters);
          }
        }
      }
      if (kernel.contains("shapes")) {
        for (const auto& s : kernel.at("shapes")) {
          const int threads = s.at(0).get<int>(), dynamic = s.at(1).get<int>();
          const ClusterDims dims{s.at(2).get<int>(), s.at(3).get<int>(), s.at(4).get<int>()};
          const OccupancyRecord offline(table, threads,
                                        static_cast<std::size_t>(static_shared + dynamic), regs, 1);
          const auto c = cluster_occupancy(*topology, offline.tb_per_mp, dims, true);
          const std::string at = name + " threads " + std::to_string(threads) + " shared " +
                                 std::to_string(dynamic) + " cluster " + std::to_string(dims.x) +
                                 "x" + std::to_string(dims.y) + "x" + std::to_string(dims.z);
          cmp.expect(at, s.at(5).get<int>(), offline_clusters(c), cmp.counts.active_clusters);
          cmp.expect(at + " (a grid of 7 clusters)", s.at(6).get<int>(), offline_clusters(c),
                     cmp.counts.active_clusters);
        }
      }
      if (kernel.contains("portable_only")) {
        const OccupancyRecord offline(table, 256, static_cast<std::size_t>(static_shared), regs, 1);
        int size = 0;
        for (const auto& answer : kernel.at("portable_only")) {
          ++size;
          const auto c = cluster_occupancy(*topology, offline.tb_per_mp, {size, 1, 1}, false);
          cmp.expect(name + " threads 256 portable sizes only, cluster of " + std::to_string(size),
                     answer.get<int>(), offline_clusters(c), cmp.counts.active_clusters);
        }
        for (const auto& p : kernel.at("portable_only_potential")) {
          const int threads = p.at(0).get<int>(), dynamic = p.at(1).get<int>();
          const OccupancyRecord at(table, threads,
                                   static_cast<std::size_t>(static_shared + dynamic), regs, 1);
          cmp.expect(name + " threads " + std::to_string(threads) + " shared " +
                         std::to_string(dynamic) + " portable max potential cluster size",
                     p.at(2).get<int>(), max_potential_cluster_size(*topology, at.tb_per_mp, false),
                     cmp.counts.potential_sizes);
        }
      }
    }

    // Placement: every cluster's blocks on distinct SMs, and the SMs that shared a cluster
    // grouped into GPCs of the product's sizes.
    if (record.contains("placements")) {
      for (const auto& p : record.at("placements")) {
        ++cmp.counts.placements;
        const int size = p.at("cluster").get<int>();
        const auto sms = p.at("sm_of_block").get<std::vector<int>>();
        for (std::size_t first = 0; first + static_cast<std::size_t>(size) <= sms.size();
             first += static_cast<std::size_t>(size)) {
          const std::set<int> distinct(sms.begin() + static_cast<std::ptrdiff_t>(first),
                                       sms.begin() + static_cast<std::ptrdiff_t>(first + size));
          if (static_cast<int>(distinct.size()) != size)
            cmp.differs(
                "placement: a cluster of " + std::to_string(size) + " ran on fewer SMs than blocks",
                static_cast<long long>(distinct.size()), size);
        }
      }
      std::vector<int> groups;
      for (const auto& g : record.at("sm_groups")) groups.push_back(static_cast<int>(g.size()));
      std::sort(groups.rbegin(), groups.rend());
      if (groups != topology->gpc_sms) {
        std::string seen;
        for (const int g : groups) seen += (seen.empty() ? "" : ",") + std::to_string(g);
        if (cmp.counts.differences++ < max_printed)
          log << "DIFFERENCE SM groups of co-resident clusters: " << seen << '\n';
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": malformed record: " + e.what());
  }
  log << source << ": " << cmp.counts.device << " (" << cmp.counts.product
      << "): " << cmp.counts.kernels << " kernels, " << cmp.counts.per_sm << " per-SM figures, "
      << cmp.counts.active_clusters << " cuOccupancyMaxActiveClusters and "
      << cmp.counts.potential_sizes << " cuOccupancyMaxPotentialClusterSize answers, "
      << cmp.counts.placements << " placements compared: " << cmp.counts.differences
      << " differences\n";
  return cmp.counts;
}

}  // namespace cudatool::tools
