// Health: NVML's readings judged against the thresholds of DCGM's diagnostics (ECC,
// retired and remapped rows, XID, clock-event reasons, PCIe link, NVLinks, temperatures,
// power), with the table of clock-event reasons.
#include <string>

#include "check/reason_format.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

using detail::fixed;
using detail::join;

const std::vector<ThrottleReason>& throttle_reason_table() {
  // nvmlClocksEventReasons bits. DCGM's diagnostics fail a test on the first four (its
  // clocks-event mask: HW slowdown, SW thermal, HW thermal, HW power brake); here the
  // hardware's own slowdowns (board signal, over-temperature, external power brake) fail, as
  // they halve the clocks or more and mean cooling or power delivery is at fault, and the
  // driver's thermal slowdown warns (clocks held down near the temperature limit).
  static const std::vector<ThrottleReason> table = {
      {0x1, "gpu_idle", Verdict::pass},
      {0x2, "applications_clocks_setting", Verdict::pass},
      {0x4, "sw_power_cap", Verdict::pass},
      {0x8, "hw_slowdown", Verdict::fail},
      {0x10, "sync_boost", Verdict::pass},
      {0x20, "sw_thermal_slowdown", Verdict::warn},
      {0x40, "hw_thermal_slowdown", Verdict::fail},
      {0x80, "hw_power_brake_slowdown", Verdict::fail},
      {0x100, "display_clock_setting", Verdict::pass}};
  return table;
}

std::vector<std::string> throttle_reason_names(unsigned long long reasons) {
  std::vector<std::string> out;
  unsigned long long rest = reasons & ~1ull;  // 0x1: the GPU is idle
  for (const auto& reason : throttle_reason_table())
    if (rest & reason.bit) {
      out.emplace_back(reason.name);
      rest &= ~reason.bit;
    }
  if (rest) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", rest);
    out.push_back(hex);
  }
  return out;
}

