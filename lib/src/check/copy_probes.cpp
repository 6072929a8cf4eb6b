// The copy probes: device memory (a device-to-device copy), the host link (pinned copies
// each way) and peer to peer, each timed between events after a warm-up (the median of
// kRepetitions) against the theoretical rate, and its data verified afterwards.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "check/probes.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"
#include "device/current_context.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool::check::detail {

using cudatool::detail::CurrentContext;
using cudatool::detail::DeviceBuffer;
using cudatool::detail::PinnedBuffer;

void run_memory(DeviceRun& run, const Options& options) {
  run.ensure_module();
  std::size_t free_bytes = 0, total = 0;
  {
    CurrentContext current(run.ctx());
    CUDATOOL_CU(cuMemGetInfo, &free_bytes, &total);
  }
  const std::size_t bytes = std::min(kMemoryBytes, (free_bytes / 8) & ~std::size_t(4095));
  DeviceBuffer source(run.ctx(), bytes), destination(run.ctx(), bytes);
  const std::uint64_t n = bytes / 4;
  run.fill(source.get(), n, kSeedMemory, 0, ~0ull);
  CUstream s = run.stream->get();
  const auto ms = time_ops(*run.stream, 2, kRepetitions, [&] {
    CUDATOOL_CU(cuMemcpyDtoDAsync, destination.get(), source.get(), bytes, s);
  });
  const std::uint64_t bad = run.verify_on_device(destination.get(), n, kSeedMemory);
  // A copy reads and writes every byte: the memory moves twice the bytes copied (as the
  // CUDA samples' bandwidthTest counts device-to-device copies).
  const double measured = gbps(2 * bytes, median(ms));
  std::optional<double> theoretical =
      memory_theoretical_gbps(run.info.global_memory_bus_width, run.info.memory_clock_rate_khz);
  if (run.mig) theoretical.reset();  // a MIG instance has a share of the bus
  CheckResult r = rate_result(Quantity::device_to_device, measured, theoretical,
                              options.thresholds.min_d2d_gbps, options.thresholds.fraction,
                              "device copy of " + format_bytes(bytes) + " (read + write)");
  if (run.mig && !options.thresholds.min_d2d_gbps)
    r.reason += " (a MIG instance: the theoretical rate is the whole GPU's)";
  mark_shared(r, run.sharers, options.occupancy);
  if (bad) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(bad) + " elements wrong after the device copy; " + r.reason;
  }
  run.results.push_back(r);
}

void run_hostlink(DeviceRun& run, const Options& options, ComputeBuffers& buffers) {
  run.ensure_module();
  const std::size_t bytes = kComputeBytes;
  const std::uint64_t n = bytes / 4;
  if (!buffers.host) buffers.host = std::make_unique<PinnedBuffer>(run.ctx(), bytes);
  if (!buffers.device) buffers.device = std::make_unique<DeviceBuffer>(run.ctx(), bytes);
  PinnedBuffer& host = *buffers.host;
  DeviceBuffer& buffer = *buffers.device;
  // The host buffer gets the pattern by a device->host copy of a fill, so the host->device
  // copy's data is known on both sides.
  run.fill(buffer.get(), n, kSeedHost, 0, ~0ull);
  CUstream s = run.stream->get();
  CUDATOOL_CU(cuMemcpyDtoHAsync, host.get(), buffer.get(), bytes, s);
  run.zero(buffer.get(), bytes);
  run.stream->synchronize();
  const std::string link = run.info.pci_bus_id;
  const auto h2d = time_ops(
      *run.stream, 1, kRepetitions,
      [&] { CUDATOOL_CU(cuMemcpyHtoDAsync, buffer.get(), host.get(), bytes, s); },
      [&] { run.busy_link = nvml_current_pcie_link(link); });
  const std::uint64_t bad_h2d = run.verify_on_device(buffer.get(), n, kSeedHost);
  std::memset(host.get(), 0, bytes);
  const auto d2h = time_ops(*run.stream, 1, kRepetitions, [&] {
    CUDATOOL_CU(cuMemcpyDtoHAsync, host.get(), buffer.get(), bytes, s);
  });
  const std::uint64_t bad_d2h = verify_on_host(host.words(), n, kSeedHost, nullptr);
  const std::string what = run.pcie_theoretical ? "pinned " + format_bytes(bytes) : "pinned";
  CheckResult up = rate_result(Quantity::host_to_device, gbps(bytes, median(h2d)),
                               run.pcie_theoretical, options.thresholds.min_h2d_gbps,
                               options.thresholds.fraction, "host to device, " + what);
  CheckResult down = rate_result(Quantity::device_to_host, gbps(bytes, median(d2h)),
                                 run.pcie_theoretical, options.thresholds.min_d2h_gbps,
                                 options.thresholds.fraction, "device to host, " + what);
  mark_shared(up, run.sharers, options.occupancy);
  mark_shared(down, run.sharers, options.occupancy);
  if (bad_h2d) {
    up.verdict = Verdict::fail;
    up.reason = std::to_string(bad_h2d) + " elements wrong after the copy; " + up.reason;
  }
  if (bad_d2h) {
    down.verdict = Verdict::fail;
    down.reason = std::to_string(bad_d2h) + " elements wrong after the copy; " + down.reason;
  }
  run.results.push_back(up);
  run.results.push_back(down);
}

