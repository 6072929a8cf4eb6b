#include "occupancy_json.hpp"

#include "compile_json.hpp"
#include "occupancy_report.hpp"
#include "render.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const OccupancyUnknown& unknown) {
  j = nlohmann::json{{"architecture", unknown.architecture},
                     {"unknown_fields", unknown.fields},
                     {"reason", unknown.reason}};
}

void to_json(nlohmann::json& j, const BlockLimits& limits) {
  auto value = [](const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  j = nlohmann::json{{"device", limits.device},
                     {"warps", limits.warps},
                     {"regs", value(limits.regs)},
                     {"smem", value(limits.smem)},
                     {"barriers", value(limits.barriers)}};
}

void to_json(nlohmann::json& j, const OccupancyRecord& r) {
  j = nlohmann::json{
      {"threads", r.threads},
      {"shared_mem", r.shared_mem},
      {"registers", r.registers},
      {"block_barriers", r.block_barriers},
      {"tb_per_mp", r.tb_per_mp},
      {"limited_by", r.limited_by},
      {"limiting_factors", r.limiting_factors()},
      {"warps_per_mp", r.warps_per_mp},
      {"max_warps_per_mp", r.max_warps_per_mp},
      {"occupancy", r.occupancy},
      {"block_limits", r.limits},
      {"allocated_registers_per_block", r.allocated_registers_per_block},
      {"allocated_shared_mem_per_block", r.allocated_shared_mem_per_block},
      {"opted_in", r.opted_in},
  };
}

void to_json(nlohmann::json& j, const OccupancyImprovement& improvement) {
  j = nlohmann::json{{"resource", improvement.resource},
                     {"value", improvement.value},
                     {"reduction", improvement.reduction},
                     {"tb_per_mp", improvement.tb_per_mp},
                     {"occupancy", improvement.occupancy}};
}

void to_json(nlohmann::json& j, const SweepStep& step) {
  j = nlohmann::json{{"first", step.first},         {"last", step.last},
                     {"tb_per_mp", step.tb_per_mp}, {"warps_per_mp", step.warps_per_mp},
                     {"occupancy", step.occupancy}, {"limited_by", step.limited_by}};
}

void to_json(nlohmann::json& j, const OccupancySweep& sweep) {
  j = nlohmann::json{{"parameter", sweep.parameter}, {"records", sweep.records}};
}

void to_json(nlohmann::json& j, const BlockSizeSuggestion& s) {
  j = nlohmann::json{
      {"block_size", s.block_size},
      {"tb_per_mp", s.tb_per_mp},
      {"occupancy", s.occupancy},
      {"smallest_block_size", s.smallest_block_size},
      {"min_grid_size",
       s.min_grid_size ? nlohmann::json(*s.min_grid_size) : nlohmann::json(nullptr)},
  };
}

void to_json(nlohmann::json& j, const DeviceProperties& p) {
  j = nlohmann::json{
      {"name", p.name},
      {"family", p.family},
      {"compute_capability", p.compute_capability.str()},
      {"max_threads_per_block", p.max_threads_per_block},
      {"warp_size", p.warp_size},
      {"max_threads_per_multiprocessor", p.max_threads_per_multiprocessor},
      {"max_blocks_per_multiprocessor", p.max_blocks_per_multiprocessor},
      {"registers_per_multiprocessor", p.registers_per_multiprocessor},
      {"registers_per_block", p.registers_per_block},
      {"max_registers_per_thread", p.max_registers_per_thread},
      {"register_allocation_granularity", p.register_allocation_granularity},
      {"shared_memory_per_multiprocessor", p.shared_memory_per_multiprocessor},
      {"shared_memory_per_block", p.shared_memory_per_block},
      {"shared_memory_per_block_optin", p.shared_memory_per_block_optin},
      {"reserved_shared_memory_per_block", p.reserved_shared_memory_per_block},
      {"shared_memory_allocation_granularity", p.shared_memory_allocation_granularity},
      {"shared_memory_banks", p.shared_memory_banks},
      {"cache_line_size", p.cache_line_size},
      {"sm_count", p.sm_count ? nlohmann::json(*p.sm_count) : nlohmann::json(nullptr)},
      {"sm_count_part", p.sm_count ? nlohmann::json(p.sm_count_part) : nlohmann::json(nullptr)},
      {"unknown_fields", p.unknown_fields},
      {"unknown_reason",
       p.unknown_fields.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.unknown_reason)},
  };
  if (p.family.empty()) j["family"] = nullptr;
  // What the table does not know is null, as in share/architectures.json.
  for (const auto& field : p.unknown_fields) j[field] = nullptr;
}

void to_json(nlohmann::json& j, const DeviceData& data) {
  to_json(j, data.properties());
  j["origin"] = origin_name(data.origin());
  // PyCUDA's names for the same values.
  auto known = [&](int value, std::initializer_list<const char*> fields) {
    for (const char* field : fields)
      if (!data.knows(field)) return nlohmann::json(nullptr);
    return nlohmann::json(value);
  };
  j["max_threads"] = known(data.max_threads(), {"max_threads_per_block"});
  j["warps_per_mp"] = known(data.warps_per_mp(), {"max_threads_per_multiprocessor", "warp_size"});
  j["thread_blocks_per_mp"] = known(data.thread_blocks_per_mp(), {"max_blocks_per_multiprocessor"});
  j["registers"] = known(data.registers(), {"registers_per_block"});
  j["shared_memory"] = data.knows("shared_memory_per_block") ? nlohmann::json(data.shared_memory())
                                                             : nlohmann::json(nullptr);
  j["smem_granularity"] = known(data.smem_granularity(), {"shared_memory_banks"});
  j["smem_alloc_granularity"] =
      known(data.smem_alloc_granularity(), {"shared_memory_allocation_granularity"});
}

}  // namespace cudatool