namespace {

CheckResult health(std::string name) {
  CheckResult r;
  r.kind = Kind::health;
  r.name = std::move(name);
  return r;
}

CheckResult not_reported(std::string name, const std::string& what) {
  CheckResult r = health(std::move(name));
  r.verdict = Verdict::skipped;
  r.reason = "NVML does not report " + what + " for this device";
  return r;
}

// A reading of `quantity` against `threshold`.
void measure(CheckResult& r, Quantity quantity, double value, double threshold,
             Comparison comparison) {
  r.quantity = quantity;
  r.value = value;
  r.threshold = threshold;
  r.comparison = comparison;
}

// NVML does not know the GPU (skipped) or cannot reach it (failed, by its error).
CheckResult nvml_not_found(const NvmlHealth& h) {
  CheckResult r = health("nvml");
  const int error = h.lookup_error.value_or(6);
  if (error == 6 || error == 2) {  // NOT_FOUND, INVALID_ARGUMENT: NVML does not list it
    r.verdict = Verdict::skipped;
    r.reason = "NVML does not know this device's PCI bus id";
    return r;
  }
  // The GPU is there but NVML cannot talk to it.
  r.verdict = Verdict::fail;
  r.reason = "NVML cannot reach the GPU: " + nvml_error_name(error);
  if (error == 15) {
    r.reason += " (the GPU is lost: it has fallen off the bus)";
    r.remediation = Remediation::reboot_node;
  } else if (error == 16) {
    r.reason += " (the GPU needs a reset)";
    r.remediation = Remediation::reset_gpu;
  } else {
    r.remediation = Remediation::reset_gpu;
  }
  return r;
}

CheckResult ecc_mode(const NvmlHealth& h) {
  if (!h.ecc_enabled) return not_reported("ecc_mode", "an ECC mode");
  CheckResult r = health("ecc_mode");
  measure(r, Quantity::ecc_enabled, *h.ecc_enabled ? 1 : 0, 1, Comparison::equal);
  r.verdict = *h.ecc_enabled ? Verdict::pass : Verdict::warn;
  r.reason = *h.ecc_enabled ? "ECC enabled" : "ECC disabled";
  if (h.ecc_pending && *h.ecc_pending != *h.ecc_enabled) {
    r.verdict = Verdict::warn;
    r.reason +=
        std::string(", ") + (*h.ecc_pending ? "enabled" : "disabled") + " after the next reboot";
  }
  return r;
}

// Volatile uncorrected ECC errors (since the driver loaded).
CheckResult ecc_uncorrected(const NvmlHealth& h) {
  if (!h.ecc_uncorrected_volatile) {
    CheckResult r = not_reported("ecc_uncorrected", "uncorrected ECC errors");
    if (h.ecc_enabled && !*h.ecc_enabled) r.reason = "ECC is disabled";
    return r;
  }
  CheckResult r = health("ecc_uncorrected");
  measure(r, Quantity::ecc_uncorrected_errors, static_cast<double>(*h.ecc_uncorrected_volatile), 0,
          Comparison::at_most);
  r.verdict = *h.ecc_uncorrected_volatile == 0 ? Verdict::pass : Verdict::fail;
  r.reason = std::to_string(*h.ecc_uncorrected_volatile) +
             " uncorrected ECC errors since the driver loaded";
  return r;
}

// Retired pages (before Ampere; later GPUs remap rows instead).
CheckResult retired_pages(const NvmlHealth& h) {
  if (!h.retired_pages && !h.retired_pages_pending) {
    CheckResult r = not_reported("retired_pages", "page retirement");
    r.reason += " (GPUs from Ampere on remap rows instead)";
    return r;
  }
  CheckResult r = health("retired_pages");
  const unsigned pages = h.retired_pages.value_or(0);
  measure(r, Quantity::retired_pages, pages, 63, Comparison::below);
  std::vector<std::string> problems;
  if (h.retired_pages_pending.value_or(false))
    problems.push_back("a page retirement is pending (reset the GPU)");
  if (pages >= 63) problems.push_back(std::to_string(pages) + " pages retired (limit 63)");
  r.verdict = problems.empty() ? Verdict::pass : Verdict::fail;
  r.reason =
      problems.empty() ? std::to_string(pages) + " pages retired, none pending" : join(problems);
  // Pending: retired when the driver reloads (a reboot); the limit reached: the memory is
  // worn out.
  if (pages >= 63)
    r.remediation = Remediation::drain_inspect;
  else if (!problems.empty())
    r.remediation = Remediation::reboot_node;
  return r;
}

// Row remapping (Ampere on).
CheckResult row_remap(const NvmlHealth& h) {
  if (!h.remapped_rows_uncorrectable) return not_reported("row_remap", "row remapping");
  CheckResult r = health("row_remap");
  const unsigned rows = *h.remapped_rows_uncorrectable;
  measure(r, Quantity::uncorrectable_remapped_rows, rows, 512, Comparison::below);
  std::vector<std::string> problems;
  if (h.remap_pending.value_or(false))
    problems.push_back("a row remap is pending (applied at the next reset or reboot)");
  if (h.remap_failed.value_or(false))
    problems.push_back("a row remap failed (no spare row left in a bank)");
  if (rows >= 512)
    problems.push_back(std::to_string(rows) +
                       " rows remapped for uncorrectable errors (limit 512)");
  r.verdict = problems.empty() ? Verdict::pass : Verdict::fail;
  r.reason = problems.empty() ? std::to_string(rows) + " uncorrectable and " +
                                    std::to_string(h.remapped_rows_correctable.value_or(0)) +
                                    " correctable rows remapped, none pending or failed"
                              : join(problems);
  // As gpud tells them apart: pending needs a reboot to take effect; failed, or too many,
  // is memory to replace.
  if (h.remap_failed.value_or(false) || rows >= 512)
    r.remediation = Remediation::drain_inspect;
  else if (!problems.empty())
    r.remediation = Remediation::reboot_node;
  return r;
}

// Clock events (throttling), by meaning (throttle_reason_table).
CheckResult throttle(const NvmlHealth& h) {
  if (!h.throttle_reasons) return not_reported("throttle", "clock event reasons");
  CheckResult r = health("throttle");
  r.quantity = Quantity::clock_event_reasons;
  r.value = static_cast<double>(*h.throttle_reasons);
  r.verdict = Verdict::pass;
  std::vector<std::string> faults, normal;
  unsigned long long rest = *h.throttle_reasons;
  for (const auto& reason : throttle_reason_table()) {
    if (!(rest & reason.bit)) continue;
    rest &= ~reason.bit;
    r.verdict = worse(r.verdict, reason.verdict);
    (reason.verdict == Verdict::pass ? normal : faults)
        .push_back(std::string(reason.name) +
                   (reason.verdict == Verdict::pass
                        ? ""
                        : " (" + std::string(verdict_name(reason.verdict)) + ")"));
  }
  if (rest) {
    // A bit newer than this table: named by its value, and a warning until it is known.
    char hex[64];
    std::snprintf(hex, sizeof hex, "0x%llx (unknown: warn)", rest);
    faults.push_back(hex);
    r.verdict = worse(r.verdict, Verdict::warn);
  }
  if (faults.empty())
    r.reason = normal.empty() ? "no clock events" : "normal clock events: " + join(normal);
  else
    r.reason =
        "clocks held down by " + join(faults) + (normal.empty() ? "" : "; normal: " + join(normal));
  return r;
}

// The PCIe link, read while busy, against its maximum generation and width.
CheckResult pcie_link(const NvmlHealth& h, const std::optional<PcieLink>& busy_link) {
  if (!h.pcie_max_generation || !h.pcie_max_width)
    return not_reported("pcie_link", "the PCIe link's maximum");
  CheckResult r = health("pcie_link");
  if (!busy_link) {
    r.verdict = Verdict::skipped;
    r.reason = "the link was not read while busy (NVML gave no current generation and width)";
    return r;
  }
  measure(r, Quantity::pcie_link,
          pcie_theoretical_gbps(busy_link->generation, busy_link->width) * kBytesPerGB,
          pcie_theoretical_gbps(*h.pcie_max_generation, *h.pcie_max_width) * kBytesPerGB,
          Comparison::at_least);
  const bool ok =
      busy_link->generation >= *h.pcie_max_generation && busy_link->width >= *h.pcie_max_width;
  r.verdict = ok ? Verdict::pass : Verdict::fail;
  r.reason = "Gen" + std::to_string(busy_link->generation) + " x" +
             std::to_string(busy_link->width) + " while busy, maximum Gen" +
             std::to_string(*h.pcie_max_generation) + " x" + std::to_string(*h.pcie_max_width);
  if (!ok) {
    std::vector<std::string> below;
    if (busy_link->generation < *h.pcie_max_generation) below.push_back("generation");
    if (busy_link->width < *h.pcie_max_width) below.push_back("width");
    r.reason += ": the link trained below its maximum " + join(below) +
                " under load (downtrained: reseat or replace the card, riser or cable)";
    r.remediation = Remediation::drain_inspect;
  }
  return r;
}

CheckResult nvlinks(const NvmlHealth& h) {
  CheckResult r = health("nvlink");
  std::vector<std::string> down;
  int up = 0;
  for (const auto& l : h.nvlinks) {
    if (l.active)
      ++up;
    else
      down.push_back(std::to_string(l.link));
  }
  if (h.nvlinks.empty()) {
    r.verdict = Verdict::skipped;
    r.reason = "no NVLink";
  } else if (up == 0) {
    // All down: a card without bridges, or a VM given one GPU of a board; not a verdict.
    r.verdict = Verdict::skipped;
    r.reason =
        "none of " + std::to_string(h.nvlinks.size()) + " NVLinks is up (no NVLink connection)";
  } else {
    measure(r, Quantity::nvlinks_up, up, static_cast<double>(h.nvlinks.size()),
            Comparison::at_least);
    r.verdict = down.empty() ? Verdict::pass : Verdict::fail;
    r.reason = down.empty() ? std::to_string(up) + " NVLinks up"
                            : "NVLinks down: " + join(down) + " (" + std::to_string(up) + " of " +
                                  std::to_string(h.nvlinks.size()) + " up)";
  }
  return r;
}

// The NVLink fabric (NVSwitch systems: the fabric manager's registration of the GPU).
CheckResult nvlink_fabric(const NvmlHealth& h) {
  CheckResult r = health("nvlink_fabric");
  if (!h.fabric_state || *h.fabric_state == 0) {
    r.verdict = Verdict::skipped;
    r.reason = "no NVLink fabric (NVML reports no fabric state for this GPU)";
  } else if (*h.fabric_state != 3) {
    r.verdict = Verdict::warn;
    r.reason = std::string("the NVLink fabric registration has ") +
               (*h.fabric_state == 1 ? "not started" : "not finished") +
               " (nvidia-fabricmanager): CUDA fails on this GPU until it completes";
  } else if (h.fabric_status.value_or(0) != 0) {
    r.verdict = Verdict::fail;
    r.reason = "the NVLink fabric registration failed (nvmlReturn_t " +
               std::to_string(*h.fabric_status) +
               "): restart nvidia-fabricmanager or reboot the node";
    r.remediation = Remediation::reboot_node;
  } else {
    r.verdict = Verdict::pass;
    r.reason = "NVLink fabric registration completed";
  }
  return r;
}

}  // namespace

std::vector<CheckResult> health_results(const NvmlHealth& h,
                                        const std::optional<PcieLink>& busy_link) {
  if (!h.found) return {nvml_not_found(h)};
  return {ecc_mode(h), ecc_uncorrected(h),      retired_pages(h), row_remap(h),
          throttle(h), pcie_link(h, busy_link), nvlinks(h),       nvlink_fabric(h)};
}

}  // namespace cudatool::check
