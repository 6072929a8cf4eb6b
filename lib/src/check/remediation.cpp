// Remediations: what to do about each finding of `cudatool check` (the table of cudatool(1),
// REMEDIATION), and the worst of a device's and a node's.
#include <string>

#include "cudatool/check/check.hpp"

namespace cudatool::check {

std::string_view remediation_name(Remediation r) {
  switch (r) {
    case Remediation::none:
      return "none";
    case Remediation::monitor:
      return "monitor";
    case Remediation::restart_job:
      return "restart_job";
    case Remediation::reset_gpu:
      return "reset_gpu";
    case Remediation::reboot_node:
      return "reboot_node";
    case Remediation::drain_inspect:
      return "drain_inspect";
  }
  return "none";
}

std::string_view remediation_text(Remediation r) {
  switch (r) {
    case Remediation::none:
      return "nothing to do";
    case Remediation::monitor:
      return "keep in service and monitor";
    case Remediation::restart_job:
      return "restart the job (the GPU is fine)";
    case Remediation::reset_gpu:
      return "reset the GPU";
    case Remediation::reboot_node:
      return "reboot the node";
    case Remediation::drain_inspect:
      return "drain the node and inspect the hardware";
  }
  return "nothing to do";
}

const std::vector<Remediation>& all_remediations() {
  static const std::vector<Remediation> all = {
      Remediation::none,      Remediation::monitor,     Remediation::restart_job,
      Remediation::reset_gpu, Remediation::reboot_node, Remediation::drain_inspect};
  return all;
}

Remediation worse(Remediation a, Remediation b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

Remediation default_remediation(const CheckResult& r) {
  if (r.verdict == Verdict::pass || r.verdict == Verdict::skipped) return Remediation::none;
  if (r.verdict == Verdict::warn) return Remediation::monitor;
  // A fail, by what failed.
  switch (r.kind) {
    case Kind::identity:
      // Fewer GPUs than expected, the wrong product or memory: a GPU missing from the bus or
      // the wrong hardware. A device that failed outright (name "device") needs a reset.
      return r.name == "device" ? Remediation::reset_gpu : Remediation::drain_inspect;
    case Kind::occupancy:
      // Another job holds the GPU (--require-idle): that job must end, the GPU is fine.
      return Remediation::restart_job;
    case Kind::health:
      if (r.name == "row_remap" || r.name == "retired_pages") return Remediation::reboot_node;
      if (r.name == "ecc_uncorrected" || r.name == "nvlink" || r.name == "health" ||
          r.name == "nvml")
        return Remediation::reset_gpu;
      if (r.name == "nvlink_fabric") return Remediation::reboot_node;
      // Clock faults (cooling, power), a link below its width or generation.
      return Remediation::drain_inspect;
    case Kind::xid:
      return Remediation::reset_gpu;
    case Kind::compute:
    case Kind::memory:
    case Kind::hostlink:
    case Kind::peer:
      // Wrong results or a shortfall of the hardware (a shortfall while shared warns).
      return Remediation::drain_inspect;
  }
  return Remediation::drain_inspect;
}

Remediation remediation_of(const CheckResult& r) {
  return r.remediation ? *r.remediation : default_remediation(r);
}

Remediation DeviceReport::remediation() const {
  Remediation worst = Remediation::none;
  for (const auto& c : checks) worst = worse(worst, remediation_of(c));
  return worst;
}

Remediation Report::remediation() const {
  Remediation worst = Remediation::none;
  for (const auto& c : node_checks) worst = worse(worst, remediation_of(c));
  for (const auto& d : devices) worst = worse(worst, d.remediation());
  return worst;
}

}  // namespace cudatool::check
