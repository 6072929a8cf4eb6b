// The one writer of a kernel's occupancy object (KernelOccupancy, occupancy/kernel_occupancy.hpp):
// `kernels --json` streams it for each kernel, `compile --json` nests it in each kernel. Its
// keys: cluster_reason, limited_by, max_active_clusters, occupancy, reason, tb_per_mp,
// threads, warps_per_mp (the numbers null and reason set where there is no occupancy; reason
// null otherwise). max_active_clusters: for a kernel with compile-time cluster dimensions, the
// clusters the GPU holds; null with cluster_reason where that is unknown, null with a null
// cluster_reason where the kernel has no compile-time cluster dimensions.
#pragma once

#include <string_view>

#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

inline void write_json(JsonStream& out, const KernelOccupancy& oc) {
  out.begin_object();
  if (oc.cluster_reason.empty())
    out.member("cluster_reason", nullptr);
  else
    out.member("cluster_reason", oc.cluster_reason);
  if (oc.record) {
    out.member("limited_by", std::string_view(oc.record->limited_by));
    if (oc.clusters)
      out.member("max_active_clusters", oc.clusters->max_active_clusters);
    else
      out.member("max_active_clusters", nullptr);
    out.member("occupancy", oc.record->occupancy)
        .member("reason", nullptr)
        .member("tb_per_mp", oc.record->tb_per_mp)
        .member("threads", oc.threads)
        .member("warps_per_mp", oc.record->warps_per_mp);
  } else {
    out.member("limited_by", nullptr)
        .member("max_active_clusters", nullptr)
        .member("occupancy", nullptr)
        .member("reason", oc.reason)
        .member("tb_per_mp", nullptr)
        .member("threads", oc.threads)
        .member("warps_per_mp", nullptr);
  }
  out.end_object();
}

}  // namespace cudatool::app