namespace cudatool::app {
namespace {

nlohmann::json or_null(const std::optional<int>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// --cluster: max_active_clusters and max_potential_cluster_size (cuda.core's names) at the
// top, and the cluster object: the product whose GPCs answer, the answer's parts and every
// size; every number null with the reason where no product's GPCs are measured.
void add_clusters(nlohmann::json& out, const OccupancyReport& report) {
  const ClusterDims& dims = *report.cluster;
  const ClusterOccupancy* c = report.clusters ? &*report.clusters : nullptr;
  const ClusterTopology* t = c ? report.topology : nullptr;
  nlohmann::json sizes = nlohmann::json::array();
  for (const ClusterOccupancy& s : report.cluster_sizes)
    sizes.push_back({{"size", s.cluster.size()},
                     {"max_active_clusters", s.max_active_clusters},
                     {"active_blocks", s.active_blocks},
                     {"limited_by", s.limited_by}});
  // The driver's own answers win where it gave them (--device).
  const DriverClusterAnswer* d = report.driver_clusters ? &*report.driver_clusters : nullptr;
  out["max_active_clusters"] = d   ? nlohmann::json(d->max_active_clusters)
                               : c ? nlohmann::json(c->max_active_clusters)
                                   : nlohmann::json(nullptr);
  out["max_potential_cluster_size"] = d ? nlohmann::json(d->max_potential_cluster_size)
                                        : or_null(report.max_potential_cluster_size);
  out["cluster"] = {
      {"dims", dims.array()},
      {"size", dims.size()},
      {"non_portable", report.non_portable},
      {"product", t ? nlohmann::json(t->product) : nlohmann::json(nullptr)},
      {"gpc_sms", t ? nlohmann::json(t->gpc_sms) : nlohmann::json(nullptr)},
      {"measured", t ? nlohmann::json(t->measured) : nlohmann::json(nullptr)},
      {"reason", c ? nlohmann::json(nullptr) : nlohmann::json(report.cluster_reason)},
      {"blocks_per_sm", report.record->tb_per_mp},
      {"cluster_blocks_per_sm", c ? or_null(c->cluster_blocks_per_sm) : nullptr},
      {"active_blocks", c ? or_null(c->active_blocks) : nullptr},
      {"gpcs_used", c ? or_null(c->gpcs_used) : nullptr},
      {"limited_by", c ? nlohmann::json(c->limited_by) : nlohmann::json(nullptr)},
      {"sizes", sizes},
      {"source", d   ? nlohmann::json("driver")
                 : c ? nlohmann::json("measured")
                     : nlohmann::json(nullptr)},
      {"measured_max_active_clusters", c ? or_null(c->max_active_clusters) : nullptr},
      {"driver", d ? nlohmann::json{{"max_active_clusters", d->max_active_clusters},
                                    {"max_potential_cluster_size", d->max_potential_cluster_size},
                                    {"sizes", d->by_size},
                                    {"stand_in_blocks_per_sm", d->stand_in_blocks_per_sm},
                                    {"stand_in_shared_memory", d->stand_in_shared_memory}}
                   : nlohmann::json(nullptr)},
      {"driver_error",
       report.driver_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.driver_error)},
  };
}

}  // namespace

// The occupancy document: the device (or table row), the kernel --kernel-from read, then the
// record's keys, a sweep's records and steps, or the unknown values with every number null.
void print_occupancy_json(const OccupancyReport& report) {
  nlohmann::json out;
  out["device"] = report.devdata;
  if (report.source) {
    out["kernel"] = report.source->kernel.resources;
    out["kernel"]["file"] = report.source->file;
    out["kernel"]["arch"] = report.source->arch.str();
  }
  if (report.unknown) {
    const char* parameter = report.question == OccupancyQuestion::block_sizes     ? "threads"
                            : report.question == OccupancyQuestion::registers     ? "registers"
                            : report.question == OccupancyQuestion::shared_memory ? "shared_mem"
                                                                                  : nullptr;
    out["threads"] = report.threads ? nlohmann::json(*report.threads) : nlohmann::json(nullptr);
    out["registers"] = report.registers;
    out["shared_mem"] = report.shared_mem;
    out["block_barriers"] = report.barriers;
    out["tb_per_mp"] = nullptr;
    out["occupancy"] = nullptr;
    out["limited_by"] = nullptr;
    if (parameter) {
      out["parameter"] = parameter;
      out["records"] = nlohmann::json::array();
    }
    out["unknown"] = *report.unknown;
  } else if (report.question == OccupancyQuestion::launch) {
    out.update(nlohmann::json(*report.record));
    out["improvements"] = report.improvements;
    if (report.cluster) add_clusters(out, report);
  } else {
    out["parameter"] = report.sweep->parameter;
    out["records"] = report.sweep->records;
    if (report.question == OccupancyQuestion::block_sizes) {
      out["suggestion"] = *report.suggestion;
    } else {
      out["steps"] = sweep_steps(*report.sweep);
      out["improvement"] =
          report.improvement ? nlohmann::json(*report.improvement) : nlohmann::json(nullptr);
    }
  }
  print_json(out);
}

}  // namespace cudatool::app
