// The engine of `cudatool check`: one thread per device, each with its own (primary)
// context, runs compute, memory bandwidth, host link and health; the peer copies follow,
// pair by pair, once every device is done. Timed regions are bracketed by events on the
// device's stream, after a warm-up; the figure is the median of kRepetitions; every copy's
// data is verified afterwards.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/check/check.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/driver/driver_release.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::check_kernels {
extern const unsigned char check_fatbin[];
extern const std::size_t check_fatbin_size;
extern const int check_fatbin_sass[];  // ends with 0
extern const int check_fatbin_ptx;
}  // namespace cudatool::check_kernels

namespace cudatool::check {
namespace {

constexpr int kRepetitions = 5;
constexpr std::size_t kComputeBytes = 64ull << 20;  // also the host-link transfer size
constexpr std::size_t kMemoryBytes = 256ull << 20;  // per buffer of the device copy
constexpr std::size_t kPeerBytes = 256ull << 20;
constexpr std::uint32_t kSeedCompute = 0x9e3779b9u, kSeedMemory = 0x7f4a7c15u,
                        kSeedHost = 0x85ebca6bu, kSeedPeer = 0xc2b2ae35u;
constexpr unsigned kThreads = 256;
constexpr std::size_t kSmSlots = 1024;

std::span<const int> sass_list() {
  std::size_t n = 0;
  while (check_kernels::check_fatbin_sass[n] != 0) ++n;
  return {check_kernels::check_fatbin_sass, n};
}

// Makes `context` current for a scope and restores the previous one.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext context) { CUDATOOL_CU(cuCtxPushCurrent, context); }
  ~ScopedContext() {
    CUcontext popped = nullptr;
    driver::api().cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
};

// Device memory, freed in its context.
class DeviceBuffer {
 public:
  DeviceBuffer(CUcontext context, std::size_t bytes) : context_(context), bytes_(bytes) {
    ScopedContext scope(context_);
    CUDATOOL_CU(cuMemAlloc, &pointer_, bytes);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    const auto& api = driver::api();
    if (api.cuCtxPushCurrent(context_) != CUDA_SUCCESS) return;
    api.cuMemFree(pointer_);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }
  CUdeviceptr get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  CUcontext context_;
  std::size_t bytes_;
  CUdeviceptr pointer_ = 0;
};

// Page-locked host memory.
class PinnedBuffer {
 public:
  PinnedBuffer(CUcontext context, std::size_t bytes) : context_(context), bytes_(bytes) {
    ScopedContext scope(context_);
    CUDATOOL_CU(cuMemHostAlloc, &pointer_, bytes, 0u);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    const auto& api = driver::api();
    if (api.cuCtxPushCurrent(context_) != CUDA_SUCCESS) return;
    api.cuMemFreeHost(pointer_);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }
  std::uint32_t* words() const { return static_cast<std::uint32_t*>(pointer_); }
  void* get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  CUcontext context_;
  std::size_t bytes_;
  void* pointer_ = nullptr;
};

class Stream {
 public:
  explicit Stream(CUcontext context) : context_(context) {
    ScopedContext scope(context_);
    CUDATOOL_CU(cuStreamCreate, &stream_, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    const auto& api = driver::api();
    if (api.cuCtxPushCurrent(context_) != CUDA_SUCCESS) return;
    api.cuStreamDestroy(stream_);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }
  CUstream get() const { return stream_; }

 private:
  CUcontext context_;
  CUstream stream_ = nullptr;
};

class Event {
 public:
  Event() { CUDATOOL_CU(cuEventCreate, &event_, static_cast<unsigned>(CU_EVENT_DEFAULT)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  ~Event() {
    if (event_) driver::api().cuEventDestroy(event_);
  }
  CUevent get() const { return event_; }

 private:
  CUevent event_ = nullptr;
};

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
  std::unique_ptr<Stream> stream;
  std::string fatal;

  explicit DeviceRun(const Device& d) : device(d) {}

  CUcontext ctx() const { return context->handle(); }

  void ensure_context() {
    if (context) return;
    context = std::make_unique<Context>(device);
    stream = std::make_unique<Stream>(ctx());
  }
  void ensure_module() {
    ensure_context();
    if (module) return;
    module = std::make_unique<Module>(
        *context, std::string_view(reinterpret_cast<const char*>(check_kernels::check_fatbin),
                                   check_kernels::check_fatbin_size));
  }

  // Zeroes device memory in stream order (the stream is non-blocking: a plain cuMemsetD8
  // on the legacy stream would not wait for the work queued on it).
  void zero(CUdeviceptr pointer, std::size_t bytes) {
    CUDATOOL_CU(cuMemsetD8Async, pointer, static_cast<unsigned char>(0), bytes, stream->get());
  }

  unsigned grid() const {
    return static_cast<unsigned>(std::max(1, info.multiprocessor_count) * 4);
  }

  void fill(CUdeviceptr out, std::uint64_t n, std::uint32_t seed, CUdeviceptr sm_seen,
            std::uint64_t fault_index) {
    CUfunction f = module->function("cudatool_check_fill");
    void* args[] = {&out, &n, &seed, &sm_seen, &fault_index};
    CUDATOOL_CU(cuLaunchKernel, f, grid(), 1u, 1u, kThreads, 1u, 1u, 0u, stream->get(), args,
                nullptr);
  }

  // Mismatches of `data` against the pattern, counted on the device.
  std::uint64_t verify_on_device(CUdeviceptr data, std::uint64_t n, std::uint32_t seed) {
    DeviceBuffer counter(ctx(), sizeof(unsigned long long));
    zero(counter.get(), sizeof(unsigned long long));
    CUfunction f = module->function("cudatool_check_verify");
    CUdeviceptr counter_ptr = counter.get();
    void* args[] = {&data, &n, &seed, &counter_ptr};
    CUDATOOL_CU(cuLaunchKernel, f, grid(), 1u, 1u, kThreads, 1u, 1u, 0u, stream->get(), args,
                nullptr);
    CUDATOOL_CU(cuStreamSynchronize, stream->get());
    unsigned long long mismatches = 0;
    CUDATOOL_CU(cuMemcpyDtoH, &mismatches, counter.get(), sizeof mismatches);
    return mismatches;
  }
};

// Milliseconds of each of `reps` operations, each between two events on `stream`, after
// `warmups` untimed ones. `between` runs once every operation is queued (the host link
// reads the PCIe link then).
template <class Op>
std::vector<double> time_ops(CUstream stream, int warmups, int reps, Op op,
                             const std::function<void()>& between = {}) {
  for (int i = 0; i < warmups; ++i) op();
  std::vector<Event> events;
  events.reserve(2 * reps);
  for (int i = 0; i < 2 * reps; ++i) events.emplace_back();
  for (int i = 0; i < reps; ++i) {
    CUDATOOL_CU(cuEventRecord, events[2 * i].get(), stream);
    op();
    CUDATOOL_CU(cuEventRecord, events[2 * i + 1].get(), stream);
  }
  if (between) between();
  CUDATOOL_CU(cuStreamSynchronize, stream);
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    CUDATOOL_CU(cuEventElapsedTime, &t, events[2 * i].get(), events[2 * i + 1].get());
    ms.push_back(t);
  }
  return ms;
}

double gbps(std::size_t bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0;
}

// Host-side verification: mismatches and the first one described.
std::uint64_t verify_on_host(const std::uint32_t* data, std::uint64_t n, std::uint32_t seed,
                             std::string* first_bad) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint32_t expected = pattern(i, seed);
    if (data[i] != expected) {
      if (bad++ == 0 && first_bad) {
        char text[128];
        std::snprintf(text, sizeof text, "element %llu is 0x%08x, expected 0x%08x",
                      static_cast<unsigned long long>(i), data[i], expected);
        *first_bad = text;
      }
    }
  }
  return bad;
}

CheckResult failed(Kind kind, std::string name, const std::string& why) {
  CheckResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.verdict = Verdict::fail;
  r.reason = why;
  return r;
}

CheckResult skipped(Kind kind, std::string name, const std::string& why) {
  CheckResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.verdict = Verdict::skipped;
  r.reason = why;
  return r;
}

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

// The link's maximum from sysfs where NVML cannot say: "32.0 GT/s PCIe" -> 5.
std::optional<PcieLink> sysfs_max_link(const std::string& pci_bus_id) {
  std::string id = pci_bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string base = "/sys/bus/pci/devices/" + id + "/";
  std::ifstream speed_file(base + "max_link_speed"), width_file(base + "max_link_width");
  double gts = 0;
  unsigned width = 0;
  if (!(speed_file >> gts) || !(width_file >> width)) return std::nullopt;
  unsigned gen = gts >= 64 ? 6 : gts >= 32 ? 5 : gts >= 16 ? 4 : gts >= 8 ? 3 : gts >= 5 ? 2 : 1;
  return PcieLink{gen, width};
}

void run_compute(DeviceRun& run, const Options& options, std::unique_ptr<PinnedBuffer>& host,
                 std::unique_ptr<DeviceBuffer>& buffer) {
  run.ensure_module();
  const std::uint64_t n = kComputeBytes / 4;
  buffer = std::make_unique<DeviceBuffer>(run.ctx(), kComputeBytes);
  DeviceBuffer sm_seen(run.ctx(), kSmSlots * 4);
  run.zero(sm_seen.get(), kSmSlots * 4);
  const std::uint64_t fault = options.inject_compute_fault ? n / 2 + 12345 : ~0ull;
  run.fill(buffer->get(), n, kSeedCompute, sm_seen.get(), fault);
  CUDATOOL_CU(cuStreamSynchronize, run.stream->get());
  host = std::make_unique<PinnedBuffer>(run.ctx(), kComputeBytes);
  CUDATOOL_CU(cuMemcpyDtoHAsync, host->get(), buffer->get(), kComputeBytes, run.stream->get());
  std::vector<std::uint32_t> seen(kSmSlots);
  CUDATOOL_CU(cuMemcpyDtoHAsync, seen.data(), sm_seen.get(), kSmSlots * 4, run.stream->get());
  CUDATOOL_CU(cuStreamSynchronize, run.stream->get());
  int sms = 0;
  for (auto s : seen) sms += s != 0;
  std::string first_bad;
  const std::uint64_t bad = verify_on_host(host->words(), n, kSeedCompute, &first_bad);
  // What the driver loaded: the architecture it compiled for and the PTX it came from.
  int binary = 0, ptx = 0;
  CUfunction f = run.module->function("cudatool_check_fill");
  CUDATOOL_CU(cuFuncGetAttribute, &binary, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f);
  CUDATOOL_CU(cuFuncGetAttribute, &ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, f);
  std::string form =
      kernel_form(run.info.compute_capability, sass_list(), check_kernels::check_fatbin_ptx);
  form += " (binary version " + std::to_string(binary) + ", from PTX " + std::to_string(ptx) + ")";
  CheckResult r = compute_result(bad, n, sms, run.info.multiprocessor_count, form, first_bad);
  mark_shared(r, run.sharers, options.occupancy.require_idle);
  run.results.push_back(r);
}

void run_memory(DeviceRun& run, const Options& options) {
  run.ensure_module();
  std::size_t free_bytes = 0, total = 0;
  {
    ScopedContext scope(run.ctx());
    CUDATOOL_CU(cuMemGetInfo, &free_bytes, &total);
  }
  const std::size_t bytes = std::min(kMemoryBytes, (free_bytes / 8) & ~std::size_t(4095));
  DeviceBuffer source(run.ctx(), bytes), destination(run.ctx(), bytes);
  const std::uint64_t n = bytes / 4;
  run.fill(source.get(), n, kSeedMemory, 0, ~0ull);
  CUstream s = run.stream->get();
  const auto ms = time_ops(s, 2, kRepetitions, [&] {
    CUDATOOL_CU(cuMemcpyDtoDAsync, destination.get(), source.get(), bytes, s);
  });
  const std::uint64_t bad = run.verify_on_device(destination.get(), n, kSeedMemory);
  // A copy reads and writes every byte: the memory moves twice the bytes copied (as the
  // CUDA samples' bandwidthTest counts device-to-device copies).
  const double measured = gbps(2 * bytes, median(ms));
  std::optional<double> theoretical =
      memory_theoretical_gbps(run.info.global_memory_bus_width, run.info.memory_clock_rate_khz);
  if (run.mig) theoretical.reset();  // a MIG instance has a share of the bus
  CheckResult r = rate_result(Kind::memory, "d2d", measured, theoretical,
                              options.thresholds.min_d2d_gbps, options.thresholds.fraction,
                              "device copy of " + format_bytes(bytes) + " (read + write)");
  if (run.mig && !options.thresholds.min_d2d_gbps)
    r.reason += " (a MIG instance: the theoretical rate is the whole GPU's)";
  mark_shared(r, run.sharers, options.occupancy.require_idle);
  if (bad) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(bad) + " elements wrong after the device copy; " + r.reason;
  }
  run.results.push_back(r);
}

