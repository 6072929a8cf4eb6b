// The threshold logic of `cudatool check`: pure functions of readings, tested without a GPU.
#include <algorithm>
#include <cstdio>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::warn:
      return "warn";
    case Verdict::fail:
      return "fail";
    case Verdict::skipped:
      return "skipped";
  }
  return "skipped";
}

namespace {
int severity(Verdict v) {
  switch (v) {
    case Verdict::skipped:
      return 0;
    case Verdict::pass:
      return 1;
    case Verdict::warn:
      return 2;
    case Verdict::fail:
      return 3;
  }
  return 0;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}
}  // namespace

Verdict worse(Verdict a, Verdict b) {
  return severity(a) >= severity(b) ? a : b;
}

Verdict DeviceReport::verdict() const {
  Verdict v = Verdict::skipped;
  for (const auto& c : checks) v = worse(v, c.verdict);
  return v;
}

Verdict Report::verdict() const {
  Verdict v = Verdict::skipped;
  for (const auto& c : node_checks) v = worse(v, c.verdict);
  for (const auto& d : devices) v = worse(v, d.verdict());
  return v;
}

const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds = {Kind::identity, Kind::occupancy, Kind::health,
                                          Kind::compute,  Kind::memory,    Kind::hostlink,
                                          Kind::peer};
  return kinds;
}

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::identity:
      return "identity";
    case Kind::occupancy:
      return "occupancy";
    case Kind::health:
      return "health";
    case Kind::compute:
      return "compute";
    case Kind::memory:
      return "memory";
    case Kind::hostlink:
      return "hostlink";
    case Kind::peer:
      return "peer";
  }
  return "identity";
}

std::set<Kind> parse_kind_list(std::string_view list, std::string_view source) {
  std::set<Kind> kinds;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = list.substr(start, end - start);
    bool found = false;
    for (Kind k : all_kinds())
      if (item == kind_name(k)) {
        kinds.insert(k);
        found = true;
      }
    if (!found) {
      std::string names;
      for (Kind k : all_kinds()) names += (names.empty() ? "" : ", ") + std::string(kind_name(k));
      throw UsageError(std::string(source) + " " + quote_input(list) + ": unknown check " +
                       quote_input(item) + " (checks: " + names + ")");
    }
    start = end + 1;
  }
  return kinds;
}

std::set<Kind> select_kinds(const std::optional<std::string>& only,
                            const std::optional<std::string>& skip) {
  if (only && skip) throw UsageError("--only and --skip exclude each other");
  if (only) return parse_kind_list(*only, "--only");
  std::set<Kind> kinds(all_kinds().begin(), all_kinds().end());
  if (skip)
    for (Kind k : parse_kind_list(*skip, "--skip")) kinds.erase(k);
  return kinds;
}

double pcie_lane_gbps(unsigned generation) {
  switch (generation) {
    case 1:
      return 2.5 * 8 / 10 / 8;  // 2.5 GT/s, 8b/10b
    case 2:
      return 5.0 * 8 / 10 / 8;
    case 3:
      return 8.0 * 128 / 130 / 8;  // 128b/130b
    case 4:
      return 16.0 * 128 / 130 / 8;
    case 5:
      return 32.0 * 128 / 130 / 8;
    case 6:
      return 64.0 * 242 / 256 / 8;  // PAM4 with 256-byte FLITs, 242 bytes of payload
    default:
      return 0;
  }
}

double pcie_theoretical_gbps(unsigned generation, unsigned width) {
  return pcie_lane_gbps(generation) * width;
}

double memory_theoretical_gbps(int bus_width_bits, int memory_clock_khz) {
  if (bus_width_bits <= 0 || memory_clock_khz <= 0) return 0;
  return bus_width_bits / 8.0 * memory_clock_khz * 1e3 * 2 / 1e9;
}