namespace {

// The theoretical peer rate from i to j: the NVLinks between them, else (through NVSwitch)
// the fewer active links of the two, else PCIe.
std::optional<double> peer_theoretical(const DeviceRun& from, const DeviceRun& to,
                                       std::string* how) {
  if (from.health && to.health) {
    int direct = 0, active_from = 0, active_to = 0;
    double rate = 0;
    for (const auto& l : from.health->nvlinks)
      if (l.active) {
        ++active_from;
        rate = nvlink_link_gbps(from.info.compute_capability);
        if (l.remote_pci_bus_id == to.info.pci_bus_id) ++direct;
      }
    for (const auto& l : to.health->nvlinks) active_to += l.active;
    if (rate > 0 && direct > 0) {
      *how = std::to_string(direct) + " NVLinks";
      return direct * rate;
    }
    if (rate > 0 && active_from > 0 && active_to > 0) {
      const int links = std::min(active_from, active_to);
      *how = std::to_string(links) + " NVLinks (through a switch)";
      return links * rate;
    }
  }
  if (from.pcie_theoretical && to.pcie_theoretical) {
    *how = "PCIe";
    return std::min(*from.pcie_theoretical, *to.pcie_theoretical);
  }
  return std::nullopt;
}

}  // namespace

std::string peer_sharers(const DeviceRun& from, const DeviceRun& to) {
  std::string out;
  for (const DeviceRun* run : {&from, &to})
    if (!run->sharers.empty())
      out += (out.empty() ? "" : "; ") + std::string("device ") +
             std::to_string(run->info.ordinal) + ": " + run->sharers;
  return out;
}

CheckResult run_peer(DeviceRun& from, DeviceRun& to, const Options& options) {
  from.ensure_module();
  to.ensure_module();
  {
    CurrentContext current(from.ctx());
    const CUresult r = CUDATOOL_CU_RESULT(cuCtxEnablePeerAccess, to.ctx(), 0u);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
      throw_driver_error("cuCtxEnablePeerAccess", static_cast<int>(r));
  }
  DeviceBuffer source(from.ctx(), kPeerBytes), destination(to.ctx(), kPeerBytes);
  const std::uint64_t n = kPeerBytes / 4;
  std::vector<double> ms;
  {
    CurrentContext current(from.ctx());
    from.fill(source.get(), n, kSeedPeer, 0, ~0ull);
    CUstream s = from.stream->get();
    ms = time_ops(*from.stream, 1, kRepetitions, [&] {
      CUDATOOL_CU(cuMemcpyPeerAsync, destination.get(), to.ctx(), source.get(), from.ctx(),
                  kPeerBytes, s);
    });
  }
  std::uint64_t bad = 0;
  {
    CurrentContext current(to.ctx());
    bad = to.verify_on_device(destination.get(), n, kSeedPeer);
  }
  std::string how;
  auto theoretical = peer_theoretical(from, to, &how);
  CheckResult r =
      rate_result(Quantity::peer_copy, gbps(kPeerBytes, median(ms)), theoretical,
                  options.thresholds.min_peer_gbps, options.thresholds.fraction,
                  "device " + std::to_string(from.info.ordinal) + " to " +
                      std::to_string(to.info.ordinal) + (how.empty() ? "" : " over " + how));
  r.peer = to.info.ordinal;
  mark_shared(r, peer_sharers(from, to), options.occupancy);
  if (bad) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(bad) + " elements wrong after the peer copy; " + r.reason;
  }
  return r;
}

}  // namespace cudatool::check::detail
