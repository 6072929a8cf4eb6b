// Internal: one device's run of `cudatool check` (its context, embedded kernels, stream and
// results so far) and what every probe of it shares: the sizes and seeds, the timing of
// stream work between events, the verification of a copy, and the results of a check that
// failed or was skipped. The probes are in probes.hpp; the engine that runs them, one thread
// per device, is engine.cpp.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudatool/check/check.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "device/stream.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::check::detail {

constexpr int kRepetitions = 5;
constexpr std::size_t kComputeBytes = 64ull << 20;  // also the host-link transfer size
constexpr std::size_t kMemoryBytes = 256ull << 20;  // per buffer of the device copy
constexpr std::size_t kPeerBytes = 256ull << 20;
constexpr std::uint32_t kSeedCompute = 0x9e3779b9u, kSeedMemory = 0x7f4a7c15u,
                        kSeedHost = 0x85ebca6bu, kSeedPeer = 0xc2b2ae35u;
constexpr unsigned kThreads = 256;
constexpr std::size_t kSmSlots = 1024;

// The SASS architectures of the embedded fatbin (check_kernels.cu) and its PTX's.
std::span<const int> sass_list();
int embedded_ptx();

// One device's run: its context, kernels, stream, and the results so far.
struct DeviceRun {
  Device device;
  DeviceInfo info;
  std::vector<CheckResult> results;
  std::optional<NvmlHealth> health;
  std::string nvml_why_not;
  std::optional<PcieLink> busy_link;
  std::optional<double> pcie_theoretical;  // from the link's maximum generation and width
  bool mig = false;
  // The occupancy check's reading (before this run's context), who shares the device ("":
  // nobody), and why no context can be made on it ("": one can).
  std::optional<Occupancy> occupancy;
  std::size_t occupancy_at = 0;  // where its results are in `results`
  std::string sharers;
  std::string blocked;
  bool fatal_crowded_out = false;  // `fatal` is running out of memory others hold
  bool peer_stage = false;         // peer copies follow (peer selected, more than one device)
  // Set once the context exists; an error that stopped the device (its later checks fail
  // with it).
  std::unique_ptr<Context> context;
  std::unique_ptr<Module> module;
  std::unique_ptr<cudatool::detail::Stream> stream;
  std::string fatal;
  // The driver did not answer this device's queries (name, memory, attributes): what it
  // said. The device is still listed, by whatever it did answer (its bus id, UUID).
  std::string info_error;
  std::vector<XidCount> xids;  // the kernel log's, once read

  explicit DeviceRun(const Device& d) : device(d) {}

  CUcontext ctx() const { return context->handle(); }

  void ensure_context();
  void ensure_module();

  // Zeroes device memory in stream order (the stream is non-blocking: a plain cuMemsetD8
  // on the legacy stream would not wait for the work queued on it).
  void zero(CUdeviceptr pointer, std::size_t bytes);
  unsigned grid() const;
  // The pattern of `seed` into `n` words at `out`, each block marking its SM in `sm_seen`
  // (0: none), the word at `fault_index` wrong (~0: none).
  void fill(CUdeviceptr out, std::uint64_t n, std::uint32_t seed, CUdeviceptr sm_seen,
            std::uint64_t fault_index);
  // Mismatches of `data` against the pattern, counted on the device.
  std::uint64_t verify_on_device(CUdeviceptr data, std::uint64_t n, std::uint32_t seed);
};

// Milliseconds of each of `reps` operations, each between two events on `stream`, after
// `warmups` untimed ones. `between` runs once every operation is queued (the host link
// reads the PCIe link then).
std::vector<double> time_ops(const cudatool::detail::Stream& stream, int warmups, int reps,
                             const std::function<void()>& op,
                             const std::function<void()>& between = {});

double gbps(std::size_t bytes, double ms);

// Host-side verification: mismatches and the first one described.
std::uint64_t verify_on_host(const std::uint32_t* data, std::uint64_t n, std::uint32_t seed,
                             std::string* first_bad);

CheckResult failed(Kind kind, std::string name, const std::string& why);
CheckResult skipped(Kind kind, std::string name, const std::string& why);

// Out of device memory while other processes hold it: the occupancy's doing, not the
// device's; a warning (a fail under --require-idle), marked shared.
bool out_of_memory(const std::exception& e);
bool out_of_memory_while_shared(const DeviceRun& run, const std::exception& e);
CheckResult out_of_memory_result(Kind kind, std::string name, const std::string& what,
                                 const std::string& who, bool require_idle);

}  // namespace cudatool::check::detail
