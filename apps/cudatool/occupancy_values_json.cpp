// The JSON of the occupancy domain's structs (occupancy_json.hpp): records, limits,
// improvements, sweeps, suggestions and the device data.
#include "occupancy_json.hpp"

namespace cudatool::app {

void write_json(JsonStream& out, const OccupancyUnknown& unknown) {
  out.value(JsonObject()
                .set("architecture", unknown.architecture)
                .set("unknown_fields", unknown.fields)
                .set("reason", unknown.reason));
}

void write_json(JsonStream& out, const BlockLimits& limits) {
  out.value(JsonObject()
                .set("device", limits.device)
                .set("warps", limits.warps)
                .set("regs", limits.regs)
                .set("smem", limits.smem)
                .set("barriers", limits.barriers));
}

JsonObject record_object(const OccupancyRecord& r) {
  JsonObject j;
  j.set("threads", r.threads)
      .set("shared_mem", r.shared_mem)
      .set("registers", r.registers)
      .set("block_barriers", r.block_barriers)
      .set("tb_per_mp", r.tb_per_mp)
      .set("limited_by", r.limited_by)
      .set("limiting_factors", r.limiting_factors())
      .set("warps_per_mp", r.warps_per_mp)
      .set("max_warps_per_mp", r.max_warps_per_mp)
      .set("occupancy", r.occupancy)
      .set("block_limits", r.limits)
      .set("allocated_registers_per_block", r.allocated_registers_per_block)
      .set("allocated_shared_mem_per_block", r.allocated_shared_mem_per_block)
      .set("opted_in", r.opted_in);
  return j;
}

void write_json(JsonStream& out, const OccupancyRecord& r) {
  out.value(record_object(r));
}

void write_json(JsonStream& out, const OccupancyImprovement& improvement) {
  out.value(JsonObject()
                .set("resource", improvement.resource)
                .set("value", improvement.value)
                .set("reduction", improvement.reduction)
                .set("tb_per_mp", improvement.tb_per_mp)
                .set("occupancy", improvement.occupancy));
}

void write_json(JsonStream& out, const SweepStep& step) {
  out.value(JsonObject()
                .set("first", step.first)
                .set("last", step.last)
                .set("tb_per_mp", step.tb_per_mp)
                .set("warps_per_mp", step.warps_per_mp)
                .set("occupancy", step.occupancy)
                .set("limited_by", step.limited_by));
}

void write_json(JsonStream& out, const OccupancySweep& sweep) {
  out.value(JsonObject().set("parameter", sweep.parameter).set("records", sweep.records));
}

void write_json(JsonStream& out, const BlockSizeSuggestion& s) {
  out.value(JsonObject()
                .set("block_size", s.block_size)
                .set("tb_per_mp", s.tb_per_mp)
                .set("occupancy", s.occupancy)
                .set("smallest_block_size", s.smallest_block_size)
                .set("min_grid_size", s.min_grid_size));
}

namespace {

JsonObject properties_object(const DeviceProperties& p) {
  JsonObject j;
  j.set("name", p.name)
      .set("family", p.family)
      .set("compute_capability", p.compute_capability.str())
      .set("max_threads_per_block", p.max_threads_per_block)
      .set("warp_size", p.warp_size)
      .set("max_threads_per_multiprocessor", p.max_threads_per_multiprocessor)
      .set("max_blocks_per_multiprocessor", p.max_blocks_per_multiprocessor)
      .set("registers_per_multiprocessor", p.registers_per_multiprocessor)
      .set("registers_per_block", p.registers_per_block)
      .set("max_registers_per_thread", p.max_registers_per_thread)
      .set("register_allocation_granularity", p.register_allocation_granularity)
      .set("shared_memory_per_multiprocessor", p.shared_memory_per_multiprocessor)
      .set("shared_memory_per_block", p.shared_memory_per_block)
      .set("shared_memory_per_block_optin", p.shared_memory_per_block_optin)
      .set("reserved_shared_memory_per_block", p.reserved_shared_memory_per_block)
      .set("shared_memory_allocation_granularity", p.shared_memory_allocation_granularity)
      .set("shared_memory_banks", p.shared_memory_banks)
      .set("cache_line_size", p.cache_line_size)
      .set("sm_count", p.sm_count)
      .set("unknown_fields", p.unknown_fields);
  if (p.sm_count)
    j.set("sm_count_part", p.sm_count_part);
  else
    j.set("sm_count_part", nullptr);
  if (p.unknown_fields.empty())
    j.set("unknown_reason", nullptr);
  else
    j.set("unknown_reason", p.unknown_reason);
  if (p.family.empty()) j.set("family", nullptr);
  // What the table does not know is null, as in share/architectures.json.
  for (const auto& field : p.unknown_fields) j.set(field, nullptr);
  return j;
}

}  // namespace

void write_json(JsonStream& out, const DeviceProperties& p) {
  out.value(properties_object(p));
}

void write_json(JsonStream& out, const DeviceData& data) {
  JsonObject j = properties_object(data.properties());
  j.set("origin", origin_name(data.origin()));
  // PyCUDA's names for the same values.
  auto known = [&](const char* name, int value, std::initializer_list<const char*> fields) {
    for (const char* field : fields)
      if (!data.knows(field)) {
        j.set(name, nullptr);
        return;
      }
    j.set(name, value);
  };
  known("max_threads", data.max_threads(), {"max_threads_per_block"});
  known("warps_per_mp", data.warps_per_mp(), {"max_threads_per_multiprocessor", "warp_size"});
  known("thread_blocks_per_mp", data.thread_blocks_per_mp(), {"max_blocks_per_multiprocessor"});
  known("registers", data.registers(), {"registers_per_block"});
  if (data.knows("shared_memory_per_block"))
    j.set("shared_memory", data.shared_memory());
  else
    j.set("shared_memory", nullptr);
  known("smem_granularity", data.smem_granularity(), {"shared_memory_banks"});
  known("smem_alloc_granularity", data.smem_alloc_granularity(),
        {"shared_memory_allocation_granularity"});
  out.value(j);
}

}  // namespace cudatool::app
