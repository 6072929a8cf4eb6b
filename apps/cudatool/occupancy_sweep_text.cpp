// The sweeps' tables of `cudatool occupancy` (--sweep, --sweep-regs, --sweep-smem), with a
// bar per row and the suggested block size.
#include <cmath>
#include <iostream>
#include <optional>
#include <string>

#include "cudatool/base/units.hpp"
#include "occupancy_report.hpp"
#include "occupancy_text.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string bar(double fraction, int width = 32) {
  const int filled = static_cast<int>(std::lround(fraction * width));
  return std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(width - filled), '.');
}

std::string suggestion_text(const BlockSizeSuggestion& s, const DeviceProperties& p) {
  if (s.block_size == 0) return "No block size fits on one SM.";
  std::string text = "Suggested block size: " + std::to_string(s.block_size) + " threads (" +
                     std::to_string(s.tb_per_mp) + (s.tb_per_mp == 1 ? " block" : " blocks") +
                     " per SM, occupancy " + percent(s.occupancy) +
                     "): the largest block at the highest occupancy, as "
                     "cudaOccupancyMaxPotentialBlockSize chooses.";
  if (s.smallest_block_size != s.block_size)
    text += "\nThe smallest block at that occupancy: " + std::to_string(s.smallest_block_size) +
            " threads.";
  if (s.min_grid_size)
    text += "\nOne full wave: " + std::to_string(*s.min_grid_size) + " blocks on " +
            std::to_string(*p.sm_count) + " SMs" +
            (p.sm_count_part.empty() ? "" : " (" + p.sm_count_part + ")") + ".";
  return text;
}

}  // namespace

void print_block_size_sweep(const DeviceData& devdata, const std::string& where,
                            const OccupancySweep& sweep, const BlockSizeSuggestion& suggestion) {
  const auto& first = sweep.records.front();
  command_out() << device_text(devdata, where) << '\n'
                << "Block-size sweep: "
                << block_text(0, first.registers, first.shared_mem, first.block_barriers, 32)
                << "\n\n";
  command_out() << "threads  blocks/SM  warps/SM  occupancy  limited by\n";
  for (const auto& r : sweep.records)
    command_out() << right(std::to_string(r.threads), 7) << "  "
                  << right(std::to_string(r.tb_per_mp), 9) << "  "
                  << right(std::to_string(r.warps_per_mp), 8) << "  "
                  << right(percent(r.occupancy), 9) << "  " << pad(std::string(r.limited_by), 10)
                  << "  " << bar(r.occupancy) << '\n';
  command_out() << '\n' << suggestion_text(suggestion, devdata.properties()) << '\n';
}

void print_steps(const DeviceData& devdata, const std::string& where, const OccupancySweep& sweep,
                 const std::optional<std::size_t>& current,
                 const std::optional<OccupancyImprovement>& improvement,
                 const std::optional<OccupancyRecord>& current_record) {
  const auto& first = sweep.records.front();
  const bool regs = sweep.parameter == "registers";
  command_out() << device_text(devdata, where) << '\n'
                << (regs ? "Register sweep: " : "Shared-memory sweep: ") << first.threads
                << " threads per block, "
                << (regs ? format_bytes(first.shared_mem) + " shared memory"
                         : std::to_string(first.registers) + " registers per thread")
                << "\n\n";
  const std::string heading = regs ? "registers" : "shared memory (B)";
  const std::size_t width = regs ? 9 : 17;
  command_out() << pad(heading, width) << "  blocks/SM  warps/SM  occupancy  limited by\n";
  for (const auto& step : sweep_steps(sweep)) {
    const std::string range = step.first == step.last
                                  ? std::to_string(step.first)
                                  : std::to_string(step.first) + "-" + std::to_string(step.last);
    command_out() << pad(range, width) << "  " << right(std::to_string(step.tb_per_mp), 9) << "  "
                  << right(std::to_string(step.warps_per_mp), 8) << "  "
                  << right(percent(step.occupancy), 9) << "  "
                  << pad(std::string(step.limited_by), 10) << "  " << bar(step.occupancy);
    if (current && *current >= step.first && *current <= step.last)
      command_out() << "  <- " << (regs ? "--regs " : "--smem ") << *current;
    command_out() << '\n';
  }
  if (improvement && current_record)
    command_out() << '\n' << improvement_text(*improvement, *current_record) << '\n';
}

}  // namespace cudatool::app