double nvlink_link_gbps(ComputeCapability cc) {
  switch (cc.major) {
    case 6:
      return cc.minor == 0 ? 20 : 0;
    case 7:
      return cc.minor == 0 ? 25 : 0;
    case 8:
      return cc.minor == 0 ? 25 : 0;
    case 9:
      return 26.5625;
    case 10:
      return 50;
    default:
      return 0;
  }
}

CheckResult rate_result(Kind kind, std::string name, double measured,
                        std::optional<double> theoretical, std::optional<double> minimum,
                        double fraction, const std::string& what) {
  CheckResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.value = measured;
  r.unit = "GB/s";
  r.comparison = ">=";
  const double theory = theoretical.value_or(0);  // 0: unknown
  double threshold = 0;
  if (minimum) {
    threshold = *minimum;
  } else if (theory > 0) {
    threshold = fraction * theory;
  } else {
    r.verdict = Verdict::skipped;
    r.reason = what + ": " + fixed(measured, 1) +
               " GB/s measured, but the theoretical rate is unknown; give a minimum";
    return r;
  }
  r.threshold = threshold;
  r.verdict = measured >= threshold ? Verdict::pass : Verdict::fail;
  r.reason = what + ": " + fixed(measured, 1) + " GB/s";
  if (theory > 0)
    r.reason += " of " + fixed(theory, 1) + " GB/s theoretical (" +
                fixed(100 * measured / theory, 0) + "%)";
  r.reason += minimum ? ", minimum " + fixed(*minimum, 1) + " GB/s given"
                      : ", need " + fixed(100 * fraction, 0) + "%";
  return r;
}

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

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::vector<CheckResult> health_results(const NvmlHealth& h,
                                        const std::optional<PcieLink>& busy_link) {
  std::vector<CheckResult> out;
  if (!h.found) {
    CheckResult r = health("nvml");
    r.verdict = Verdict::skipped;
    r.reason = "NVML does not know this device's PCI bus id";
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
      problems.push_back("a row remap is pending (reset the GPU)");
    if (h.remap_failed.value_or(false)) problems.push_back("a row remap failed");
    if (rows >= 512)
      problems.push_back(std::to_string(rows) +
                         " rows remapped for uncorrectable errors (limit 512)");
    r.verdict = problems.empty() ? Verdict::pass : Verdict::fail;
    r.reason = problems.empty() ? std::to_string(rows) + " uncorrectable and " +
                                      std::to_string(h.remapped_rows_correctable.value_or(0)) +
                                      " correctable rows remapped, none pending or failed"
                                : join(problems);
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
    if (!ok) r.reason += ": the link trained below its maximum";
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
  return out;
}

CheckResult compute_result(std::uint64_t mismatches, std::uint64_t elements, int sms_seen,
                           int sm_count, const std::string& form, const std::string& first_bad) {
  CheckResult r;
  r.kind = Kind::compute;
  r.name = "compute";
  r.value = static_cast<double>(mismatches);
  r.threshold = 0;
  r.comparison = "<=";
  r.unit = "wrong elements";
  const std::string where = std::to_string(elements) + " elements (" + format_bytes(elements * 4) +
                            "), " + form + ", blocks on " + std::to_string(sms_seen) + " of " +
                            std::to_string(sm_count) + " SMs";
  if (mismatches > 0) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(mismatches) + " of " + where + " wrong" +
               (first_bad.empty() ? "" : "; first: " + first_bad);
  } else if (sms_seen < sm_count) {
    r.verdict = Verdict::warn;
    r.reason = "all correct, but blocks ran on " + std::to_string(sms_seen) + " of " +
               std::to_string(sm_count) + " SMs: " + where;
  } else {
    r.verdict = Verdict::pass;
    r.reason = "all of " + where + " correct";
  }
  return r;
}

