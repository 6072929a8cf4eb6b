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
