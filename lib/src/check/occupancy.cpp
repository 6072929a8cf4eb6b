// The occupancy check of `cudatool check`: who else uses a device, and what that means for
// the verdicts. Pure functions of NVML's readings (tested without a GPU), and the name of a
// process from /proc.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"

namespace cudatool::check {
namespace {

constexpr std::size_t kListedProcesses = 8;  // the rest are counted ("and 3 more")

// What one finding of the occupancy check gives: a warning, a fail under --require-idle
// (or where the user gave the threshold it broke).
Verdict finding(const OccupancyPolicy& policy, bool threshold_given = false) {
  return policy.require_idle || threshold_given ? Verdict::fail : Verdict::warn;
}

CheckResult occupancy(std::string name) {
  CheckResult r;
  r.kind = Kind::occupancy;
  r.name = std::move(name);
  return r;
}

std::uint64_t used_memory_limit(const OccupancyPolicy& policy) {
  return policy.max_used_memory.value_or(kIdleUsedMemory);
}

bool memory_above_limit(const Occupancy& o, const OccupancyPolicy& policy) {
  return o.used_memory && *o.used_memory > used_memory_limit(policy);
}

bool has_processes(const Occupancy& o) {
  return o.processes && !o.processes->empty();
}

// "pid 4242 (python3, compute, 77.7 GiB)"
std::string describe(const GpuProcess& p) {
  std::string out = "pid " + std::to_string(p.pid) + " (" + (p.name.empty() ? "?" : p.name);
  if (p.graphics) out += p.compute ? ", compute and graphics" : ", graphics";
  out += ", " + (p.used_memory ? format_bytes(*p.used_memory) : std::string("memory not reported"));
  return out + ")";
}

std::string describe_processes(const std::vector<GpuProcess>& processes) {
  std::string out;
  for (std::size_t i = 0; i < processes.size() && i < kListedProcesses; ++i)
    out += (out.empty() ? "" : ", ") + describe(processes[i]);
  if (processes.size() > kListedProcesses)
    out += " and " + std::to_string(processes.size() - kListedProcesses) + " more";
  return out;
}

std::string first_compute_holder(const Occupancy& o) {
  if (o.processes)
    for (const auto& p : *o.processes)
      if (p.compute)
        return "pid " + std::to_string(p.pid) + " (" + (p.name.empty() ? "?" : p.name) + ")";
  return "";
}

bool exclusive(unsigned mode) {
  return mode == 1 || mode == 3;  // exclusive thread (deprecated) or exclusive process
}

std::string percent(unsigned value) {
  return std::to_string(value) + "%";
}

}  // namespace

std::string compute_mode_name(unsigned mode) {
  switch (mode) {
    case 0:
      return "default";
    case 1:
      return "exclusive_thread";
    case 2:
      return "prohibited";
    case 3:
      return "exclusive_process";
    default:
      return "mode " + std::to_string(mode);
  }
}

std::string sharers(const Occupancy& o, const OccupancyPolicy& policy) {
  if (has_processes(o)) return describe_processes(*o.processes);
  if (memory_above_limit(o, policy))
    return "processes NVML does not list, holding " + format_bytes(*o.used_memory);
  if (!o.processes && o.gpu_utilization.value_or(0) > 0)
    return "processes NVML does not list, keeping the GPU " + percent(*o.gpu_utilization) + " busy";
  if (o.context_refused) return "a process that holds the device exclusively";
  return "";
}

std::string context_blocked(const Occupancy& o) {
  if (o.compute_mode == 2u)
    return "the compute mode is prohibited: no process may create a context";
  const std::string holder = first_compute_holder(o);
  if (o.compute_mode && exclusive(*o.compute_mode) && !holder.empty())
    return "the device is in " + compute_mode_name(*o.compute_mode) + " mode and held by " +
           holder + ": no second context can be created";
  if (o.context_refused)
    return "the driver refused a context (CUDA_ERROR_DEVICE_UNAVAILABLE): another process "
           "holds the device in exclusive-process mode";
  return "";
}

namespace {

// Processes with a context on the device.
CheckResult processes_result(const Occupancy& o, const OccupancyPolicy& policy) {
  CheckResult r = occupancy("processes");
  if (!o.processes) {
    r.verdict = Verdict::skipped;
    r.reason = o.processes_why_not.empty() ? "NVML does not list the device's processes"
                                           : o.processes_why_not;
  } else {
    r.quantity = Quantity::other_processes;
    r.value = static_cast<double>(o.processes->size());
    r.threshold = 0;
    r.comparison = Comparison::at_most;
    if (o.processes->empty()) {
      r.verdict = Verdict::pass;
      r.reason = "no other process on the device";
    } else {
      r.verdict = finding(policy);
      r.reason = std::to_string(o.processes->size()) + " other process" +
                 (o.processes->size() == 1 ? "" : "es") +
                 " on the device: " + describe_processes(*o.processes);
      if (!o.names_why_not.empty()) r.reason += " (no names: " + o.names_why_not + ")";
    }
  }
  return r;
}

// Memory held by others (read before cudatool's context exists).
CheckResult used_memory_result(const Occupancy& o, const OccupancyPolicy& policy) {
  CheckResult r = occupancy("used_memory");
  if (!o.used_memory) {
    r.verdict = Verdict::skipped;
    r.reason = "NVML does not report the device's memory";
  } else {
    const std::uint64_t limit = used_memory_limit(policy);
    r.quantity = Quantity::memory_used_by_others;
    r.value = static_cast<double>(*o.used_memory);
    r.threshold = static_cast<double>(limit);
    r.comparison = Comparison::at_most;
    const bool above = *o.used_memory > limit;
    r.verdict = above ? finding(policy, policy.max_used_memory.has_value()) : Verdict::pass;
    r.reason = format_bytes(*o.used_memory) +
               (o.total_memory ? " of " + format_bytes(*o.total_memory) : std::string()) +
               " used by others (" +
               (o.used_excludes_reserved ? "the driver's reservation not counted"
                                         : "the driver's reservation counted") +
               "), ";
    // The limit as the caller set it (its name for max_used_memory), or the idle default.
    r.reason += policy.max_used_memory ? policy.max_used_memory_source : "at most";
    r.reason += ' ';
    r.reason += format_bytes(limit);
    if (above)
      r.reason += policy.max_used_memory ? " given" : " for an idle device";
    else
      r.reason += " allowed";
  }
  return r;
}

// Utilization over the window.
CheckResult utilization_result(const Occupancy& o, const OccupancyPolicy& policy) {
  CheckResult r = occupancy("utilization");
  if (!o.gpu_utilization) {
    r.verdict = Verdict::skipped;
    r.reason = "NVML does not report utilization for this device";
  } else {
    r.quantity = Quantity::gpu_utilization;
    r.value = *o.gpu_utilization / 100.0;  // NVML's percent as a ratio
    r.threshold = 0;
    r.comparison = Comparison::at_most;
    char window[64];
    std::snprintf(window, sizeof window, "%.2f", o.window_s);
    r.reason = "GPU " + percent(*o.gpu_utilization) +
               (o.memory_utilization ? ", memory " + percent(*o.memory_utilization) : "") +
               " (the highest of " + std::to_string(o.utilization_readings) + " readings over " +
               window + " s)";
    // Busy with nobody on the device is the tail of work that has ended (NVML's reading
    // covers the driver's last sample period, up to a second): not a finding, so a check
    // right after a job is not failed for it.
    const bool somebody =
        has_processes(o) || memory_above_limit(o, policy) || !o.processes || o.context_refused;
    if (*o.gpu_utilization == 0) {
      r.verdict = Verdict::pass;
    } else if (somebody) {
      r.verdict = finding(policy);
      r.reason += ": another process is computing";
    } else {
      r.verdict = Verdict::pass;
      r.reason += " with no other process on the device: the tail of work that has ended";
    }
  }
  return r;
}

// Compute mode: an exclusive device held by another process takes no context of ours.
CheckResult compute_mode_result(const Occupancy& o, const OccupancyPolicy& policy) {
  CheckResult r = occupancy("compute_mode");
  const std::string blocked = context_blocked(o);
  if (!o.compute_mode && !o.context_refused) {
    r.verdict = Verdict::skipped;
    r.reason = "NVML does not report the compute mode";
  } else if (o.compute_mode == 2u) {
    r.verdict = Verdict::fail;
    r.reason = blocked + "; the checks that need one are skipped";
  } else if (!blocked.empty()) {
    r.verdict = finding(policy);
    r.reason = blocked + "; the checks that need one are skipped";
  } else {
    r.verdict = Verdict::pass;
    r.reason = compute_mode_name(*o.compute_mode) +
               (exclusive(*o.compute_mode) ? ", not held by another process"
                                           : " (any number of processes may share the device)");
  }
  return r;
}
}  // namespace

std::vector<CheckResult> occupancy_results(const Occupancy& o, const OccupancyPolicy& policy) {
  return {processes_result(o, policy), used_memory_result(o, policy), utilization_result(o, policy),
          compute_mode_result(o, policy)};
}

void mark_shared(CheckResult& r, const std::string& who, const OccupancyPolicy& policy) {
  if (who.empty()) return;
  r.shared_with = who;
  r.reason += "; measured while the device was shared with " + who;
  // Only a measured rate below its minimum is the sharing's doing; wrong data (or wrong
  // elements, at most a threshold) is the hardware's whoever shares the device.
  const bool shortfall = r.verdict == Verdict::fail && r.comparison == Comparison::at_least &&
                         r.value && r.threshold && *r.value < *r.threshold;
  if (!shortfall) return;
  if (policy.require_idle) {
    r.reason += " (" + policy.require_idle_source + ": a fail)";
  } else {
    r.verdict = Verdict::warn;
    r.reason += ": a shortfall while shared is not a hardware fault";
  }
}

std::string process_name(unsigned pid, const std::string& proc_root) {
  const std::string dir = proc_root + "/" + std::to_string(pid) + "/";
  // At most this much of each file is read: a program may rewrite its argv at any length.
  auto head = [&dir](const char* file) {
    std::ifstream in(dir + file, std::ios::binary);
    std::string text(4096, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(in ? text.size()
                   : static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    return text;
  };
  // argv[0]'s file name only: the arguments may hold secrets (tokens, passwords).
  std::string name = head("cmdline");
  name = name.substr(0, name.find('\0'));
  if (const auto slash = name.find_last_of('/'); slash != std::string::npos)
    name = name.substr(slash + 1);
  if (name.empty()) {
    name = head("comm");
    name = name.substr(0, name.find('\n'));
  }
  return name.empty() ? "" : printable(name, 64);
}

bool in_initial_pid_namespace(const std::string& proc_root) {
  std::error_code error;
  const auto target = std::filesystem::read_symlink(proc_root + "/self/ns/pid", error);
  return !error && target.string() == "pid:[4026531836]";  // PROC_PID_INIT_INO, 0xEFFFFFFC
}

}  // namespace cudatool::check
