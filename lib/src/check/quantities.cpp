// The quantities check's results measure, and the base unit each is held in.
#include "cudatool/check/check.hpp"

namespace cudatool::check {

const std::vector<Quantity>& all_quantities() {
  static const std::vector<Quantity> all = {
      Quantity::qualifying_devices,   Quantity::cuda_devices,
      Quantity::other_processes,      Quantity::memory_used_by_others,
      Quantity::gpu_utilization,      Quantity::compute_wrong_elements,
      Quantity::device_to_device,     Quantity::host_to_device,
      Quantity::device_to_host,       Quantity::peer_copy,
      Quantity::ecc_enabled,          Quantity::ecc_uncorrected_errors,
      Quantity::retired_pages,        Quantity::uncorrectable_remapped_rows,
      Quantity::clock_event_reasons,  Quantity::pcie_link,
      Quantity::nvlinks_up,           Quantity::xid_events,
      Quantity::other_gpu_xid_events, Quantity::kernel_log_lines};
  return all;
}

BaseUnit base_unit(Quantity q) {
  switch (q) {
    case Quantity::memory_used_by_others:
      return BaseUnit::bytes;
    case Quantity::gpu_utilization:
      return BaseUnit::ratio;
    case Quantity::device_to_device:
    case Quantity::host_to_device:
    case Quantity::device_to_host:
    case Quantity::peer_copy:
    case Quantity::pcie_link:
      return BaseUnit::bytes_per_second;
    default:
      return BaseUnit::number;
  }
}

}  // namespace cudatool::check
