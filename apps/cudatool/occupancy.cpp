// cudatool occupancy: resident blocks and warps per SM for a block size, register count
// and shared-memory size, what limits them, and sweeps over each parameter. With --arch
// it works from the compiled-in architecture table and never loads the driver.
// Options -> the request (occupancy_request.cpp) and the device (or table row) -> the
// library's answer, whole (OccupancyReport) -> its text, JSON or CSV (occupancy_report.hpp).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"
#include "cudatool/compile/driver_clusters.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "occupancy_command.hpp"
#include "occupancy_report.hpp"

namespace cudatool::app {
namespace {

// The measured products, as --product takes them without quoting ("H100-SXM"), for completion.
std::vector<std::string> cluster_product_names() {
  std::vector<std::string> names;
  for (const ClusterTopology& t : known_cluster_topologies()) {
    std::string name = t.product;
    for (char& ch : name)
      if (ch == ' ') ch = '-';
    names.push_back(std::move(name));
  }
  return names;
}

// --device --cluster: the driver's own answers, for a stand-in kernel of the launch's blocks
// per SM; where the driver cannot answer, the reason (the measured GPCs' answer stays).
void ask_driver_for_clusters(OccupancyReport& report, const Device& device) {
  const int blocks = report.record->tb_per_mp;
  if (report.devdata.properties().compute_capability.major < 9) {
    report.driver_error = "compute capability " +
                          report.devdata.properties().compute_capability.str() +
                          " has no thread-block clusters";
    return;
  }
  if (blocks == 0) {
    report.driver_error = "no block of the launch fits on an SM";
    return;
  }
  try {
    const Context context(device);
    const ClusterDims& c = *report.cluster;
    report.driver_clusters = driver_cluster_occupancy(
        context, blocks, c.x, c.y, c.z, report.non_portable, report.non_portable ? 16 : 8);
  } catch (const Error& e) {
    report.driver_error = e.what();
  }
}

// --product: its architecture's table row with the product's SM count.
DeviceData product_data(const ClusterTopology& product) {
  DeviceProperties p = DeviceData(Arch{.cc = product.compute_capability}, "--product").properties();
  p.sm_count = product.sm_count;
  p.sm_count_part = product.product;
  return DeviceData(std::move(p), DeviceDataOrigin::architecture_table);
}

ExitStatus run(const OccupancyOptions& o, Format format) {
  const OccupancyReport report = occupancy_report(o);
  if (format == Format::json)
    print_occupancy_json(report);
  else if (format == Format::text)
    print_occupancy_text(report);
  else
    print_occupancy_csv(report, format == Format::csv);
  return ExitStatus::success;
}

}  // namespace

OccupancyReport occupancy_report(OccupancyRequest request, DeviceData devdata, std::string where) {
  if (request.sms) devdata.set_sm_count(*request.sms);
  OccupancyReport report{.devdata = std::move(devdata),
                         .where = std::move(where),
                         .source = std::move(request.source),
                         .question = request.question,
                         .threads = request.threads,
                         .registers = request.registers,
                         .shared_mem = request.shared_mem,
                         .barriers = request.barriers,
                         .cluster = request.cluster,
                         .non_portable = request.non_portable,
                         .topology = request.product};
  answer_occupancy(report, std::move(request.block_sizes), request.given_registers,
                   request.given_shared_mem);
  return report;
}

OccupancyReport occupancy_report(const OccupancyOptions& o) {
  // Flags first: a malformed value is a usage error even where no GPU is.
  OccupancyRequest request = occupancy_request(o);
  // The table only, no driver: --arch as given, --product's row, or the kernel's image's
  // architecture.
  if (request.arch) {
    DeviceData devdata(*request.arch, "--arch", *o.arch);
    return occupancy_report(std::move(request), std::move(devdata), "");
  }
  if (request.product) {
    DeviceData devdata = product_data(*request.product);
    return occupancy_report(std::move(request), std::move(devdata), "");
  }
  if (request.source && !o.device) {
    DeviceData devdata(request.source->arch, "architecture");
    return occupancy_report(std::move(request), std::move(devdata), "");
  }
  use_device_cache(o.fresh, "--fresh");
  const Device device = select_device(o.device, "--device");
  OccupancyReport report = occupancy_report(std::move(request), DeviceData(device),
                                            "device " + std::to_string(device.ordinal()));
  if (report.cluster && report.record) ask_driver_for_clusters(report, device);
  return report;
}

Command add_occupancy(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "occupancy",
      "Resident blocks and warps per SM for a launch, what limits them, and sweeps (exact: the "
      "toolkit's cuda_occupancy.h; --arch needs no GPU)");
  auto o = std::make_shared<OccupancyOptions>();
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  sub->add_option("--threads,-t", o->threads, "Threads per block (1 to the device's maximum)");
  sub->add_option("--regs,-r", o->regs, "Registers per thread (default 0)");
  sub->add_option("--smem,-s", o->smem,
                  "Shared memory per block, static plus dynamic: 49152, 48K, 48KiB (default 0)");
  sub->add_option("--barriers", o->barriers, "Named block barriers per block (default 1)");
  sub->add_option("--arch,-a", o->arch,
                  "Architecture instead of a device, no GPU or driver needed: sm_90, sm_90a, "
                  "sm_100f, 9.0, compute_90 (excludes --device)")
      ->check(completion_choices(architecture_names()));
  sub->add_option("--device,-d", o->device,
                  "Device: ordinal, PCI bus id or UUID (default: CUDA_DEVICE, ~/.cuda-device, 0)");
  sub->add_option("--kernel-from", o->kernel_from,
                  "Take registers, static shared memory and barriers from a kernel of this "
                  "compiled binary (with --kernel; --smem then adds dynamic shared memory)");
  sub->add_option("--kernel", o->kernel,
                  "The kernel of --kernel-from: a regular expression matching one kernel's "
                  "mangled or demangled name");
  sub->add_option("--sms", o->sms, "Override the SM count (for the minimum grid size)");
  sub->add_option("--cluster", o->cluster,
                  "Thread-block clusters of N (or X,Y,Z) blocks: the clusters the whole GPU "
                  "holds, the largest cluster size, and every size (exact for measured "
                  "products; --device, --product, --arch)");
  sub->add_flag("--non-portable", o->non_portable,
                "The kernel allows non-portable cluster sizes (above 8, up to 16 on Hopper)");
  sub->add_option("--product", o->product,
                  "A GPU product instead of --arch, no GPU needed, for answers that depend on "
                  "the product (clusters): H200, H100-SXM")
      ->check(completion_choices(cluster_product_names()));
  add_fresh_flag(*sub, o->fresh);
  CLI::Option* sweep =
      sub->add_option("--sweep", o->sweep_list,
                      "Sweep block sizes: every multiple of the warp size, or a list "
                      "(--sweep 64,128,256)")
          ->expected(0, 1)
          ->default_str("all");
  sub->add_flag("--sweep-regs", o->sweep_regs,
                "Sweep registers per thread 0..255 for --threads: where the cliffs are");
  sub->add_flag("--sweep-smem", o->sweep_smem,
                "Sweep shared memory per block up to the opt-in limit for --threads");
  return {sub, [o, sweep, &global]() {
            o->sweep = sweep->count() > 0;
            return run(*o, global.format);
          }};
}

}  // namespace cudatool::app
