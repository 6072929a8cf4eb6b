// Internal: the probes of `cudatool check`, each adding its results to a DeviceRun
// (device_run.hpp); engine.cpp runs them, one thread per device, then the peer copies.
//   compute_probe.cpp    the embedded fill kernel on every SM, verified on the host
//   copy_probes.cpp      timed copies: device memory, the host link, peer to peer
//   health_probe.cpp     NVML's health readings and the PCIe link under load
//   occupancy_probe.cpp  who else uses the device, read before this process's context
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "check/device_run.hpp"
#include "memory/buffers.hpp"

namespace cudatool::check::detail {

// The compute probe leaves its device and pinned buffers of kComputeBytes to the host link,
// which reuses them.
struct ComputeBuffers {
  std::unique_ptr<cudatool::detail::PinnedBuffer> host;
  std::unique_ptr<cudatool::detail::DeviceBuffer> device;
};

void run_compute(DeviceRun& run, const Options& options, ComputeBuffers& buffers);
void run_memory(DeviceRun& run, const Options& options);
void run_hostlink(DeviceRun& run, const Options& options, ComputeBuffers& buffers);
// A peer copy from `from` to `to`, both with their kernels loaded or loadable.
CheckResult run_peer(DeviceRun& from, DeviceRun& to, const Options& options);
// Who shared either end of a peer copy ("" when neither was).
std::string peer_sharers(const DeviceRun& from, const DeviceRun& to);

// The link's maximum from sysfs where NVML cannot say: "32.0 GT/s PCIe" -> 5.
std::optional<PcieLink> sysfs_max_link(const std::string& pci_bus_id);
void run_health(DeviceRun& run, const Options& options);

// The occupancy check: its results go where `run.occupancy_at` says, so a later refusal of
// a context can replace them.
void run_occupancy(DeviceRun& run, const Options& options);
// The driver refused a context because another process holds the device exclusively: the
// occupancy verdict, not a failed check.
void context_refused(DeviceRun& run, const Options& options);

}  // namespace cudatool::check::detail
