#include "cudatool/occupancy/cluster_occupancy.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

// One row of share/cluster_topologies.json, as lib/CMakeLists.txt writes it out.
struct ClusterTopologyRow {
  const char* product;
  const char* compute_capability;  // "9.0"
  const char* measured;
  const char* device_names;  // "NVIDIA H200,..."
  const char* gpc_sms;       // "18,18,16"
  int sm_count, max_cluster_blocks_per_sm, max_portable_cluster_size, max_cluster_size;
  bool architecture_default;
};

constexpr ClusterTopologyRow kRows[] = {
#include "cluster_topology_table.inc"
};

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

int whole(std::string_view text, const char* what) {
  int value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || value < 1)
    throw Error(std::string("cluster topology table: bad ") + what + " \"" + std::string(text) +
                "\"");
  return value;
}

std::vector<ClusterTopology> load() {
  std::vector<ClusterTopology> rows;
  for (const auto& row : kRows) {
    ClusterTopology t;
    t.product = row.product;
    t.device_names = split(row.device_names);
    const std::string cc = row.compute_capability;
    const auto dot = cc.find('.');
    if (dot == std::string::npos)
      throw Error("cluster topology table: bad compute capability " + cc);
    t.compute_capability = {whole(cc.substr(0, dot), "major"), 0};
    const std::string minor = cc.substr(dot + 1);
    t.compute_capability.minor = minor == "0" ? 0 : whole(minor, "minor");
    t.sm_count = row.sm_count;
    t.architecture_default = row.architecture_default;
    for (const auto& n : split(row.gpc_sms)) t.gpc_sms.push_back(whole(n, "gpc_sms"));
    std::sort(t.gpc_sms.rbegin(), t.gpc_sms.rend());
    int sum = 0;
    for (const int n : t.gpc_sms) sum += n;
    if (sum != t.sm_count)
      throw Error("cluster topology table: the GPCs of " + t.product + " hold " +
                  std::to_string(sum) + " SMs, not its " + std::to_string(t.sm_count));
    t.max_cluster_blocks_per_sm = row.max_cluster_blocks_per_sm;
    t.max_portable_cluster_size = row.max_portable_cluster_size;
    t.max_cluster_size = row.max_cluster_size;
    t.measured = row.measured;
    rows.push_back(std::move(t));
  }
  return rows;
}

const std::vector<ClusterTopology>& table() {
  static const std::vector<ClusterTopology> rows = load();
  return rows;
}

// Lower case without spaces, '-' and '_': "H100 SXM" and "h100-sxm" are one name.
std::string folded(std::string_view name) {
  std::string out;
  for (const char ch : name)
    if (ch != ' ' && ch != '-' && ch != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

std::span<const ClusterTopology> known_cluster_topologies() {
  return table();
}

const ClusterTopology* find_cluster_topology(std::string_view name) {
  const std::string key = folded(name);
  for (const auto& t : table()) {
    if (folded(t.product) == key) return &t;
    for (const auto& device : t.device_names)
      if (folded(device) == key) return &t;
  }
  return nullptr;
}

const ClusterTopology* cluster_topology_for(const DeviceData& devdata, std::string& reason) {
  const auto& p = devdata.properties();
  if (p.compute_capability.major < 9) {
    reason = "compute capability " + p.compute_capability.str() +
             " has no thread-block clusters (9.0 and later)";
    return nullptr;
  }
  if (devdata.origin() == DeviceDataOrigin::device) {
    for (const auto& t : table())
      if (t.compute_capability == p.compute_capability && p.sm_count == t.sm_count &&
          std::find(t.device_names.begin(), t.device_names.end(), p.name) != t.device_names.end())
        return &t;
    reason = "the cluster answer for " + p.name + " (" +
             (p.sm_count ? std::to_string(*p.sm_count) : std::string("?")) +
             " SMs) is unknown offline: no measurement of its GPCs is in cudatool's table";
    return nullptr;
  }
  if (devdata.origin() == DeviceDataOrigin::architecture_table) {
    if (p.sm_count_part == "given") {
      reason = "the cluster answer for " + std::to_string(p.sm_count.value_or(0)) + " SMs of " +
               p.name + " is unknown: it depends on the product's GPCs, not the SM count";
      return nullptr;
    }
    for (const auto& t : table())
      if (t.architecture_default && t.compute_capability == p.compute_capability &&
          p.sm_count == t.sm_count)
        return &t;
    reason = "the cluster answer for " + p.name +
             (p.sm_count_part.empty() ? std::string() : " (" + p.sm_count_part + ")") +
             " is unknown: no measurement of its GPCs is in cudatool's table";
    return nullptr;
  }
  reason = "the cluster answer for custom device properties is unknown: name a product";
  return nullptr;
}

ClusterOccupancy cluster_occupancy(const ClusterTopology& topology, int blocks_per_sm,
                                   ClusterDims cluster, bool non_portable) {
  if (cluster.x < 1 || cluster.y < 1 || cluster.z < 1)
    throw UsageError("cluster dimensions " + std::to_string(cluster.x) + "x" +
                     std::to_string(cluster.y) + "x" + std::to_string(cluster.z) +
                     ": each must be at least 1");
  if (blocks_per_sm < 0) throw UsageError("blocks per SM cannot be negative");
  ClusterOccupancy o;
  o.cluster = cluster;
  o.blocks_per_sm = blocks_per_sm;
  o.cluster_blocks_per_sm = std::min(blocks_per_sm, topology.max_cluster_blocks_per_sm);
  const long long size = 1LL * cluster.x * cluster.y * cluster.z;
  const int limit = non_portable ? topology.max_cluster_size : topology.max_portable_cluster_size;
  if (size > limit) {
    o.limited_by = "cluster_size";
    return o;
  }
  const int c = static_cast<int>(size);
  if (blocks_per_sm == 0) {
    o.limited_by = "blocks";
    return o;
  }
  for (const int n : topology.gpc_sms) {
    if (n < c) continue;
    const int here = n * o.cluster_blocks_per_sm / c;
    o.max_active_clusters += here;
    if (here > 0) ++o.gpcs_used;
  }
  o.active_blocks = o.max_active_clusters * c;
  if (o.max_active_clusters == 0)
    o.limited_by = "gpc";
  else if (o.cluster_blocks_per_sm < blocks_per_sm)
    o.limited_by = "cluster_blocks_per_sm";
  else
    o.limited_by = "occupancy";
  return o;
}

int max_potential_cluster_size(const ClusterTopology& topology, int blocks_per_sm,
                               bool non_portable) {
  if (blocks_per_sm <= 0) return 0;
  const int limit = non_portable ? topology.max_cluster_size : topology.max_portable_cluster_size;
  const int largest = topology.gpc_sms.empty() ? 0 : topology.gpc_sms.front();
  return std::min(limit, largest);
}

std::vector<ClusterOccupancy> sweep_cluster_sizes(const ClusterTopology& topology,
                                                  int blocks_per_sm, bool non_portable) {
  const int limit = non_portable ? topology.max_cluster_size : topology.max_portable_cluster_size;
  std::vector<ClusterOccupancy> sweep;
  sweep.reserve(static_cast<std::size_t>(limit));
  for (int c = 1; c <= limit; ++c)
    sweep.push_back(cluster_occupancy(topology, blocks_per_sm, {c, 1, 1}, non_portable));
  return sweep;
}

}  // namespace cudatool
