// The health probe: NVML's readings judged (thresholds in health.cpp), with the PCIe link
// read under load where it idles below its maximum; and the link's maximum from sysfs where
// NVML cannot say.
#include <cctype>
#include <fstream>
#include <string>

#include "check/probes.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool::check::detail {

using cudatool::detail::DeviceBuffer;
using cudatool::detail::PinnedBuffer;

std::optional<PcieLink> sysfs_max_link(const std::string& pci_bus_id) {
  std::string id = pci_bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string base = "/sys/bus/pci/devices/" + id + "/";
  std::ifstream speed_file(base + "max_link_speed"), width_file(base + "max_link_width");
  double gts = 0;
  unsigned width = 0;
  if (!(speed_file >> gts) || !(width_file >> width)) return std::nullopt;
  unsigned gen = gts >= 64 ? 6 : gts >= 32 ? 5 : gts >= 16 ? 4 : gts >= 8 ? 3 : gts >= 5 ? 2 : 1;
  return PcieLink{gen, width};
}

void run_health(DeviceRun& run, const Options& options) {
  if (!run.health) {
    run.results.push_back(skipped(Kind::health, "health", run.nvml_why_not));
    return;
  }
  std::string unloaded_link;  // why a link idling below its maximum was not read under load
  if (run.health->found && run.health->pcie_max_generation && !run.busy_link) {
    // Not read during the host-link copies (that check was skipped): an idle link at its
    // maximum needs no traffic; one below it is read again under load.
    run.busy_link = nvml_current_pcie_link(run.info.pci_bus_id);
    if (run.busy_link && (run.busy_link->generation < *run.health->pcie_max_generation ||
                          run.busy_link->width < run.health->pcie_max_width.value_or(0))) {
      const PcieLink idle = *run.busy_link;
      run.busy_link.reset();  // an idle link below its maximum says nothing yet
      // Loading the link needs the device: where it cannot be had, the link is not judged
      // (and the other health readings still are).
      std::string why = !run.blocked.empty() ? run.blocked : run.fatal;
      if (why.empty()) try {
          run.ensure_context();
          PinnedBuffer host(run.ctx(), kComputeBytes);
          DeviceBuffer buffer(run.ctx(), kComputeBytes);
          CUstream s = run.stream->get();
          time_ops(
              *run.stream, 1, kRepetitions,
              [&] { CUDATOOL_CU(cuMemcpyHtoDAsync, buffer.get(), host.get(), kComputeBytes, s); },
              [&] { run.busy_link = nvml_current_pcie_link(run.info.pci_bus_id); });
        } catch (const std::exception& e) {
          why = e.what();
          run.busy_link.reset();
        }
      if (!run.busy_link)
        unloaded_link = "the link idles at Gen" + std::to_string(idle.generation) + " x" +
                        std::to_string(idle.width) +
                        ", below its maximum, and could not be read "
                        "under load: " +
                        why;
    }
  }
  for (auto& r : health_results(*run.health, run.busy_link)) {
    if (r.name == "pcie_link" && !unloaded_link.empty() && r.verdict == Verdict::skipped)
      r.reason = unloaded_link;
    // Clock events read while another process loads the device are partly its doing
    // (a thermal slowdown under its load): said, the verdict unchanged.
    if (r.name == "throttle") mark_shared(r, run.sharers, options.occupancy);
    run.results.push_back(r);
  }
}

}  // namespace cudatool::check::detail
