// `cudatool check`: a GPU smoke check of every device in seconds. Plain result structs (a
// verdict, the measured value, the threshold, the unit and the reason per check; the app
// renders them, apps/cudatool/render_check.hpp), the threshold logic as pure functions
// (tested without a GPU), and run_check, which runs the checks on every device in parallel
// (one thread and context per device).
//
// Defaults are fractions of the theoretical rate (75%: what DCGM's diagnostics and Azure's
// H100 node health checks use for memory and PCIe bandwidth), each overridable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/device/device.hpp"
#include "cudatool/device/device_info.hpp"
#include "cudatool/driver/nvml.hpp"

namespace cudatool::check {

enum class Verdict { pass, warn, fail, skipped };
std::string_view verdict_name(Verdict v);
// The more severe of two verdicts: fail > warn > pass > skipped.
Verdict worse(Verdict a, Verdict b);

// What to do about a finding, from the least to the most disruptive; a node's remediation
// is the worst of its findings'. The table for every check is in cudatool(1), REMEDIATION.
//   none           nothing (a pass, a skipped check, an informational XID)
//   monitor        keep the node in service and watch it (a warning)
//   restart_job    the job or application failed or holds the GPU; the GPU is fine (NVIDIA's
//                  RESTART_APP)
//   reset_gpu      reset the GPU (nvidia-smi -r) with no process on it (RESET_GPU)
//   reboot_node    reboot the node (RESTART_BM; a pending row remap, a GPU off the bus)
//   drain_inspect  take the node out of service and inspect the hardware (CONTACT_SUPPORT; a
//                  failed row remap, wrong results, a link below its width)
enum class Remediation { none, monitor, restart_job, reset_gpu, reboot_node, drain_inspect };
std::string_view remediation_name(Remediation r);  // "none", "monitor", "restart_job", ...
std::string_view remediation_text(Remediation r);  // "reset the GPU", ...
const std::vector<Remediation>& all_remediations();
Remediation worse(Remediation a, Remediation b);

// The checks a caller names (cudatool's --only and --skip), in the order they run (occupancy first:
// it reads who else uses the device before cudatool's own context exists).
enum class Kind { identity, occupancy, health, xid, compute, memory, hostlink, peer };
std::string_view kind_name(Kind k);
const std::vector<Kind>& all_kinds();
// "compute,memory" -> {compute, memory}; UsageError naming `source` for an unknown name.
std::set<Kind> parse_kind_list(std::string_view list, std::string_view source);
// The checks to run: every one, or only `only`, or all but `skip` (not both: UsageError).
// Messages name them as `only_source` and `skip_source` (cudatool's "--only", "--skip").
std::set<Kind> select_kinds(const std::optional<std::string>& only, std::string_view only_source,
                            const std::optional<std::string>& skip, std::string_view skip_source);

// What a result's value (and threshold) measures; each is held in its base unit
// (base_unit): bytes, bytes per second, a ratio, or a plain number (a count, a flag, a bit
// mask). Renderers choose how to show them (GiB, GB/s, percent).
enum class Quantity {
  none,                         // no value (a result that only has a verdict and a reason)
  qualifying_devices,           // identity "count": devices meeting the requirements
  cuda_devices,                 // identity "nvml_devices": GPUs CUDA lists (threshold: NVML's)
  other_processes,              // occupancy "processes"
  memory_used_by_others,        // occupancy "used_memory": bytes
  gpu_utilization,              // occupancy "utilization": the highest reading, 0 to 1
  compute_wrong_elements,       // compute
  device_to_device,             // memory "d2d": bytes/s (a copy's read + write)
  host_to_device,               // hostlink "h2d": bytes/s
  device_to_host,               // hostlink "d2h": bytes/s
  peer_copy,                    // peer: bytes/s
  ecc_enabled,                  // health "ecc_mode": 1 enabled, 0 disabled
  ecc_uncorrected_errors,       // health "ecc_uncorrected"
  retired_pages,                // health "retired_pages"
  uncorrectable_remapped_rows,  // health "row_remap"
  clock_event_reasons,          // health "throttle": NVML's reason bits as a number
  pcie_link,                    // health "pcie_link": bytes/s, one direction
  nvlinks_up,                   // health "nvlink"
  xid_events,                   // xid "xid"
  other_gpu_xid_events,         // xid "xid_other_gpus"
  kernel_log_lines,             // xid "kernel_log"
};
// Every quantity but none, in the order above.
const std::vector<Quantity>& all_quantities();

enum class BaseUnit { number, bytes, bytes_per_second, ratio };
BaseUnit base_unit(Quantity q);

// How a value meets its threshold: value >= threshold (at_least), <= (at_most), < (below),
// == (equal); none where the result has no threshold to meet.
enum class Comparison { none, at_least, at_most, below, equal };

struct CheckResult {
  Kind kind = Kind::identity;
  std::string name;  // "identity", "ecc_mode", "h2d", "peer" ... (unique with `peer`)
  Verdict verdict = Verdict::skipped;
  // What `value` measures; none exactly when there is no value.
  Quantity quantity = Quantity::none;
  std::optional<double> value;      // in the quantity's base unit
  std::optional<double> threshold;  // the same unit
  Comparison comparison = Comparison::none;
  std::string reason;       // why (always set for warn, fail and skipped)
  std::optional<int> peer;  // peer checks: the destination device's ordinal
  // A measurement taken while other processes used the device: who ("" when it was not).
  std::string shared_with;
  // What to do about it; absent until run_check fills it from the check's own knowledge or
  // default_remediation (remediation_of reads either).
  std::optional<Remediation> remediation;
};

// The remediation of a result: its own where set, else by the table of cudatool(1)
// (default_remediation).
Remediation remediation_of(const CheckResult& result);
// The table: none for pass and skipped, monitor for a warning, and for a fail by the check
// (identity, compute, bandwidth shortfalls, clock faults, links: drain_inspect; occupancy:
// restart_job; ECC errors, NVLinks down, a device error: reset_gpu; ...).
Remediation default_remediation(const CheckResult& result);

// ---- Occupancy: who else uses a device (NVML, no context needed) ----

struct GpuProcess {
  unsigned pid = 0;
  std::string name;  // argv[0]'s file name, else /proc/<pid>/comm; "" where unreadable
  std::optional<std::uint64_t> used_memory;  // absent where NVML cannot say
  bool compute = false;
  bool graphics = false;
};

struct Occupancy {
  // The other processes on the device (cudatool itself left out); absent where NVML cannot
  // list them (processes_why_not says why).
  std::optional<std::vector<GpuProcess>> processes;
  std::string processes_why_not;
  std::string names_why_not;  // why the processes have no names ("" where they were read)
  std::optional<std::uint64_t> used_memory, total_memory;  // bytes
  bool used_excludes_reserved = false;  // NVML's v2 memory query: the driver's share left out
  // The highest of `utilization_readings` readings over `window_s` seconds.
  std::optional<unsigned> gpu_utilization, memory_utilization;
  int utilization_readings = 0;
  double window_s = 0;
  std::optional<unsigned> compute_mode;  // nvmlComputeMode_t
  // The driver refused cudatool a context (CUDA_ERROR_DEVICE_UNAVAILABLE): another process
  // holds an exclusive-process device, whether NVML lists it or not.
  bool context_refused = false;
};

struct OccupancyPolicy {
  bool require_idle = false;                     // any finding fails (else warns)
  std::optional<std::uint64_t> max_used_memory;  // given: used memory above it fails
  // What set them, as the results' reasons name it (cudatool's "--require-idle",
  // "--max-used-memory").
  std::string require_idle_source = "require_idle";
  std::string max_used_memory_source = "max_used_memory";
};
// Memory used by others that counts as occupied when no max_used_memory is given: above
// what an idle GPU shows with NVML's older memory query (its driver reservation).
inline constexpr std::uint64_t kIdleUsedMemory = 1ull << 30;

// nvmlComputeMode_t by name: "default", "exclusive_thread", "prohibited",
// "exclusive_process"; "mode N" otherwise.
std::string compute_mode_name(unsigned mode);
// The occupancy check's results: processes, used_memory, utilization, compute_mode.
std::vector<CheckResult> occupancy_results(const Occupancy& occupancy,
                                           const OccupancyPolicy& policy);
// Who else uses the device ("pid 4242 (python3, 77.7 GiB)", or what shows it where NVML
// lists no process); "" when nobody does. Measurements taken then are shared.
std::string sharers(const Occupancy& occupancy, const OccupancyPolicy& policy);
// Why no context can be made on the device (prohibited, or exclusive-process and held);
// "" when one can.
std::string context_blocked(const Occupancy& occupancy);
// Marks a measurement as taken while `sharers` used the device: the reason says so, and a
// shortfall (a rate that failed to reach its threshold) becomes a warning, a fail only under
// --require-idle. Applied to a rate before a data error overrides it: wrong data fails
// whoever shares the device.
void mark_shared(CheckResult& result, const std::string& sharers, const OccupancyPolicy& policy);
// The name of process `pid`: argv[0]'s file name from <proc_root>/<pid>/cmdline (never its
// arguments, which may hold secrets), else <proc_root>/<pid>/comm; "" where neither reads.
std::string process_name(unsigned pid, const std::string& proc_root = "/proc");
// Whether this process runs in the initial PID namespace (/proc/self/ns/pid is the kernel's
// PROC_PID_INIT_INO), where NVML's pids, the host's, are its own: in a container's namespace
// /proc/<pid> may be another process, so names are not read there.
bool in_initial_pid_namespace(const std::string& proc_root = "/proc");

// One XID of a GPU from the kernel log (xid.hpp): how often it was seen since boot, and the
// latest occurrence.
struct XidCount {
  unsigned xid = 0;
  std::size_t count = 0;
  std::optional<double> latest_uptime_s;       // seconds since boot, where the log says
  std::string latest_text;                     // printable ASCII, bounded
  std::optional<Remediation> recovery_action;  // Xid 154: the action its latest line names
};

struct DeviceReport {
  DeviceInfo identity;
  std::vector<CheckResult> checks;
  std::optional<Occupancy> occupancy;  // where the occupancy check read NVML
  // NVML's index (nvml_device_index: nvidia-smi's and DCGM's number for the GPU, which the
  // CUDA ordinal need not be); absent where NVML is unavailable.
  std::optional<unsigned> nvml_index = std::nullopt;
  // The XIDs the kernel log holds for this GPU (xid.hpp), each counted; empty where none or
  // where the log was not read.
  std::vector<XidCount> xids = {};
  Verdict verdict() const;          // the worst of its checks (skipped when it has none)
  Remediation remediation() const;  // the worst of its checks'
};

struct Report {
  std::string hostname;
  int cuda_version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
  // The driver's own version, "580.159.04" (driver/driver_release.hpp); absent where unknown.
  std::optional<std::string> driver_version;
  std::string kernel_form;  // what the embedded fatbin holds: "SASS sm_75,... + PTX compute_75"
  std::vector<CheckResult> node_checks;  // count, heterogeneity, peer when not per device
  std::vector<DeviceReport> devices;
  double seconds = 0;  // the check's wall time
  // The kernel log's XIDs: where they were read from ("" where the xid check did not run),
  // why it could not be read, and those of PCI devices that are none of the checked GPUs.
  std::string kernel_log_source, kernel_log_why_not;
  std::map<std::string, std::vector<XidCount>> other_xids;  // by pci device
  double boot_time = 0;  // Unix time of boot (the clock now less the time since boot)
  Verdict verdict() const;
  Remediation remediation() const;  // the worst of every finding's
};

struct Thresholds {
  double fraction = 0.75;  // of the theoretical rate, for every bandwidth without a minimum
  std::optional<double> min_h2d_gbps, min_d2h_gbps, min_d2d_gbps, min_peer_gbps;
};

struct Options {
  std::set<Kind> kinds;         // which checks (select_kinds)
  std::vector<Device> devices;  // empty: every visible device
  DeviceRequirements requirements;
  std::optional<std::string> expect_name;  // every device's name contains this
  std::optional<int> expect_count;         // exactly this many devices
  Thresholds thresholds;
  OccupancyPolicy occupancy;
  bool inject_compute_fault = false;  // test only: the compute kernel flips one element
};

// Runs the checks. Throws only for what stops the whole check (no driver, no device); a
// device that fails mid-check gets its checks failed with the error.
Report run_check(const Options& options);

// ---- Pure threshold logic (no GPU) ----

// PCIe per-lane payload rate, one direction, GB/s (1e9 bytes/s): gen 1 and 2 use 8b/10b
// (2.5 and 5 GT/s), gen 3-5 128b/130b (8, 16, 32 GT/s), gen 6 64 GT/s with FLIT (242/256).
// 0 for an unknown generation.
double pcie_lane_gbps(unsigned generation);
double pcie_theoretical_gbps(unsigned generation, unsigned width);
// Bus width (bits) / 8 x memory clock (kHz, as CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) x 2
// (double data rate), GB/s.
double memory_theoretical_gbps(int bus_width_bits, int memory_clock_khz);
// One NVLink's rate, one direction, GB/s, by the GPU's generation (NVLink 1 on 6.0: 20;
// NVLink 2 and 3 on 7.0 and 8.0: 25; NVLink 4 on 9.0: 26.5625, the signalling rate of its
// two 106.25 Gb/s lanes; NVLink 5 on 10.x: 50); 0 for a GPU without NVLink in this table.
// Not NVML's nvmlDeviceGetNvLinkVersion: its answer is an enum on newer drivers (6 for
// NVLink 4.0) and a plain number on older ones, and has been seen wrong for Hopper.
double nvlink_link_gbps(ComputeCapability cc);

// Bytes per second in a GB/s (1e9 bytes/s): the rates above and the minimums of Thresholds
// are in GB/s, results in bytes per second.
inline constexpr double kBytesPerGB = 1e9;

// A bandwidth check of `rate` (device_to_device, host_to_device, device_to_host or
// peer_copy: the result's kind and name follow, "d2d", "h2d", "d2h", "peer"): the threshold
// is `minimum` where given, else `fraction` of `theoretical`; pass when `measured` reaches
// it. Skipped (with the measured value) where neither is known, never a pass. Its arguments
// are in GB/s, the result's value and threshold in bytes per second.
CheckResult rate_result(Quantity rate, double measured, std::optional<double> theoretical,
                        std::optional<double> minimum, double fraction, const std::string& what);

// The health check from NVML's readings; `busy_link` is the PCIe link read while the link
// was busy (absent: not read).
std::vector<CheckResult> health_results(const NvmlHealth& health,
                                        const std::optional<PcieLink>& busy_link);
// The clock-event (throttle) reasons by meaning: the faults (hardware slowdown, thermal and
// power brake, the driver's thermal slowdown) warn or fail as DCGM's diagnostics treat them;
// the rest (idle, the power cap, application clocks, sync boost, display clocks) is how a
// GPU under load or at rest runs, named but never warned about.
struct ThrottleReason {
  unsigned long long bit;
  std::string_view name;
  Verdict verdict;  // pass: normal
};
const std::vector<ThrottleReason>& throttle_reason_table();
// Names of the clock-event reason bits set in `reasons`, idle excluded; an unknown bit as
// "0x200".
std::vector<std::string> throttle_reason_names(unsigned long long reasons);

// The compute check: `mismatches` of `elements` differ; blocks ran on `sms_seen` of
// `sm_count` SMs; `form` says what was loaded.
CheckResult compute_result(std::uint64_t mismatches, std::uint64_t elements, int sms_seen,
                           int sm_count, const std::string& form, const std::string& first_bad);

// Identity: per device (min compute capability, memory, expected name) and for the node
// (count, heterogeneity).
CheckResult identity_result(const DeviceInfo& device, const DeviceRequirements& requirements,
                            const std::optional<std::string>& expect_name);
std::vector<CheckResult> node_identity_results(const std::vector<DeviceInfo>& devices,
                                               const DeviceRequirements& requirements,
                                               std::optional<int> expect_count);

// Which form of the embedded kernel the driver loads on `cc`: "SASS sm_90" where the fatbin
// has machine code of the same major version and a minor at most cc's, else
// "PTX compute_75 (JIT)".
std::string kernel_form(ComputeCapability cc, std::span<const int> sass, int ptx);
// The embedded fatbin's contents: "SASS sm_75 sm_80 ... + PTX compute_75".
std::string embedded_kernel_contents();

// The pattern the compute kernel writes (the same function as the device code).
inline std::uint32_t pattern(std::uint64_t i, std::uint32_t seed) {
  std::uint32_t x =
      static_cast<std::uint32_t>(i) * 2654435761u ^ static_cast<std::uint32_t>(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// The median of `samples` (the mean of the middle two for an even count); 0 if empty.
double median(std::vector<double> samples);

}  // namespace cudatool::check