CheckResult identity_result(const DeviceInfo& d, const DeviceRequirements& requirements,
                            const std::optional<std::string>& expect_name) {
  CheckResult r;
  r.kind = Kind::identity;
  r.name = "identity";
  std::vector<std::string> problems;
  if (requirements.min_compute_capability &&
      d.compute_capability < *requirements.min_compute_capability)
    problems.push_back("compute capability " + d.compute_capability.str() + ", need " +
                       requirements.min_compute_capability->str());
  if (requirements.min_memory && d.total_memory < *requirements.min_memory)
    problems.push_back(format_bytes(d.total_memory) + " of memory, need " +
                       format_bytes(*requirements.min_memory));
  if (expect_name && d.name.find(*expect_name) == std::string::npos)
    problems.push_back("name \"" + d.name + "\" lacks \"" + *expect_name + "\"");
  r.verdict = problems.empty() ? Verdict::pass : Verdict::fail;
  r.reason = problems.empty()
                 ? d.name + ", " + d.compute_capability.sm() + ", " + format_bytes(d.total_memory) +
                       ", " + std::to_string(d.multiprocessor_count) + " SMs"
                 : join(problems);
  return r;
}

std::vector<CheckResult> node_identity_results(const std::vector<DeviceInfo>& devices,
                                               const DeviceRequirements& requirements,
                                               std::optional<int> expect_count) {
  std::vector<CheckResult> out;
  CheckResult count;
  count.kind = Kind::identity;
  count.name = "count";
  count.unit = "devices";
  const RequirementReport report = check_requirements(devices, requirements);
  count.value = report.qualifying;
  if (expect_count) {
    count.threshold = *expect_count;
    count.comparison = "==";
    const bool ok = static_cast<int>(devices.size()) == *expect_count && report.met;
    count.verdict = ok ? Verdict::pass : Verdict::fail;
    count.reason =
        std::to_string(devices.size()) + " devices, expected " + std::to_string(*expect_count);
    if (!report.met) count.reason += "; " + join(report.problems);
  } else {
    count.threshold = requirements.min_count.value_or(1);
    count.comparison = ">=";
    count.verdict = report.met ? Verdict::pass : Verdict::fail;
    count.reason = report.met ? std::to_string(report.qualifying) + " qualifying devices"
                              : join(report.problems);
  }
  out.push_back(count);

  CheckResult same;
  same.kind = Kind::identity;
  same.name = "homogeneous";
  if (devices.size() < 2) {
    same.verdict = Verdict::skipped;
    same.reason = "one device";
  } else {
    std::vector<std::string> differences;
    const DeviceInfo& first = devices.front();
    for (const DeviceInfo& d : devices) {
      if (d.name != first.name)
        differences.push_back("device " + std::to_string(d.ordinal) + " is " + d.name +
                              ", device " + std::to_string(first.ordinal) + " " + first.name);
      else if (d.total_memory != first.total_memory)
        differences.push_back(
            "device " + std::to_string(d.ordinal) + " has " + format_bytes(d.total_memory) +
            ", device " + std::to_string(first.ordinal) + " " + format_bytes(first.total_memory));
      else if (d.compute_capability != first.compute_capability)
        differences.push_back("device " + std::to_string(d.ordinal) + " is " +
                              d.compute_capability.sm());
    }
    same.verdict = differences.empty() ? Verdict::pass : Verdict::warn;
    same.reason = differences.empty() ? "all " + std::to_string(devices.size()) +
                                            " devices alike (" + first.name + ")"
                                      : join(differences);
  }
  out.push_back(same);
  return out;
}

std::string kernel_form(ComputeCapability cc, std::span<const int> sass, int ptx) {
  int best = -1;
  for (int s : sass)
    if (s / 10 == cc.major && s % 10 <= cc.minor) best = std::max(best, s);
  if (best >= 0) return "SASS sm_" + std::to_string(best);
  if (ptx <= cc.major * 10 + cc.minor) return "PTX compute_" + std::to_string(ptx) + " (JIT)";
  return "none (the fatbin has no code for " + cc.sm() + ")";
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace cudatool::check