void run_hostlink(DeviceRun& run, const Options& options, std::unique_ptr<PinnedBuffer>& host,
                  std::unique_ptr<DeviceBuffer>& buffer) {
  run.ensure_module();
  const std::size_t bytes = kComputeBytes;
  const std::uint64_t n = bytes / 4;
  if (!host) host = std::make_unique<PinnedBuffer>(run.ctx(), bytes);
  if (!buffer) buffer = std::make_unique<DeviceBuffer>(run.ctx(), bytes);
  // The host buffer gets the pattern by a device->host copy of a fill, so the host->device
  // copy's data is known on both sides.
  run.fill(buffer->get(), n, kSeedHost, 0, ~0ull);
  CUstream s = run.stream->get();
  CUDATOOL_CU(cuMemcpyDtoHAsync, host->get(), buffer->get(), bytes, s);
  run.zero(buffer->get(), bytes);
  CUDATOOL_CU(cuStreamSynchronize, s);
  const std::string link = run.info.pci_bus_id;
  const auto h2d = time_ops(
      s, 1, kRepetitions,
      [&] { CUDATOOL_CU(cuMemcpyHtoDAsync, buffer->get(), host->get(), bytes, s); },
      [&] { run.busy_link = nvml_current_pcie_link(link); });
  const std::uint64_t bad_h2d = run.verify_on_device(buffer->get(), n, kSeedHost);
  std::memset(host->get(), 0, bytes);
  const auto d2h = time_ops(s, 1, kRepetitions, [&] {
    CUDATOOL_CU(cuMemcpyDtoHAsync, host->get(), buffer->get(), bytes, s);
  });
  const std::uint64_t bad_d2h = verify_on_host(host->words(), n, kSeedHost, nullptr);
  const std::string what = run.pcie_theoretical ? "pinned " + format_bytes(bytes) : "pinned";
  CheckResult up = rate_result(Kind::hostlink, "h2d", gbps(bytes, median(h2d)),
                               run.pcie_theoretical, options.thresholds.min_h2d_gbps,
                               options.thresholds.fraction, "host to device, " + what);
  CheckResult down = rate_result(Kind::hostlink, "d2h", gbps(bytes, median(d2h)),
                                 run.pcie_theoretical, options.thresholds.min_d2h_gbps,
                                 options.thresholds.fraction, "device to host, " + what);
  mark_shared(up, run.sharers, options.occupancy.require_idle);
  mark_shared(down, run.sharers, options.occupancy.require_idle);
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

void run_health(DeviceRun& run, const Options& options) {
  if (!run.health) {
    run.results.push_back(skipped(Kind::health, "health", run.nvml_why_not));
    return;
  }
  if (run.health->found && run.health->pcie_max_generation && !run.busy_link) {
    // Not read during the host-link copies (that check was skipped): an idle link at its
    // maximum needs no traffic; one below it is read again under load.
    run.busy_link = nvml_current_pcie_link(run.info.pci_bus_id);
    if (run.busy_link && run.blocked.empty() &&
        (run.busy_link->generation < *run.health->pcie_max_generation ||
         run.busy_link->width < run.health->pcie_max_width.value_or(0))) {
      run.ensure_context();
      PinnedBuffer host(run.ctx(), kComputeBytes);
      DeviceBuffer buffer(run.ctx(), kComputeBytes);
      CUstream s = run.stream->get();
      time_ops(
          s, 1, kRepetitions,
          [&] { CUDATOOL_CU(cuMemcpyHtoDAsync, buffer.get(), host.get(), kComputeBytes, s); },
          [&] { run.busy_link = nvml_current_pcie_link(run.info.pci_bus_id); });
    }
  }
  for (auto& r : health_results(*run.health, run.busy_link)) {
    // Clock events read while another process loads the device are partly its doing
    // (a thermal slowdown under its load): said, the verdict unchanged.
    if (r.name == "throttle") mark_shared(r, run.sharers, options.occupancy.require_idle);
    run.results.push_back(r);
  }
}

// Out of device memory while other processes hold it: the occupancy's doing, not the
// device's; a warning (a fail under --require-idle), marked shared.
bool out_of_memory(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error && error->code() == CUDA_ERROR_OUT_OF_MEMORY;
}

bool out_of_memory_while_shared(const DeviceRun& run, const std::exception& e) {
  return out_of_memory(e) && !run.sharers.empty();
}

CheckResult out_of_memory_result(Kind kind, std::string name, const std::string& what,
                                 const std::string& who, bool require_idle) {
  CheckResult r = failed(kind, std::move(name), what + "; other processes hold the memory: " + who);
  r.verdict = require_idle ? Verdict::fail : Verdict::warn;
  r.shared_with = who;
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

// The occupancy check: its results go where `run.occupancy_at` says, so a later refusal of
// a context can replace them.
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

// The driver refused a context because another process holds the device exclusively: the
// occupancy verdict, not a failed check.
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
  std::unique_ptr<PinnedBuffer> host;
  std::unique_ptr<DeviceBuffer> buffer;
  if (kinds.count(Kind::compute))
    guarded(run, options, Kind::compute, [&] { run_compute(run, options, host, buffer); });
  if (kinds.count(Kind::memory))
    guarded(run, options, Kind::memory, [&] { run_memory(run, options); });
  if (kinds.count(Kind::hostlink))
    guarded(run, options, Kind::hostlink, [&] { run_hostlink(run, options, host, buffer); });
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

// Who shared either end of a peer copy ("" when neither was).
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
    ScopedContext scope(from.ctx());
    const CUresult r = CUDATOOL_CU_RESULT(cuCtxEnablePeerAccess, to.ctx(), 0u);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
      throw_driver_error("cuCtxEnablePeerAccess", static_cast<int>(r));
  }
  DeviceBuffer source(from.ctx(), kPeerBytes), destination(to.ctx(), kPeerBytes);
  const std::uint64_t n = kPeerBytes / 4;
  std::vector<double> ms;
  {
    ScopedContext scope(from.ctx());
    from.fill(source.get(), n, kSeedPeer, 0, ~0ull);
    CUstream s = from.stream->get();
    ms = time_ops(s, 1, kRepetitions, [&] {
      CUDATOOL_CU(cuMemcpyPeerAsync, destination.get(), to.ctx(), source.get(), from.ctx(),
                  kPeerBytes, s);
    });
  }
  std::uint64_t bad = 0;
  {
    ScopedContext scope(to.ctx());
    bad = to.verify_on_device(destination.get(), n, kSeedPeer);
  }
  std::string how;
  auto theoretical = peer_theoretical(from, to, &how);
  CheckResult r =
      rate_result(Kind::peer, "peer", gbps(kPeerBytes, median(ms)), theoretical,
                  options.thresholds.min_peer_gbps, options.thresholds.fraction,
                  "device " + std::to_string(from.info.ordinal) + " to " +
                      std::to_string(to.info.ordinal) + (how.empty() ? "" : " over " + how));
  r.peer = to.info.ordinal;
  mark_shared(r, peer_sharers(from, to), options.occupancy.require_idle);
  if (bad) {
    r.verdict = Verdict::fail;
    r.reason = std::to_string(bad) + " elements wrong after the peer copy; " + r.reason;
  }
  return r;
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
  return out + " + PTX compute_" + std::to_string(check_kernels::check_fatbin_ptx);
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
