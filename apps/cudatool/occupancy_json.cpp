#include "occupancy_json.hpp"

#include "compile_json.hpp"
#include "occupancy_report.hpp"
#include "render.hpp"

namespace cudatool::app {

namespace {

// A member that is null where `present` is false.
template <class T>
void set_if(JsonObject& j, std::string_view name, bool present, const T& value) {
  if (present)
    j.set(name, value);
  else
    j.set(name, nullptr);
}

// --cluster: max_active_clusters and max_potential_cluster_size (cuda.core's names) at the
// top, and the cluster object: the product whose GPCs answer, the answer's parts and every
// size; every number null with the reason where no product's GPCs are measured.
void add_clusters(JsonObject& out, const OccupancyReport& report) {
  const ClusterDims& dims = *report.cluster;
  const ClusterOccupancy* c = report.clusters ? &*report.clusters : nullptr;
  const ClusterTopology* t = c ? report.topology : nullptr;
  std::vector<JsonObject> sizes;
  for (const ClusterOccupancy& s : report.cluster_sizes)
    sizes.push_back(JsonObject()
                        .set("size", s.cluster.size())
                        .set("max_active_clusters", s.max_active_clusters)
                        .set("active_blocks", s.active_blocks)
                        .set("limited_by", s.limited_by));
  // The driver's own answers win where it gave them (--device).
  const DriverClusterAnswer* d = report.driver_clusters ? &*report.driver_clusters : nullptr;
  if (d)
    out.set("max_active_clusters", d->max_active_clusters)
        .set("max_potential_cluster_size", d->max_potential_cluster_size);
  else
    out.set("max_active_clusters", c ? std::optional<int>(c->max_active_clusters) : std::nullopt)
        .set("max_potential_cluster_size", report.max_potential_cluster_size);
  JsonObject cluster;
  cluster.set("dims", dims.array())
      .set("size", dims.size())
      .set("non_portable", report.non_portable)
      .set("blocks_per_sm", report.record->tb_per_mp)
      .set("sizes", sizes);
  set_if(cluster, "product", t, t ? t->product : std::string());
  set_if(cluster, "gpc_sms", t, t ? t->gpc_sms : std::vector<int>());
  set_if(cluster, "measured", t, t ? t->measured : std::string());
  set_if(cluster, "reason", !c, report.cluster_reason);
  set_if(cluster, "cluster_blocks_per_sm", c, c ? c->cluster_blocks_per_sm : 0);
  set_if(cluster, "active_blocks", c, c ? c->active_blocks : 0);
  set_if(cluster, "gpcs_used", c, c ? c->gpcs_used : 0);
  set_if(cluster, "limited_by", c, c ? c->limited_by : std::string_view());
  if (d)
    cluster.set("source", "driver");
  else
    set_if(cluster, "source", c, "measured");
  set_if(cluster, "measured_max_active_clusters", c, c ? c->max_active_clusters : 0);
  if (d)
    cluster.set("driver", JsonObject()
                              .set("max_active_clusters", d->max_active_clusters)
                              .set("max_potential_cluster_size", d->max_potential_cluster_size)
                              .set("sizes", d->by_size)
                              .set("stand_in_blocks_per_sm", d->stand_in_blocks_per_sm)
                              .set("stand_in_shared_memory", d->stand_in_shared_memory));
  else
    cluster.set("driver", nullptr);
  cluster.text_or_null("driver_error", report.driver_error);
  out.set("cluster", cluster);
}

}  // namespace

// The occupancy document: the device (or table row), the kernel --kernel-from read, then the
// record's keys, a sweep's records and steps, or the unknown values with every number null.
JsonObject occupancy_json(const OccupancyReport& report) {
  JsonObject out;
  out.set("device", report.devdata);
  if (report.source)
    out.set("kernel", resources_object(report.source->kernel.resources)
                          .set("file", report.source->file)
                          .set("arch", report.source->arch.str()));
  if (report.unknown) {
    const char* parameter = report.question == OccupancyQuestion::block_sizes     ? "threads"
                            : report.question == OccupancyQuestion::registers     ? "registers"
                            : report.question == OccupancyQuestion::shared_memory ? "shared_mem"
                                                                                  : nullptr;
    out.set("threads", report.threads)
        .set("registers", report.registers)
        .set("shared_mem", report.shared_mem)
        .set("block_barriers", report.barriers)
        .set("tb_per_mp", nullptr)
        .set("occupancy", nullptr)
        .set("limited_by", nullptr);
    if (parameter) out.set("parameter", parameter).set("records", std::vector<int>());
    out.set("unknown", *report.unknown);
  } else if (report.question == OccupancyQuestion::launch) {
    out.merge(record_object(*report.record));
    out.set("improvements", report.improvements);
    if (report.cluster) add_clusters(out, report);
  } else {
    out.set("parameter", report.sweep->parameter).set("records", report.sweep->records);
    if (report.question == OccupancyQuestion::block_sizes)
      out.set("suggestion", *report.suggestion);
    else
      out.set("steps", sweep_steps(*report.sweep)).set("improvement", report.improvement);
  }
  return out;
}

void print_occupancy_json(const OccupancyReport& report) {
  print_json(occupancy_json(report));
}

}  // namespace cudatool::app
