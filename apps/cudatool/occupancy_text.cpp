// The text of one configuration of `cudatool occupancy`: the device, the block, the blocks
// per SM each resource allows and what would fit more (or why occupancy is unknown); the
// sweeps' tables are occupancy_sweep_text.cpp's.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "occupancy_report.hpp"
#include "occupancy_text.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

void print_record(const DeviceData& devdata, const std::string& where, const OccupancyRecord& r,
                  const std::vector<OccupancyImprovement>& improvements) {
  const auto& p = devdata.properties();
  command_out() << device_text(devdata, where) << '\n';
  command_out() << "Block: "
                << block_text(r.threads, r.registers, r.shared_mem, r.block_barriers, p.warp_size)
                << (r.opted_in ? " (above the default " + format_bytes(p.shared_memory_per_block) +
                                     ": taken as opted in)"
                               : "")
                << "\n\n";
  std::string also;
  for (const auto name : r.limiting_factors())
    if (name != r.limited_by) also += (also.empty() ? "" : ", ") + std::string(name);
  command_out() << "Active blocks per SM:  " << r.tb_per_mp << '\n'
                << "Active warps per SM:   " << r.warps_per_mp << " of " << r.max_warps_per_mp
                << '\n'
                << "Occupancy:             " << percent(r.occupancy) << '\n'
                << "Limited by:            " << r.limited_by
                << (also.empty() ? "" : " (tied with " + also + ")") << '\n';
  if (r.tb_per_mp == 0 && r.limited_by == "regs")
    command_out() << "The block cannot be launched: it is allocated "
                  << r.allocated_registers_per_block << " registers, and a block may have at most "
                  << p.registers_per_block << ".\n";

  const int warps_per_block = (r.threads + p.warp_size - 1) / p.warp_size;
  auto limit = [](const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; };
  command_out() << "\nBlocks per SM each resource allows (the smallest wins):\n";
  command_out() << "  device    " << right(std::to_string(r.limits.device), 5)
                << "  the hardware's maximum of resident blocks per SM\n";
  command_out() << "  warps     " << right(std::to_string(r.limits.warps), 5) << "  "
                << r.max_warps_per_mp << " warps per SM / " << warps_per_block << " per block\n";
  command_out() << "  regs      " << right(limit(r.limits.regs), 5) << "  "
                << (r.limits.regs
                        ? std::to_string(p.registers_per_multiprocessor) + " registers per SM / " +
                              std::to_string(r.allocated_registers_per_block) +
                              " allocated per block"
                        : std::string("no registers used"))
                << '\n';
  command_out() << "  smem      " << right(limit(r.limits.smem), 5) << "  "
                << (r.limits.smem
                        ? format_bytes(p.shared_memory_per_multiprocessor) + " per SM / " +
                              std::to_string(r.allocated_shared_mem_per_block) +
                              " B allocated per block" +
                              (p.reserved_shared_memory_per_block
                                   ? " (" + std::to_string(p.reserved_shared_memory_per_block) +
                                         " B of it reserved by the driver)"
                                   : std::string())
                        : std::string("no shared memory used"))
                << '\n';
  command_out() << "  barriers  " << right(limit(r.limits.barriers), 5) << "  "
                << (r.limits.barriers ? "block barriers per SM / " +
                                            std::to_string(r.block_barriers) + " per block"
                                      : std::string("not a limit on this architecture"))
                << '\n';
  if (!improvements.empty()) {
    command_out() << "\nTo fit more blocks per SM:\n";
    for (const auto& i : improvements) command_out() << "  " << improvement_text(i, r) << '\n';
  }
}

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

// Where the table does not know a value occupancy needs: which, and why; no number.
void print_unknown(const OccupancyReport& report) {
  const OccupancyUnknown& unknown = *report.unknown;
  command_out() << device_text(report.devdata, report.where) << '\n'
                << "Occupancy: unknown. cudatool's architecture table does not know these values "
                   "for "
                << report.devdata.properties().name << ":\n";
  for (const auto& field : unknown.fields) command_out() << "  " << field << '\n';
  if (!unknown.reason.empty()) command_out() << "Why: " << unknown.reason << '\n';
  command_out() << "No number is given rather than a guess.\n";
}

}  // namespace

std::string device_text(const DeviceData& devdata, const std::string& where) {
  const auto& p = devdata.properties();
  std::string text = where.empty() ? p.name : where + ": " + p.name;
  text += " (compute capability " + p.compute_capability.str();
  if (!p.family.empty()) text += ", " + p.family;
  if (devdata.origin() == DeviceDataOrigin::architecture_table)
    text += "; from cudatool's architecture table";
  return text + ")";
}

std::string block_text(int threads, int registers, std::size_t shared_mem, int barriers,
                       int warp_size) {
  std::string text;
  if (threads > 0) {
    const int warps = (threads + warp_size - 1) / warp_size;
    text = std::to_string(threads) + " threads (" + std::to_string(warps) +
           (warps == 1 ? " warp), " : " warps), ");
  }
  text += std::to_string(registers) + " registers per thread, " + format_bytes(shared_mem) +
          " shared memory";
  if (barriers != 1) text += ", " + std::to_string(barriers) + " block barriers";
  return text;
}

std::string improvement_text(const OccupancyImprovement& i, const OccupancyRecord& now) {
  const int more = i.tb_per_mp - now.tb_per_mp;
  std::string text;
  if (i.resource == "regs")
    text = std::to_string(i.reduction) + " fewer registers per thread (" + std::to_string(i.value) +
           ")";
  else
    text = std::to_string(i.reduction) + " fewer bytes of shared memory per block (" +
           std::to_string(i.value) + " B)";
  return text + " would give " + std::to_string(more) + " more " +
         (more == 1 ? "block" : "blocks") + " per SM: " + std::to_string(i.tb_per_mp) +
         " blocks, occupancy " + percent(now.occupancy) + " -> " + percent(i.occupancy);
}

void print_occupancy_text(const OccupancyReport& report) {
  if (report.source) {
    // The name and path as the terminal gets them (escaped, base/text.hpp), not cut.
    const std::string& name = report.source->kernel.resources.demangled;
    const std::string& file = report.source->file;
    command_out() << "Kernel " << printable(name, name.size()) << " (" << report.source->arch.str()
                  << " image of " << printable(file, file.size()) << ")\n";
  }
  if (report.unknown) return print_unknown(report);
  switch (report.question) {
    case OccupancyQuestion::block_sizes:
      return print_block_size_sweep(report.devdata, report.where, *report.sweep,
                                    *report.suggestion);
    case OccupancyQuestion::registers:
    case OccupancyQuestion::shared_memory:
      return print_steps(report.devdata, report.where, *report.sweep, report.current,
                         report.improvement,
                         report.current ? report.record : std::optional<OccupancyRecord>());
    case OccupancyQuestion::launch:
      print_record(report.devdata, report.where, *report.record, report.improvements);
      if (report.cluster) print_clusters(report);
      return;
  }
}

}  // namespace cudatool::app
