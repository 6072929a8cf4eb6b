// How check's text and JSON show a result's number: each quantity's unit as people read it
// (GB/s, GiB, percent, or what a count counts) and the number in that unit, from the base
// unit the library holds it in; and the comparison's symbol.
#include <cmath>

#include "render_check.hpp"

namespace cudatool::app {

using check::Comparison;
using check::Quantity;

std::string_view display_unit(Quantity q) {
  switch (q) {
    case Quantity::none:
      return "";
    case Quantity::qualifying_devices:
    case Quantity::cuda_devices:
      return "devices";
    case Quantity::other_processes:
      return "processes";
    case Quantity::memory_used_by_others:
      return "GiB";
    case Quantity::gpu_utilization:
      return "%";
    case Quantity::compute_wrong_elements:
      return "wrong elements";
    case Quantity::device_to_device:
    case Quantity::host_to_device:
    case Quantity::device_to_host:
    case Quantity::peer_copy:
    case Quantity::pcie_link:
      return "GB/s";
    case Quantity::ecc_enabled:
      return "enabled";
    case Quantity::ecc_uncorrected_errors:
      return "errors";
    case Quantity::retired_pages:
      return "pages";
    case Quantity::uncorrectable_remapped_rows:
      return "rows";
    case Quantity::clock_event_reasons:
      return "reason bits";
    case Quantity::nvlinks_up:
      return "links";
    case Quantity::xid_events:
    case Quantity::other_gpu_xid_events:
      return "events";
    case Quantity::kernel_log_lines:
      return "lines";
  }
  return "";
}

double display_value(Quantity q, double base) {
  switch (check::base_unit(q)) {
    case check::BaseUnit::bytes:
      return base / (1024.0 * 1024.0 * 1024.0);  // GiB
    case check::BaseUnit::bytes_per_second:
      return base / check::kBytesPerGB;  // GB/s
    case check::BaseUnit::ratio:
      // A percent, to a billionth of one: NVML reads whole percents, and 0.07 x 100 is
      // 7.000000000000001 in binary.
      return std::round(base * 1e11) / 1e9;
    case check::BaseUnit::number:
      return base;
  }
  return base;
}

std::string_view comparison_symbol(Comparison c) {
  switch (c) {
    case Comparison::none:
      return "";
    case Comparison::at_least:
      return ">=";
    case Comparison::at_most:
      return "<=";
    case Comparison::below:
      return "<";
    case Comparison::equal:
      return "==";
  }
  return "";
}

}  // namespace cudatool::app
