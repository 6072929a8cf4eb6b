#include "cudatool/occupancy/kernel_occupancy.hpp"

#include <algorithm>
#include <exception>

namespace cudatool {

std::optional<std::string> block_size_problem(const KernelResources& kernel,
                                              const KernelBounds& bounds, bool relocatable,
                                              int threads) {
  if (relocatable)
    return "relocatable code: its registers, stack and shared memory are final only after the "
           "device link";
  if (bounds.reqntid) {
    const auto& d = *bounds.reqntid;
    const long long required = 1LL * d[0] * d[1] * d[2];
    if (required != threads)
      return "the kernel requires blocks of exactly " + std::to_string(required) + " threads (" +
             std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]) + ")";
  }
  if (threads > kernel.max_threads_per_block)
    return "the kernel allows at most " + std::to_string(kernel.max_threads_per_block) +
           " threads per block" +
           (bounds.max_threads ? " (its launch bounds)" : " (its registers)");
  return std::nullopt;
}

KernelOccupancy occupancy_for_kernel(const DeviceData& devdata, const KernelResources& kernel,
                                     const KernelBounds& bounds, bool relocatable, int threads) {
  KernelOccupancy o;
  o.threads = threads;
  if (auto problem = block_size_problem(kernel, bounds, relocatable, threads)) {
    o.reason = std::move(*problem);
    return o;
  }
  if (const auto unknown = occupancy_unknown(devdata)) {
    o.reason = unknown->message();
    return o;
  }
  try {
    o.record.emplace(devdata, threads, static_cast<std::size_t>(kernel.shared_size_bytes),
                     kernel.num_regs, std::max(1, kernel.num_barriers));
  } catch (const std::exception& e) {
    o.reason = e.what();
  }
  apply_cluster_dims(o, devdata, bounds.cluster);
  return o;
}

void apply_cluster_dims(KernelOccupancy& o, const DeviceData& devdata,
                        const std::optional<std::array<int, 3>>& cluster) {
  if (!cluster || !o.record) return;
  const ClusterDims dims{std::max(1, (*cluster)[0]), std::max(1, (*cluster)[1]),
                         std::max(1, (*cluster)[2])};
  const ClusterTopology* topology = cluster_topology_for(devdata, o.cluster_reason);
  if (!topology) return;
  o.clusters = cluster_occupancy(*topology, o.record->tb_per_mp, dims, true);
}

const DeviceData* ArchitectureTable::find(const Arch& arch, std::string& reason) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(arch);
  if (it == entries_.end()) {
    Entry e;
    try {
      e.data.emplace(arch);
    } catch (const std::exception& ex) {
      e.reason = "the architecture table has no " + arch.str() + " (" + ex.what() + ")";
    }
    it = entries_.emplace(arch, std::move(e)).first;
  }
  reason = it->second.reason;
  return it->second.data ? &*it->second.data : nullptr;
}

KernelOccupancy occupancy_for_kernel(ArchitectureTable& table, const Arch& arch,
                                     const KernelResources& kernel, const KernelBounds& bounds,
                                     bool relocatable, int threads) {
  KernelOccupancy o;
  o.threads = threads;
  if (auto problem = block_size_problem(kernel, bounds, relocatable, threads)) {
    o.reason = std::move(*problem);
    return o;
  }
  const DeviceData* devdata = table.find(arch, o.reason);
  if (!devdata) return o;
  return occupancy_for_kernel(*devdata, kernel, bounds, relocatable, threads);
}

}  // namespace cudatool
