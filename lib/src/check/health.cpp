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

}  // namespace

std::vector<CheckResult> health_results(const NvmlHealth& h,
                                        const std::optional<PcieLink>& busy_link) {
  std::vector<CheckResult> out;
  if (!h.found) {
    CheckResult r = health("nvml");
    const int error = h.lookup_error.value_or(6);
    if (error == 6 || error == 2) {  // NOT_FOUND, INVALID_ARGUMENT: NVML does not list it
      r.verdict = Verdict::skipped;
      r.reason = "NVML does not know this device's PCI bus id";
      return {r};
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
    return {r};
  }
  // ECC mode.
  if (!h.ecc_enabled) {
    out.push_back(not_reported("ecc_mode", "an ECC mode"));
  } else {
    CheckResult r = health("ecc_mode");
    r.value = *h.ecc_enabled ? 1 : 0;
    r.threshold = 1;
    r.comparison = "==";
    r.unit = "enabled";
    r.verdict = *h.ecc_enabled ? Verdict::pass : Verdict::warn;
    r.reason = *h.ecc_enabled ? "ECC enabled" : "ECC disabled";
    if (h.ecc_pending && *h.ecc_pending != *h.ecc_enabled) {
      r.verdict = Verdict::warn;
      r.reason +=
          std::string(", ") + (*h.ecc_pending ? "enabled" : "disabled") + " after the next reboot";
    }
    out.push_back(r);
  }
  // Volatile uncorrected ECC errors (since the driver loaded).
  if (!h.ecc_uncorrected_volatile) {
    CheckResult r = not_reported("ecc_uncorrected", "uncorrected ECC errors");
    if (h.ecc_enabled && !*h.ecc_enabled) r.reason = "ECC is disabled";
    out.push_back(r);
  } else {
    CheckResult r = health("ecc_uncorrected");
    r.value = static_cast<double>(*h.ecc_uncorrected_volatile);
    r.threshold = 0;
    r.comparison = "<=";
    r.unit = "errors";
    r.verdict = *h.ecc_uncorrected_volatile == 0 ? Verdict::pass : Verdict::fail;
    r.reason = std::to_string(*h.ecc_uncorrected_volatile) +
               " uncorrected ECC errors since the driver loaded";
    out.push_back(r);
  }
  // Retired pages (before Ampere; later GPUs remap rows instead).
  if (!h.retired_pages && !h.retired_pages_pending) {
    CheckResult r = not_reported("retired_pages", "page retirement");
    r.reason += " (GPUs from Ampere on remap rows instead)";
    out.push_back(r);
  } else {
    CheckResult r = health("retired_pages");
    const unsigned pages = h.retired_pages.value_or(0);
    r.value = pages;
    r.threshold = 63;
    r.comparison = "<";
    r.unit = "pages";
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
    out.push_back(r);
  }
  // Row remapping (Ampere on).
  if (!h.remapped_rows_uncorrectable) {
    out.push_back(not_reported("row_remap", "row remapping"));
  } else {
    CheckResult r = health("row_remap");
    const unsigned rows = *h.remapped_rows_uncorrectable;
    r.value = rows;
    r.threshold = 512;
    r.comparison = "<";
    r.unit = "rows";
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
    out.push_back(r);
  }
  // Clock throttling.
  if (!h.throttle_reasons) {
    out.push_back(not_reported("throttle", "clock event reasons"));
  } else {
    CheckResult r = health("throttle");
    r.value = static_cast<double>(*h.throttle_reasons);
    r.unit = "reason bits";
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
      r.reason = "clocks held down by " + join(faults) +
                 (normal.empty() ? "" : "; normal: " + join(normal));
    out.push_back(r);
  }
  // PCIe link, read while busy.
  if (!h.pcie_max_generation || !h.pcie_max_width) {
    out.push_back(not_reported("pcie_link", "the PCIe link's maximum"));
  } else if (!busy_link) {
    CheckResult r = health("pcie_link");
    r.verdict = Verdict::skipped;
    r.reason = "the link was not read while busy (NVML gave no current generation and width)";
    out.push_back(r);
  } else {
    CheckResult r = health("pcie_link");
    r.value = pcie_theoretical_gbps(busy_link->generation, busy_link->width);
    r.threshold = pcie_theoretical_gbps(*h.pcie_max_generation, *h.pcie_max_width);
    r.comparison = ">=";
    r.unit = "GB/s";
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
    out.push_back(r);
  }
  // NVLink.
  {
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
      r.value = up;
      r.threshold = static_cast<double>(h.nvlinks.size());
      r.comparison = ">=";
      r.unit = "links";
      r.verdict = down.empty() ? Verdict::pass : Verdict::fail;
      r.reason = down.empty() ? std::to_string(up) + " NVLinks up"
                              : "NVLinks down: " + join(down) + " (" + std::to_string(up) + " of " +
                                    std::to_string(h.nvlinks.size()) + " up)";
    }
    out.push_back(r);
  }
  // NVLink fabric (NVSwitch systems: the fabric manager's registration of the GPU).
  {
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
    out.push_back(r);
  }
  return out;
}

}  // namespace cudatool::check
