// check's Prometheus metrics by quantity (render_check.hpp, quantity_metric): the table that
// names each quantity's metric, its unit and its HELP text.
#include <string_view>

#include "render_check.hpp"

namespace cudatool::app {
namespace {

// How each quantity becomes a metric: cudatool_check_<base>[_<unit>], in the base unit
// (Prometheus' naming rules: bytes, seconds, ratios; a count is named by what it counts), and
// its threshold cudatool_check_<base>_<min|max|limit|expected>[_<unit>] by the comparison
// (value >= min, <= max, < limit, == expected), as node_exporter names its hwmon and
// conntrack limits.
std::string_view unit_suffix(check::BaseUnit unit) {
  switch (unit) {
    case check::BaseUnit::number:
      return "";
    case check::BaseUnit::bytes:
      return "bytes";
    case check::BaseUnit::bytes_per_second:
      return "bytes_per_second";
    case check::BaseUnit::ratio:
      return "ratio";
  }
  return "";
}

QuantityMetric metric(std::string_view base, check::Quantity q, std::string_view help) {
  return {base, unit_suffix(check::base_unit(q)), help};
}

}  // namespace

QuantityMetric quantity_metric(check::Quantity q) {
  using check::Quantity;
  switch (q) {
    case Quantity::none:
      return {};
    case Quantity::qualifying_devices:
      return metric("qualifying_devices", q, "Devices that meet the --min-* requirements.");
    case Quantity::other_processes:
      return metric("other_processes", q, "Other processes with a context on the GPU (NVML).");
    case Quantity::memory_used_by_others:
      return metric("memory_used_by_others", q,
                    "Device memory other processes hold (NVML, read before cudatool's own "
                    "context).");
    case Quantity::gpu_utilization:
      return metric("gpu_utilization", q,
                    "The highest GPU utilization NVML read over the check's window, 0 to 1.");
    case Quantity::compute_wrong_elements:
      return metric("compute_wrong_elements", q,
                    "Elements the compute kernel got wrong (every element is compared on the "
                    "host).");
    case Quantity::device_to_device:
      return metric("device_to_device", q,
                    "Device memory copy rate (a copy's read + write), median of 5.");
    case Quantity::host_to_device:
      return metric("host_to_device", q,
                    "Host-to-device copy rate from pinned memory, median of 5.");
    case Quantity::device_to_host:
      return metric("device_to_host", q,
                    "Device-to-host copy rate into pinned memory, median of 5.");
    case Quantity::peer_copy:
      return metric("peer_copy", q, "Peer copy rate from the GPU to peer_gpu, median of 5.");
    case Quantity::ecc_enabled:
      return metric("ecc_enabled", q, "1 when ECC is enabled, 0 when it is disabled (NVML).");
    case Quantity::ecc_uncorrected_errors:
      return metric("ecc_uncorrected_errors", q,
                    "Volatile uncorrected ECC errors since the driver loaded (NVML).");
    case Quantity::retired_pages:
      return metric("retired_pages", q, "Retired pages, both causes (NVML).");
    case Quantity::uncorrectable_remapped_rows:
      return metric("uncorrectable_remapped_rows", q,
                    "Rows remapped for uncorrectable errors (NVML).");
    case Quantity::clock_event_reasons:
      return metric("clock_event_reasons", q,
                    "NVML's clock-event (throttle) reason bits, as a number (cudatool(1), CLOCK "
                    "EVENTS).");
    case Quantity::pcie_link:
      return metric(
          "pcie_link", q,
          "The PCIe link's rate, one direction, at the generation and width read while busy.");
    case Quantity::nvlinks_up:
      return metric("nvlinks_up", q, "NVLinks up (NVML).");
    case Quantity::xid_events:
      return metric("xid_events", q, "XIDs of the GPU in the kernel log since boot.");
    case Quantity::other_gpu_xid_events:
      return metric("other_gpu_xid_events", q,
                    "XIDs since boot of PCI devices that are none of the checked GPUs.");
    case Quantity::kernel_log_lines:
      return metric("kernel_log_lines", q, "Kernel log lines read for XIDs.");
    case Quantity::cuda_devices:
      return metric("cuda_devices", q, "GPUs CUDA lists, beside those NVML knows of (_expected).");
  }
  return {};
}

}  // namespace cudatool::app
