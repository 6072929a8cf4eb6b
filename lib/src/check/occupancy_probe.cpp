// The occupancy probe: who else uses the device, read from NVML before this process makes a
// context on it (the verdicts are occupancy.cpp's), and what a refused context means.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "check/probes.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool::check::detail {
namespace {

// Utilization is read kUtilizationReadings times over kUtilizationWindow: each reading
// covers the driver's last sample period, so a few spread over a tenth of a second see
// work that runs in bursts.
constexpr int kUtilizationReadings = 5;
constexpr auto kUtilizationWindow = std::chrono::milliseconds(100);

// Who else uses the device, from NVML, before this process makes a context on it; nullopt
// where NVML does not know the device.
std::optional<Occupancy> read_occupancy(const std::string& pci_bus_id) {
  const auto reading = nvml_occupancy(pci_bus_id);
  if (!reading || !reading->found) return std::nullopt;
  Occupancy o;
  if (reading->processes) {
    o.processes.emplace();
    const auto self = static_cast<unsigned>(getpid());
    const bool names = in_initial_pid_namespace();
    if (!names && !reading->processes->empty())
      o.names_why_not = "cudatool runs in another PID namespace than NVML's pids";
    for (const auto& p : *reading->processes) {
      if (p.pid == self) continue;
      o.processes->push_back(
          {p.pid, names ? process_name(p.pid) : "", p.used_memory, p.compute, p.graphics});
    }
  }
  o.processes_why_not = reading->processes_why_not;
  if (reading->memory) {
    o.used_memory = reading->memory->used;
    o.total_memory = reading->memory->total;
  }
  o.used_excludes_reserved = reading->used_excludes_reserved;
  o.compute_mode = reading->compute_mode;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kUtilizationReadings; ++i) {
    if (i > 0) std::this_thread::sleep_for(kUtilizationWindow / (kUtilizationReadings - 1));
    const auto u = nvml_utilization(pci_bus_id);
    if (!u) break;
    ++o.utilization_readings;
    o.gpu_utilization = std::max(o.gpu_utilization.value_or(0), u->gpu);
    o.memory_utilization = std::max(o.memory_utilization.value_or(0), u->memory);
  }
  o.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

}  // namespace

void run_occupancy(DeviceRun& run, const Options& options) {
  run.occupancy_at = run.results.size();
  if (!run.health) {
    run.results.push_back(skipped(Kind::occupancy, "occupancy", run.nvml_why_not));
    return;
  }
  if (!run.health->found) {
    run.results.push_back(
        skipped(Kind::occupancy, "occupancy", "NVML does not know this device's PCI bus id"));
    return;
  }
  if (run.mig) {
    // NVML's processes, memory and utilization are the whole GPU's, shared by design.
    run.results.push_back(skipped(Kind::occupancy, "occupancy",
                                  "a MIG instance: NVML reports the whole GPU, whose other "
                                  "instances belong to others by design"));
    return;
  }
  run.occupancy = read_occupancy(run.info.pci_bus_id);
  if (!run.occupancy) {
    run.results.push_back(
        skipped(Kind::occupancy, "occupancy", "NVML does not know this device's PCI bus id"));
    return;
  }
  for (auto& r : occupancy_results(*run.occupancy, options.occupancy)) run.results.push_back(r);
  run.sharers = sharers(*run.occupancy, options.occupancy);
  run.blocked = context_blocked(*run.occupancy);
}

void context_refused(DeviceRun& run, const Options& options) {
  Occupancy o = run.occupancy.value_or(Occupancy{});
  if (!run.occupancy)
    o.processes_why_not =
        run.nvml_why_not.empty() ? "NVML did not read the device" : run.nvml_why_not;
  o.context_refused = true;
  if (options.kinds.count(Kind::occupancy)) {
    // Replace what the occupancy check said (or its one skipped line) with the new verdicts.
    auto& results = run.results;
    std::size_t end = run.occupancy_at;
    while (end < results.size() && results[end].kind == Kind::occupancy) ++end;
    results.erase(results.begin() + static_cast<std::ptrdiff_t>(run.occupancy_at),
                  results.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<CheckResult> replaced = occupancy_results(o, options.occupancy);
    if (!run.occupancy) {
      // NVML did not read the device: its one skipped line stays, with the compute mode's.
      replaced = {skipped(Kind::occupancy, "occupancy", o.processes_why_not), replaced.back()};
    }
    results.insert(results.begin() + static_cast<std::ptrdiff_t>(run.occupancy_at),
                   replaced.begin(), replaced.end());
  }
  run.occupancy = o;
  run.sharers = sharers(o, options.occupancy);
  run.blocked = context_blocked(o);
}

}  // namespace cudatool::check::detail
