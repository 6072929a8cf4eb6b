// OccupancyRecord (libcudatool's own, constructed here and read in place: about a third of a
// microsecond a record), and occupancy(): the sweeps and a kernel's occupancy, `cudatool
// occupancy`'s request and report (occupancy_command.hpp) with its JSON renderer; a sweep answers
// on the DeviceData its caller holds.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "occupancy_command.hpp"
#include "occupancy_report.hpp"

namespace cudatool::python {
namespace {

using namespace nb::literals;

struct PyOccupancyRecord {
  OccupancyRecord record;
  nb::object devdata;  // the PyDeviceData it was computed for
};

// `cluster`: N, or (X, Y, Z).
ClusterDims cluster_dims_of(nb::handle cluster) {
  if (nb::isinstance<nb::int_>(cluster)) return {nb::cast<int>(cluster), 1, 1};
  try {
    const auto dims = nb::cast<std::tuple<int, int, int>>(cluster);
    return {std::get<0>(dims), std::get<1>(dims), std::get<2>(dims)};
  } catch (const nb::cast_error&) {
    throw nb::type_error("cluster must be an int or a tuple (x, y, z) of ints");
  }
}

// The measured product whose GPCs answer for the record's device data; RequirementError
// with the reason where none is measured (never an estimate).
const ClusterTopology& topology_of(const PyOccupancyRecord& r) {
  std::string reason;
  const ClusterTopology* t = cluster_topology_for(device_data_of(r.devdata).data, reason);
  if (!t) throw RequirementError(reason);
  return *t;
}

// occupancy()'s values are the flags' (occupancy_command.hpp): checked by the same parser,
// with the same messages, as `cudatool occupancy` checks them.
nb::object occupancy(nb::handle devdata, app::OccupancyOptions options) {
  std::optional<app::OccupancyReport> report;
  if (devdata.is_none()) {
    nb::gil_scoped_release unlocked;
    report.emplace(app::occupancy_report(options));
  } else {
    const PyDeviceData& d = device_data_of(devdata);
    app::OccupancyRequest request = app::occupancy_request(options);
    nb::gil_scoped_release unlocked;
    report.emplace(app::occupancy_report(std::move(request), d.data, d.where));
  }
  return document(app::occupancy_json(*report));
}

}  // namespace

void bind_occupancy(nb::module_& m) {
  nb::class_<PyOccupancyRecord>(
      m, "OccupancyRecord",
      "Exact occupancy (PyCUDA's OccupancyRecord; the toolkit's cuda_occupancy.h, what "
      "cuOccupancyMaxActiveBlocksPerMultiprocessor answers) of blocks of `threads` threads, "
      "`shared_mem` bytes of shared memory in total and `registers` per thread: tb_per_mp, "
      "limited_by, warps_per_mp, occupancy, block_limits. to_dict() is `cudatool occupancy "
      "--json` for the same inputs.")
      .def(
          "__init__",
          [](PyOccupancyRecord* self, nb::handle devdata, int threads, std::size_t shared_mem,
             int registers, int block_barriers) {
            new (self) PyOccupancyRecord{OccupancyRecord(device_data_of(devdata).data, threads,
                                                         shared_mem, registers, block_barriers),
                                         nb::borrow(devdata)};
          },
          "devdata"_a, "threads"_a, "shared_mem"_a = 0, "registers"_a = 0, "block_barriers"_a = 1)
      .def_prop_ro("devdata", [](const PyOccupancyRecord& r) { return r.devdata; })
      .def_prop_ro("threads", [](const PyOccupancyRecord& r) { return r.record.threads; })
      .def_prop_ro("shared_mem", [](const PyOccupancyRecord& r) { return r.record.shared_mem; })
      .def_prop_ro("registers", [](const PyOccupancyRecord& r) { return r.record.registers; })
      .def_prop_ro("block_barriers",
                   [](const PyOccupancyRecord& r) { return r.record.block_barriers; })
      .def_prop_ro("tb_per_mp", [](const PyOccupancyRecord& r) { return r.record.tb_per_mp; })
      .def_prop_ro("limited_by", [](const PyOccupancyRecord& r) { return r.record.limited_by; })
      .def_prop_ro("limiting_factors",
                   [](const PyOccupancyRecord& r) {
                     std::vector<std::string> names;
                     for (const auto n : r.record.limiting_factors()) names.emplace_back(n);
                     return names;
                   })
      .def_prop_ro("warps_per_mp", [](const PyOccupancyRecord& r) { return r.record.warps_per_mp; })
      .def_prop_ro("max_warps_per_mp",
                   [](const PyOccupancyRecord& r) { return r.record.max_warps_per_mp; })
      .def_prop_ro("occupancy", [](const PyOccupancyRecord& r) { return r.record.occupancy; })
      .def_prop_ro("block_limits",
                   [](const PyOccupancyRecord& r) {
                     const BlockLimits& l = r.record.limits;
                     const auto or_none = [](const std::optional<int>& v) {
                       return v ? nb::object(nb::int_(*v)) : nb::none();
                     };
                     nb::dict d;
                     d["barriers"] = or_none(l.barriers);
                     d["device"] = l.device;
                     d["regs"] = or_none(l.regs);
                     d["smem"] = or_none(l.smem);
                     d["warps"] = l.warps;
                     return d;
                   })
      .def_prop_ro(
          "allocated_registers_per_block",
          [](const PyOccupancyRecord& r) { return r.record.allocated_registers_per_block; })
      .def_prop_ro(
          "allocated_shared_mem_per_block",
          [](const PyOccupancyRecord& r) { return r.record.allocated_shared_mem_per_block; })
      .def_prop_ro("opted_in", [](const PyOccupancyRecord& r) { return r.record.opted_in; })
      .def_prop_ro("improvements",
                   [](const PyOccupancyRecord& r) {
                     const DeviceData& data = device_data_of(r.devdata).data;
                     nb::list list;
                     if (auto fewer = fewer_registers_for_more_blocks(data, r.record))
                       list.append(to_python(*fewer));
                     if (auto less = less_shared_memory_for_more_blocks(data, r.record))
                       list.append(to_python(*less));
                     return list;
                   })
      .def(
          "max_active_clusters",
          [](const PyOccupancyRecord& r, nb::handle cluster, bool non_portable) {
            return cluster_occupancy(topology_of(r), r.record.tb_per_mp, cluster_dims_of(cluster),
                                     non_portable)
                .max_active_clusters;
          },
          "cluster"_a, "non_portable"_a = false,
          "The clusters of `cluster` blocks (N or (x, y, z)) the whole GPU holds at once, as "
          "cuOccupancyMaxActiveClusters answers (cuda.core's name); 0 for a size the kernel "
          "may not launch. From the product's measured GPCs (`occupancy --cluster`); "
          "RequirementError where none are measured.")
      .def(
          "max_potential_cluster_size",
          [](const PyOccupancyRecord& r, bool non_portable) {
            return max_potential_cluster_size(topology_of(r), r.record.tb_per_mp, non_portable);
          },
          "non_portable"_a = false,
          "The largest cluster size with an active cluster (cuOccupancyMaxPotentialClusterSize): "
          "up to 8, or 16 on Hopper with non_portable.")
      .def(
          "cluster_occupancy",
          [](const PyOccupancyRecord& r, nb::handle cluster, bool non_portable) {
            const ClusterTopology& t = topology_of(r);
            const ClusterOccupancy c =
                cluster_occupancy(t, r.record.tb_per_mp, cluster_dims_of(cluster), non_portable);
            nb::dict d;
            d["dims"] = nb::make_tuple(c.cluster.x, c.cluster.y, c.cluster.z);
            d["max_active_clusters"] = c.max_active_clusters;
            d["max_potential_cluster_size"] =
                max_potential_cluster_size(t, r.record.tb_per_mp, non_portable);
            d["active_blocks"] = c.active_blocks;
            d["cluster_blocks_per_sm"] = c.cluster_blocks_per_sm;
            d["gpcs_used"] = c.gpcs_used;
            d["limited_by"] = std::string(c.limited_by);
            d["product"] = t.product;
            d["gpc_sms"] = t.gpc_sms;
            d["measured"] = t.measured;
            return d;
          },
          "cluster"_a, "non_portable"_a = false,
          "max_active_clusters with its parts: what limits it, the GPCs used, the product whose "
          "measured GPCs answer and where they were measured.")
      .def("to_dict",
           [](const PyOccupancyRecord& r) {
             const app::OccupancyReport report =
                 app::launch_report(device_data_of(r.devdata).data, r.record);
             return json_loads(app::json_document(app::occupancy_json(report)));
           })
      .def("__repr__", [](const PyOccupancyRecord& r) {
        char occupancy[32];
        std::snprintf(occupancy, sizeof occupancy, "%.4g", r.record.occupancy);
        return "OccupancyRecord(threads=" + std::to_string(r.record.threads) +
               ", shared_mem=" + std::to_string(r.record.shared_mem) +
               ", registers=" + std::to_string(r.record.registers) +
               ") <tb_per_mp=" + std::to_string(r.record.tb_per_mp) + ", limited_by='" +
               std::string(r.record.limited_by) +
               "', warps_per_mp=" + std::to_string(r.record.warps_per_mp) +
               ", occupancy=" + occupancy + ">";
      });

  m.def(
      "occupancy",
      [](nb::handle devdata, std::optional<std::string> threads, std::optional<std::string> regs,
         std::optional<std::string> smem, std::optional<std::string> barriers,
         std::optional<std::string> sweep, bool sweep_regs, bool sweep_smem,
         std::optional<std::string> kernel_from, std::optional<std::string> kernel,
         std::optional<std::string> arch, std::optional<std::string> device) {
        app::OccupancyOptions o;
        o.threads = std::move(threads);
        o.regs = std::move(regs);
        o.smem = std::move(smem);
        o.barriers = std::move(barriers);
        o.sweep = sweep.has_value();
        o.sweep_list = sweep.value_or("all");
        o.sweep_regs = sweep_regs;
        o.sweep_smem = sweep_smem;
        o.kernel_from = std::move(kernel_from);
        o.kernel = std::move(kernel);
        o.arch = std::move(arch);
        o.device = std::move(device);
        return occupancy(devdata, std::move(o));
      },
      "devdata"_a.none(), "threads"_a.none() = nb::none(), "regs"_a.none() = nb::none(),
      "smem"_a.none() = nb::none(), "barriers"_a.none() = nb::none(), "sweep"_a.none() = nb::none(),
      "sweep_regs"_a = false, "sweep_smem"_a = false, "kernel_from"_a.none() = nb::none(),
      "kernel"_a.none() = nb::none(), "arch"_a.none() = nb::none(), "device"_a.none() = nb::none(),
      "`cudatool occupancy --json` with these flags' values (sweep: None, \"all\" or a list), "
      "on `devdata` where given: the document as a dict.");
}

}  // namespace cudatool::python
