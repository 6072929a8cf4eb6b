// The text of `occupancy --cluster`: the clusters the whole GPU holds, what limits them,
// the GPCs that answer, and every size.
#include <iostream>
#include <string>
#include <vector>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "occupancy_report.hpp"
#include "occupancy_text.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string dims_text(const ClusterDims& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

// "18, 18, 16 x5, 8, 2 x4": a product's GPCs, equal ones counted.
std::string gpcs_text(const std::vector<int>& gpcs) {
  std::string text;
  for (std::size_t i = 0; i < gpcs.size();) {
    std::size_t j = i;
    while (j < gpcs.size() && gpcs[j] == gpcs[i]) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(gpcs[i]);
    if (j - i > 2)
      text += " x" + std::to_string(j - i);
    else if (j - i == 2)
      text += ", " + std::to_string(gpcs[i]);
    i = j;
  }
  return text;
}

std::string cluster_limit_text(const ClusterOccupancy& c, const ClusterTopology& t,
                               bool non_portable) {
  if (c.limited_by == "cluster_size")
    return "the cluster size: above " +
           std::to_string(non_portable ? t.max_cluster_size : t.max_portable_cluster_size) +
           " blocks, which the driver refuses";
  if (c.limited_by == "blocks") return "blocks: no block of the kernel fits on an SM";
  if (c.limited_by == "gpc") return "GPCs: none has " + std::to_string(c.cluster.size()) + " SMs";
  if (c.limited_by == "cluster_blocks_per_sm")
    return "a cluster launch's " + std::to_string(t.max_cluster_blocks_per_sm) +
           " blocks per SM (below the kernel's " + std::to_string(c.blocks_per_sm) + ")";
  return "the kernel's " + std::to_string(c.blocks_per_sm) + " blocks per SM";
}

// --cluster: the clusters the whole GPU holds, from the product's measured GPCs.
}  // namespace

void print_clusters(const OccupancyReport& report) {
  const ClusterDims& dims = *report.cluster;
  command_out() << "\nClusters of " << dims_text(dims) << " (" << dims.size()
                << (dims.size() == 1 ? " block" : " blocks") << ")"
                << (report.non_portable ? ", non-portable sizes allowed" : "") << ":\n";
  if (const auto& d = report.driver_clusters) {
    command_out() << "  Active clusters on the GPU:  " << d->max_active_clusters
                  << " (the driver: cuOccupancyMaxActiveClusters for a stand-in kernel of "
                  << d->stand_in_blocks_per_sm << " blocks per SM)\n"
                  << "  Largest cluster size:        " << d->max_potential_cluster_size
                  << " (the driver)\n";
    if (report.clusters && report.clusters->max_active_clusters != d->max_active_clusters)
      command_out() << "  The measured GPCs of " << report.topology->product << " give "
                    << report.clusters->max_active_clusters
                    << ": this GPU differs from the measurement; the driver is right.\n";
    command_out() << "  size  clusters  (the driver)\n";
    for (std::size_t i = 0; i < d->by_size.size(); ++i)
      command_out() << "  " << right(std::to_string(i + 1), 4) << "  "
                    << right(std::to_string(d->by_size[i]), 8) << '\n';
    return;
  }
  if (!report.driver_error.empty())
    command_out() << "  The driver gave no answer: " << report.driver_error << '\n';
  if (!report.clusters) {
    command_out() << "  unknown: " << report.cluster_reason
                  << "\n  No number is given rather than a guess.\n";
    return;
  }
  const ClusterOccupancy& c = *report.clusters;
  const ClusterTopology& t = *report.topology;
  command_out()
      << "  Active clusters on the GPU:  " << c.max_active_clusters << " (" << c.active_blocks
      << " blocks in " << c.gpcs_used << " GPCs)\n"
      << "  Limited by:                  " << cluster_limit_text(c, t, report.non_portable) << '\n'
      << "  Largest cluster size:        " << report.max_potential_cluster_size.value_or(0)
      << (report.non_portable
              ? ""
              : " (portable; up to " + std::to_string(t.max_cluster_size) + " with --non-portable)")
      << '\n'
      << "  GPCs of " << t.product << ":  " << gpcs_text(t.gpc_sms) << " SMs (" << t.sm_count
      << ")\n"
      << "  Measured:  " << t.measured.substr(0, t.measured.find("; ")) << "\n\n"
      << "  size  clusters  blocks\n";
  for (const ClusterOccupancy& s : report.cluster_sizes)
    command_out() << "  " << right(std::to_string(s.cluster.size()), 4) << "  "
                  << right(std::to_string(s.max_active_clusters), 8) << "  "
                  << right(std::to_string(s.active_blocks), 6) << '\n';
}

}  // namespace cudatool::app
