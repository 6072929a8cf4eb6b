// The engine of `cudatool check`: one thread per device, each with its own (primary)
// context, runs the probes (probes.hpp: identity and occupancy first, then compute, memory
// bandwidth, host link and health); the peer copies follow, pair by pair, once every device
// is done. A probe that throws fails its results, not the run.
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "check/probes.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/check/check.hpp"
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
                                : failed(kind, name, run.fatal));
    return;
  }
  try {
    fn();
  } catch (const std::exception& e) {
    const bool crowded_out = out_of_memory_while_shared(run, e);
    for (const auto& name : result_names(kind))
      run.results.push_back(crowded_out ? out_of_memory_result(kind, name, e.what(), run.sharers,
                                                               options.occupancy.require_idle)
                                        : failed(kind, name, e.what()));
    if (!run.context) {  // no context: nothing else can run
      run.fatal = e.what();
      run.fatal_crowded_out = crowded_out;
    }
  }
}

void run_device(DeviceRun& run, const Options& options) {
  const auto& kinds = options.kinds;
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
  if (kinds.count(Kind::identity))
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

Report run_check(const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  // NVML is loaded for every check (it names each GPU by nvidia-smi's index), on a thread
  // of its own while cuInit runs.
  nvml_preload();
  Report report;
  report.hostname = hostname();
  report.kernel_form = embedded_kernel_contents();
  const std::vector<Device> devices = options.devices.empty() ? Device::all() : options.devices;
  report.cuda_version = driver::api().driver_version;
  report.driver_version = driver_release(true);

  std::vector<std::unique_ptr<DeviceRun>> runs;
  std::vector<DeviceInfo> infos;
  for (const Device& d : devices) {
    runs.push_back(std::make_unique<DeviceRun>(d));
    runs.back()->info = DeviceInfo::from_device(d);
    runs.back()->peer_stage = options.kinds.count(Kind::peer) && devices.size() > 1;
    infos.push_back(runs.back()->info);
  }
  if (options.kinds.count(Kind::identity))
    report.node_checks = node_identity_results(infos, options.requirements, options.expect_count);

  // Devices in parallel: each thread makes its own context current.
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

  if (options.kinds.count(Kind::peer)) {
    if (runs.size() < 2) {
      report.node_checks.push_back(skipped(Kind::peer, "peer", "one device: no peer to copy to"));
    } else {
      for (auto& from : runs)
        for (auto& to : runs) {
          if (from == to) continue;
          CheckResult r;
          const std::string pair =
              std::to_string(from->info.ordinal) + " to " + std::to_string(to->info.ordinal);
          if (!from->blocked.empty() || !to->blocked.empty()) {
            r = skipped(
                Kind::peer, "peer",
                "device " + pair + ": " + (from->blocked.empty() ? to->blocked : from->blocked));
          } else if (!from->fatal.empty() || !to->fatal.empty()) {
            const std::string why =
                "device " + pair + ": " + (from->fatal.empty() ? to->fatal : from->fatal);
            r = from->fatal_crowded_out || to->fatal_crowded_out
                    ? out_of_memory_result(Kind::peer, "peer", why, peer_sharers(*from, *to),
                                           options.occupancy.require_idle)
                    : failed(Kind::peer, "peer", why);
          } else if (from->mig || to->mig) {
            r = skipped(Kind::peer, "peer", "MIG instances have no peer access");
          } else if (!from->device.can_access_peer(to->device)) {
            r = skipped(Kind::peer, "peer", "no peer access from device " + pair);
          } else {
            try {
              r = run_peer(*from, *to, options);
            } catch (const std::exception& e) {
              const std::string who = peer_sharers(*from, *to);
              r = out_of_memory(e) && !who.empty()
                      ? out_of_memory_result(Kind::peer, "peer", "device " + pair + ": " + e.what(),
                                             who, options.occupancy.require_idle)
                      : failed(Kind::peer, "peer", "device " + pair + ": " + e.what());
            }
          }
          r.peer = to->info.ordinal;
          from->results.push_back(r);
        }
    }
  }
  for (auto& run : runs)
    report.devices.push_back(
        {run->info, run->results, run->occupancy, nvml_device_index(run->info.pci_bus_id)});
  runs.clear();  // frees buffers and contexts before the clock stops
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace cudatool::check
