#include <cstdio>
#include <string>
#include <vector>

#include "occupancy_report.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

void print_records(const std::vector<OccupancyRecord>& records, bool header) {
  if (header)
    print_csv_row({"threads", "registers", "shared_mem_bytes", "block_barriers", "blocks_per_sm",
                   "warps_per_sm", "max_warps_per_sm", "occupancy", "limited_by"});
  for (const OccupancyRecord& r : records) {
    char occupancy[32];
    std::snprintf(occupancy, sizeof occupancy, "%.6g", r.occupancy);
    print_csv_row({std::to_string(r.threads), std::to_string(r.registers),
                   std::to_string(r.shared_mem), std::to_string(r.block_barriers),
                   std::to_string(r.tb_per_mp), std::to_string(r.warps_per_mp),
                   std::to_string(r.max_warps_per_mp), occupancy, std::string(r.limited_by)});
  }
}

}  // namespace

// One line per record (the one launch, or each step of a sweep): the inputs and the
// outcome, occupancy as a fraction. Where occupancy is unknown, no line, and why on stderr.
void print_occupancy_csv(const OccupancyReport& report, bool header) {
  if (report.unknown) {
    print_records({}, header);
    std::string fields;
    for (const auto& field : report.unknown->fields) fields += (fields.empty() ? "" : ", ") + field;
    print_message("occupancy unknown: the architecture table does not know " + fields + " for " +
                  report.devdata.properties().name);
  } else if (report.sweep) {
    print_records(report.sweep->records, header);
  } else {
    print_records({*report.record}, header);
  }
}

}  // namespace cudatool::app
