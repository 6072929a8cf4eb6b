// The engine of `cudatool check`: one thread per device, each with its own (primary)
// context, runs the probes (probes.hpp: identity and occupancy first, then compute, memory
// bandwidth, host link and health); the peer copies follow, pair by pair, once every device
// is done. A probe that throws fails its results, not the run.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "check/probes.hpp"
#include "check/reason_format.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/check/check.hpp"
#include "cudatool/check/xid.hpp"
#include "cudatool/driver/driver_release.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool::check {
namespace {

using namespace detail;

// The names of the results a check produces, for failing them all at once.
std::vector<std::string> result_names(Kind kind) {
  switch (kind) {
    case Kind::hostlink:
      return {"h2d", "d2h"};
    case Kind::memory:
      return {"d2d"};
    default:
      return {std::string(kind_name(kind))};
  }
}

// A check the driver's error stopped: the GPU needs a reset (the remediation), not an
// inspection of what the check measures.
CheckResult device_error(Kind kind, std::string name, const std::string& why) {
  CheckResult r = failed(kind, std::move(name), why);
  r.remediation = Remediation::reset_gpu;
  return r;
}

// Runs one check, turning an exception into a failed result (and, for a lost context,
// remembering it so the later checks fail with it too).
template <class Fn>
void guarded(DeviceRun& run, const Options& options, Kind kind, Fn fn) {
  if (!run.blocked.empty()) {
    for (const auto& name : result_names(kind))
      run.results.push_back(skipped(kind, name, run.blocked));
    return;
  }
  if (!run.fatal.empty()) {
    for (const auto& name : result_names(kind))
      run.results.push_back(run.fatal_crowded_out
                                ? out_of_memory_result(kind, name, run.fatal, run.sharers,
                                                       options.occupancy.require_idle)
                                : device_error(kind, name, run.fatal));
    return;
  }
  try {
    fn();
  } catch (const std::exception& e) {
    const bool crowded_out = out_of_memory_while_shared(run, e);
    for (const auto& name : result_names(kind))
      run.results.push_back(crowded_out ? out_of_memory_result(kind, name, e.what(), run.sharers,
                                                               options.occupancy.require_idle)
                                        : device_error(kind, name, e.what()));
    if (!run.context) {  // no context: nothing else can run
      run.fatal = e.what();
      run.fatal_crowded_out = crowded_out;
    }
  }
}

void run_device(DeviceRun& run, const Options& options) {
  const auto& kinds = options.kinds;
  if (!run.info_error.empty()) {
    // A device the driver lists but does not answer for: named, failed, and nothing that
    // needs CUDA is tried on it (NVML's health still is, below).
    CheckResult r = failed(Kind::identity, "device",
                           "the CUDA driver does not answer for this device: " + run.info_error);
    r.remediation = Remediation::reset_gpu;
    run.results.push_back(r);
    run.fatal = run.info_error;
  }
  // NVML first: MIG mode and the PCIe link's maximum are needed by the later checks.
  const bool need_nvml = kinds.count(Kind::health) || kinds.count(Kind::hostlink) ||
                         kinds.count(Kind::memory) || kinds.count(Kind::peer) ||
                         kinds.count(Kind::occupancy);
  if (need_nvml) {
    if (nvml_available(&run.nvml_why_not)) run.health = nvml_health(run.info.pci_bus_id);
    if (run.health && run.health->found) {
      run.mig = run.health->mig_enabled.value_or(false);
      if (run.health->pcie_max_generation && run.health->pcie_max_width)
        run.pcie_theoretical =
            pcie_theoretical_gbps(*run.health->pcie_max_generation, *run.health->pcie_max_width);
    }
    if (!run.pcie_theoretical)
      if (auto link = sysfs_max_link(run.info.pci_bus_id))
        run.pcie_theoretical = pcie_theoretical_gbps(link->generation, link->width);
  }
  if (kinds.count(Kind::identity) && run.info_error.empty())
    run.results.push_back(identity_result(run.info, options.requirements, options.expect_name));
  // Before this process's context exists: who else is on the device.
  if (kinds.count(Kind::occupancy)) run_occupancy(run, options);
  const bool needs_context = kinds.count(Kind::compute) || kinds.count(Kind::memory) ||
                             kinds.count(Kind::hostlink) || run.peer_stage;
  if (needs_context && run.blocked.empty()) {
    try {
      run.ensure_context();
    } catch (const Error& e) {
      if (e.code() == CUDA_ERROR_DEVICE_UNAVAILABLE) {
        context_refused(run, options);
      } else {
        run.fatal = e.what();
        run.fatal_crowded_out = out_of_memory_while_shared(run, e);
      }
    } catch (const std::exception& e) {
      run.fatal = e.what();
    }
  }
  ComputeBuffers buffers;
  if (kinds.count(Kind::compute))
    guarded(run, options, Kind::compute, [&] { run_compute(run, options, buffers); });
  if (kinds.count(Kind::memory))
    guarded(run, options, Kind::memory, [&] { run_memory(run, options); });
  if (kinds.count(Kind::hostlink))
    guarded(run, options, Kind::hostlink, [&] { run_hostlink(run, options, buffers); });
  if (run.peer_stage && run.fatal.empty() && run.blocked.empty()) {
    // The peer copies run after every device is done; their kernels load here, in parallel.
    try {
      run.ensure_module();
    } catch (const std::exception& e) {
      run.fatal = e.what();
    }
  }
  if (kinds.count(Kind::health)) {
    // Health reads NVML, which works without the device's context.
    try {
      run_health(run, options);
    } catch (const std::exception& e) {
      run.results.push_back(failed(Kind::health, "health", e.what()));
    }
  }
}

// The kernel log's XIDs, per checked GPU (a result "xid" each) and for the PCI devices that
// are none of them (the node check "xid_other_gpus": a GPU CUDA does not list, such as one
// off the bus, or one outside CUDA_VISIBLE_DEVICES); and "kernel_log", what could be read.
void add_xids(Report& report, const KernelLog& log, std::vector<std::unique_ptr<DeviceRun>>& runs) {
  report.kernel_log_source = log.readable ? log.source : "";
  {
    // The kernel's timestamps count from boot on the monotonic clock.
    timespec realtime{}, monotonic{};
    clock_gettime(CLOCK_REALTIME, &realtime);
    clock_gettime(CLOCK_MONOTONIC, &monotonic);
    report.boot_time = static_cast<double>(realtime.tv_sec - monotonic.tv_sec) +
                       static_cast<double>(realtime.tv_nsec - monotonic.tv_nsec) / 1e9;
  }
  report.kernel_log_why_not = log.why_not;
  if (!log.readable) {
    report.node_checks.push_back(skipped(Kind::xid, "kernel_log", "XIDs not read: " + log.why_not));
    return;
  }
  {
    CheckResult r;
    r.kind = Kind::xid;
    r.name = "kernel_log";
    r.verdict = Verdict::pass;
    r.quantity = Quantity::kernel_log_lines;
    r.value = static_cast<double>(log.xids.lines);
    r.reason = std::to_string(log.xids.lines) + " lines since boot read from " + log.source + ", " +
               std::to_string(log.xids.events.size()) + " XIDs" +
               (log.xids.truncated ? " (the log was longer than cudatool reads: the newest part "
                                     "or the part read before the limit)"
                                   : "") +
               (log.why_not.empty() ? "" : "; " + log.why_not);
    report.node_checks.push_back(r);
  }
  std::map<std::string, std::vector<XidEvent>> by_device;
  for (const auto& e : log.xids.events) by_device[e.pci_device].push_back(e);
  for (auto& run : runs) {
    const std::string key = xid_pci_device(run->info.pci_bus_id);
    std::vector<XidCount> counts;
    if (auto it = by_device.find(key); !key.empty() && it != by_device.end()) {
      counts = count_xids(it->second);
      by_device.erase(it);
    }
    run->results.push_back(xid_result(counts));
    run->xids = counts;
  }
  if (by_device.empty()) return;
  CheckResult other;
  other.kind = Kind::xid;
  other.name = "xid_other_gpus";
  other.verdict = Verdict::pass;
  other.remediation = Remediation::none;
  other.quantity = Quantity::other_gpu_xid_events;
  std::vector<std::string> parts;
  double total = 0;
  for (const auto& [device, events] : by_device) {
    const auto counts = count_xids(events);
    const CheckResult r = xid_result(counts);
    other.verdict = worse(other.verdict, r.verdict);
    other.remediation = worse(*other.remediation, remediation_of(r));
    total += r.value.value_or(0);
    std::string who = device;
    if (auto uuid = log.xids.uuid_of.find(device); uuid != log.xids.uuid_of.end())
      who += " (" + uuid->second + ")";
    parts.push_back("GPU " + who + ", not among the checked GPUs: " + r.reason);
    report.other_xids[device] = counts;
  }
  other.value = total;
  other.reason = detail::join(parts);
  report.node_checks.push_back(other);
}

// The GPUs NVML knows of that CUDA does not list (lost, off the bus, failed to initialise),
// where every GPU is checked (no --device, no CUDA_VISIBLE_DEVICES).
void add_nvml_devices(Report& report, const std::vector<std::unique_ptr<DeviceRun>>& runs,
                      const KernelLog* log) {
  const auto nvml = nvml_devices();
  if (!nvml) return;
  CheckResult r;
  r.kind = Kind::identity;
  r.name = "nvml_devices";
  r.quantity = Quantity::cuda_devices;
  r.comparison = Comparison::equal;
  r.value = static_cast<double>(runs.size());
  r.threshold = static_cast<double>(nvml->size());
  std::vector<std::string> missing;
  Remediation remediation = Remediation::none;
  for (const auto& d : *nvml) {
    bool listed = false;
    for (const auto& run : runs)
      listed = listed || (!d.pci_bus_id.empty() &&
                          nvml_pci_bus_id(run->info.pci_bus_id).value_or("") == d.pci_bus_id);
    if (d.error == 0 && listed) continue;
    std::string who = "NVML GPU " + std::to_string(d.index);
    if (!d.pci_bus_id.empty()) who += " " + d.pci_bus_id;
    if (!d.uuid.empty()) who += " " + d.uuid;
    if (d.error != 0) {
      who += ": " + nvml_error_name(d.error);
      if (d.error == 15) who += " (fallen off the bus)";
      remediation =
          worse(remediation, d.error == 15 ? Remediation::reboot_node : Remediation::reset_gpu);
    } else {
      who += ": not listed by CUDA (the driver could not initialise it)";
      remediation = worse(remediation, Remediation::reset_gpu);
    }
    missing.push_back(who);
  }
  if (missing.empty()) {
    r.verdict = Verdict::pass;
    r.reason = "CUDA lists every GPU NVML knows of (" + std::to_string(nvml->size()) + ")";
  } else {
    r.verdict = Verdict::fail;
    r.remediation = remediation;
    r.reason = detail::join(missing);
    // The kernel log names lost GPUs by UUID where NVML cannot.
    if (log && !log->xids.uuid_of.empty() && nvml->size() > runs.size()) {
      std::vector<std::string> unseen;
      for (const auto& [device, uuid] : log->xids.uuid_of) {
        bool checked = false;
        for (const auto& run : runs)
          checked = checked || xid_pci_device(run->info.pci_bus_id) == device;
        if (!checked) unseen.push_back(device + " " + uuid);
      }
      if (!unseen.empty())
        r.reason += "; the kernel log names GPUs not checked: " + detail::join(unseen);
    }
  }
  report.node_checks.push_back(r);
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

std::string embedded_kernel_contents() {
  std::string out = "SASS";
  for (int s : sass_list()) out += " sm_" + std::to_string(s);
  return out + " + PTX compute_" + std::to_string(embedded_ptx());
}

namespace {

// Each device described (DeviceInfo) and given its run.
std::vector<std::unique_ptr<DeviceRun>> start_runs(const std::vector<Device>& devices,
                                                   const Options& options) {
  std::vector<std::unique_ptr<DeviceRun>> runs;
  for (const Device& d : devices) {
    runs.push_back(std::make_unique<DeviceRun>(d));
    runs.back()->info = DeviceInfo::describe(d);
    runs.back()->info_error = runs.back()->info.error;
    runs.back()->peer_stage = options.kinds.count(Kind::peer) && devices.size() > 1;
  }
  return runs;
}

// Devices in parallel: each thread makes its own context current.
void run_devices(std::vector<std::unique_ptr<DeviceRun>>& runs, const Options& options) {
  std::vector<std::thread> threads;
  for (auto& run : runs)
    threads.emplace_back([&run, &options] {
      try {
        run_device(*run, options);
      } catch (const std::exception& e) {
        run->results.push_back(failed(Kind::identity, "device", e.what()));
      }
    });
  for (auto& t : threads) t.join();
}

// The peer copy from one device to another, or why it was not made.
CheckResult peer_result(DeviceRun& from, DeviceRun& to, const Options& options) {
  const std::string pair =
      std::to_string(from.info.ordinal) + " to " + std::to_string(to.info.ordinal);
  if (!from.blocked.empty() || !to.blocked.empty())
    return skipped(Kind::peer, "peer",
                   "device " + pair + ": " + (from.blocked.empty() ? to.blocked : from.blocked));
  if (!from.fatal.empty() || !to.fatal.empty()) {
    const std::string why = "device " + pair + ": " + (from.fatal.empty() ? to.fatal : from.fatal);
    return from.fatal_crowded_out || to.fatal_crowded_out
               ? out_of_memory_result(Kind::peer, "peer", why, peer_sharers(from, to),
                                      options.occupancy.require_idle)
               : device_error(Kind::peer, "peer", why);
  }
  if (from.mig || to.mig) return skipped(Kind::peer, "peer", "MIG instances have no peer access");
  if (!from.device.can_access_peer(to.device))
    return skipped(Kind::peer, "peer", "no peer access from device " + pair);
  try {
    return run_peer(from, to, options);
  } catch (const std::exception& e) {
    const std::string who = peer_sharers(from, to);
    return out_of_memory(e) && !who.empty()
               ? out_of_memory_result(Kind::peer, "peer", "device " + pair + ": " + e.what(), who,
                                      options.occupancy.require_idle)
               : device_error(Kind::peer, "peer", "device " + pair + ": " + e.what());
  }
}

// The peer copies, pair by pair, once every device is done: a result on the source device
// per destination, or one node result where there is no pair.
void run_peers(Report& report, std::vector<std::unique_ptr<DeviceRun>>& runs,
               const Options& options) {
  if (runs.size() < 2) {
    report.node_checks.push_back(skipped(Kind::peer, "peer", "one device: no peer to copy to"));
    return;
  }
  for (auto& from : runs)
    for (auto& to : runs) {
      if (from == to) continue;
      CheckResult r = peer_result(*from, *to, options);
      r.peer = to->info.ordinal;
      from->results.push_back(r);
    }
}

}  // namespace

Report run_check(const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  // NVML is loaded for every check (it names each GPU by nvidia-smi's index), on a thread
  // of its own while cuInit runs.
  nvml_preload();
  // The kernel log is read on a thread of its own while the devices are checked.
  std::future<KernelLog> kernel_log;
  if (options.kinds.count(Kind::xid))
    kernel_log = std::async(std::launch::async, [] { return read_kernel_log(); });
  Report report;
  report.hostname = hostname();
  report.kernel_form = embedded_kernel_contents();
  const std::vector<Device> devices = options.devices.empty() ? Device::all() : options.devices;
  report.cuda_version = driver::api().driver_version;
  report.driver_version = driver_release(true);

  std::vector<std::unique_ptr<DeviceRun>> runs = start_runs(devices, options);
  if (options.kinds.count(Kind::identity)) {
    std::vector<DeviceInfo> infos;
    for (const auto& run : runs) infos.push_back(run->info);
    report.node_checks = node_identity_results(infos, options.requirements, options.expect_count);
  }
  run_devices(runs, options);
  if (options.kinds.count(Kind::peer)) run_peers(report, runs, options);
  std::optional<KernelLog> log;
  if (kernel_log.valid()) {
    log = kernel_log.get();
    add_xids(report, *log, runs);
  }
  if (options.kinds.count(Kind::identity) && options.devices.empty() &&
      std::getenv("CUDA_VISIBLE_DEVICES") == nullptr)
    add_nvml_devices(report, runs, log ? &*log : nullptr);
  for (auto& run : runs)
    report.devices.push_back({run->info, run->results, run->occupancy,
                              nvml_device_index(run->info.pci_bus_id), run->xids});
  runs.clear();  // frees buffers and contexts before the clock stops
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace cudatool::check
