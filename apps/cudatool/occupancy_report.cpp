#include "occupancy_report.hpp"

namespace cudatool::app {
namespace {

// The clusters of a launch (--cluster): from the product's measured GPCs, or the reason
// there is no such answer.
void answer_clusters(OccupancyReport& r) {
  if (!r.topology) r.topology = cluster_topology_for(r.devdata, r.cluster_reason);
  if (!r.topology) return;
  const int blocks = r.record->tb_per_mp;
  r.clusters = cluster_occupancy(*r.topology, blocks, *r.cluster, r.non_portable);
  r.cluster_sizes = sweep_cluster_sizes(*r.topology, blocks, r.non_portable);
  r.max_potential_cluster_size = max_potential_cluster_size(*r.topology, blocks, r.non_portable);
}

}  // namespace

OccupancyReport launch_report(const DeviceData& devdata, const OccupancyRecord& record) {
  OccupancyReport r{devdata,
                    {},
                    {},
                    OccupancyQuestion::launch,
                    record.threads,
                    record.registers,
                    record.shared_mem,
                    record.block_barriers};
  r.record = record;
  if (auto fewer = fewer_registers_for_more_blocks(devdata, record))
    r.improvements.push_back(*fewer);
  if (auto less = less_shared_memory_for_more_blocks(devdata, record))
    r.improvements.push_back(*less);
  return r;
}

void answer_occupancy(OccupancyReport& r, std::vector<int> block_sizes, bool given_regs,
                      bool given_smem) {
  const DeviceData& d = r.devdata;
  if ((r.unknown = occupancy_unknown(d))) return;
  if (r.question == OccupancyQuestion::block_sizes) {
    const bool listed = !block_sizes.empty();
    if (!listed) block_sizes = default_block_sizes(d);
    r.sweep = sweep_block_sizes(d, block_sizes, r.shared_mem, r.registers, r.barriers);
    r.suggestion = listed ? suggest_block_size(d, *r.sweep)
                          : suggest_block_size(d, r.shared_mem, r.registers, r.barriers);
    return;
  }
  const int threads = *r.threads;
  r.record.emplace(d, threads, r.shared_mem, r.registers, r.barriers);
  if (r.question == OccupancyQuestion::registers) {
    r.sweep = sweep_registers(d, threads, r.shared_mem, r.barriers);
    if (given_regs) {
      r.current = static_cast<std::size_t>(r.registers);
      r.improvement = fewer_registers_for_more_blocks(d, *r.record);
    }
  } else if (r.question == OccupancyQuestion::shared_memory) {
    r.sweep = sweep_shared_memory(d, threads, r.registers, r.barriers);
    if (given_smem) {
      r.current = r.shared_mem;
      r.improvement = less_shared_memory_for_more_blocks(d, *r.record);
    }
  } else {
    if (auto fewer = fewer_registers_for_more_blocks(d, *r.record))
      r.improvements.push_back(*fewer);
    if (auto less = less_shared_memory_for_more_blocks(d, *r.record))
      r.improvements.push_back(*less);
    if (r.cluster) answer_clusters(r);
  }
}

}  // namespace cudatool::app
