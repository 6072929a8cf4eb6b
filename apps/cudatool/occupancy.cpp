// cudatool occupancy: resident blocks and warps per SM for a block size, register count
// and shared-memory size, what limits them, and sweeps over each parameter. With --arch
// it works from the compiled-in architecture table and never loads the driver.
// Options -> the launch and the device (or table row) -> the library's answer, whole
// (OccupancyReport) -> its text, JSON or CSV (occupancy_report.hpp).
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/binary/kernel_filter.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/device/device_cache.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "occupancy_report.hpp"

namespace cudatool::app {
namespace {

struct OccupancyOptions {
  std::optional<std::string> threads, regs, smem, barriers, arch, device, sms;
  std::optional<std::string> kernel_from, kernel;  // a kernel from a compiled binary
  std::string sweep_list;
  CLI::Option* sweep = nullptr;
  bool sweep_regs = false;
  bool sweep_smem = false;
  bool fresh = false;
};

// A whole number in [minimum, INT_MAX] from a flag (numbers.hpp: the range in the message).
int parse_count(const std::string& text, const std::string& flag, int minimum) {
  return parse_int(text, flag, minimum);
}

// "64,128,256": block sizes, each a whole number of at least 1 (the list split by the one
// splitter of list-valued flags, base/text.hpp).
std::vector<int> parse_block_size_list(const std::string& text) {
  std::vector<int> sizes;
  for (const std::string& item : split_list(text, "--sweep", "64,128,256")) {
    try {
      sizes.push_back(parse_count(item, "--sweep", 1));
    } catch (const UsageError&) {
      throw UsageError("--sweep " + quote_input(text) + ": entry " + quote_input(item) +
                       " is not a block size (a whole number 1.." +
                       std::to_string(std::numeric_limits<int>::max()) + ")");
    }
  }
  return sizes;
}

// The question the flags ask; UsageError where they contradict each other.
OccupancyQuestion question_of(const OccupancyOptions& o) {
  if (o.arch && o.device)
    throw UsageError(
        "--arch and --device exclude each other: --arch computes for an architecture without a "
        "GPU, --device reads a real one");
  const bool sweep_threads = o.sweep->count() > 0;
  if (sweep_threads + o.sweep_regs + o.sweep_smem > 1)
    throw UsageError(
        "--sweep, --sweep-regs and --sweep-smem exclude each other: sweep one at a time");
  if (sweep_threads && o.threads)
    throw UsageError("--sweep varies the block size: leave out --threads");
  if ((o.sweep_regs || o.sweep_smem) && !o.threads)
    throw UsageError(std::string(o.sweep_regs ? "--sweep-regs" : "--sweep-smem") +
                     " needs --threads (the block size it holds fixed)");
  if (!sweep_threads && !o.threads)
    throw UsageError("--threads is required (or --sweep to try every block size)");
  return sweep_threads  ? OccupancyQuestion::block_sizes
         : o.sweep_regs ? OccupancyQuestion::registers
         : o.sweep_smem ? OccupancyQuestion::shared_memory
                        : OccupancyQuestion::launch;
}

// The one kernel of --kernel-from that --kernel names (in the --arch image where given),
// checked against the block size as kernels and compile check it
// (occupancy/kernel_occupancy.hpp).
KernelSource find_kernel_source(const OccupancyOptions& o, const std::optional<Arch>& arch,
                                int threads) {
  if (o.regs || o.barriers)
    throw UsageError("--kernel-from takes --regs and --barriers from the kernel: leave them out");
  const KernelNameFilter pattern(*o.kernel, "--kernel");
  ScanOptions scan;
  if (arch) scan.arch = {*arch};
  const ScanResult found = scan_binaries({*o.kernel_from}, scan);
  KernelLookup lookup{.pattern = *o.kernel,
                      .source = "--kernel",
                      .file = *o.kernel_from,
                      .arch = o.arch ? std::optional<std::string_view>(*o.arch) : std::nullopt,
                      .arch_source = "--arch",
                      .several_architectures_ok = o.device.has_value()};
  const ScannedKernel& kernel = find_one_kernel(found, pattern, lookup);
  const ScannedImage& image = found.images[kernel.image];
  if (threads > 0)
    if (const auto problem =
            block_size_problem(kernel.resources, kernel.bounds, image.relocatable, threads))
      throw UsageError("--threads " + std::to_string(threads) + ": " +
                       quote_input(kernel.resources.demangled) + ": " + *problem);
  // A kernel comes from a CUBIN, which always has an architecture.
  return {kernel, *o.kernel_from, image.arch.value_or(Arch{})};
}

ExitStatus run(const OccupancyOptions& o, TableFormat format) {
  // Flags first: a malformed value is a usage error even where no GPU is.
  const OccupancyQuestion question = question_of(o);
  const int threads = o.threads ? parse_count(*o.threads, "--threads", 1) : 0;
  int registers = o.regs ? parse_count(*o.regs, "--regs", 0) : 0;
  std::size_t shared_mem = o.smem ? parse_size(*o.smem, "--smem") : 0;
  int barriers = o.barriers ? parse_count(*o.barriers, "--barriers", 0) : 1;
  // The grammar first; whether the table has the architecture is checked where it is read.
  const std::optional<Arch> arch_flag =
      o.arch ? std::optional<Arch>(Arch::parse(*o.arch, "--arch")) : std::nullopt;
  if (o.kernel_from.has_value() != o.kernel.has_value())
    throw UsageError("--kernel-from FILE and --kernel NAME go together");
  std::optional<KernelSource> source;
  if (o.kernel_from) {
    source = find_kernel_source(o, arch_flag, threads);
    const KernelResources& k = source->kernel.resources;
    registers = k.num_regs;
    shared_mem += static_cast<std::size_t>(k.shared_size_bytes);  // --smem: dynamic
    barriers = std::max(1, k.num_barriers);
  }
  const std::optional<int> sms =
      o.sms ? std::optional<int>(parse_count(*o.sms, "--sms", 1)) : std::nullopt;
  // `--sweep` alone (CLI11 then gives its default_str, "all") tries every block size;
  // `--sweep ""` is a malformed list.
  std::vector<int> block_sizes;
  if (question == OccupancyQuestion::block_sizes && o.sweep_list != "all")
    block_sizes = parse_block_size_list(o.sweep_list);

  const auto device_data = [&]() -> std::pair<DeviceData, std::string> {
    // The table only, no driver: --arch as given, or the kernel's image's architecture.
    if (o.arch) return {DeviceData(*o.arch, "--arch"), ""};
    if (source && !o.device) return {DeviceData(source->arch, "architecture"), ""};
    use_device_cache(o.fresh, "--fresh");
    const Device device = select_device(o.device, "--device");
    return {DeviceData(device), "device " + std::to_string(device.ordinal())};
  };
  auto [devdata, where] = device_data();
  if (sms) devdata.set_sm_count(*sms);
  OccupancyReport report{.devdata = std::move(devdata),
                         .where = std::move(where),
                         .source = std::move(source),
                         .question = question,
                         .threads = o.threads ? std::optional<int>(threads) : std::nullopt,
                         .registers = registers,
                         .shared_mem = shared_mem,
                         .barriers = barriers};
  answer_occupancy(report, std::move(block_sizes), o.regs.has_value(), o.smem.has_value());
  if (format == TableFormat::json)
    print_occupancy_json(report);
  else if (format == TableFormat::text)
    print_occupancy_text(report);
  else
    print_occupancy_csv(report, format == TableFormat::csv);
  return ExitStatus::success;
}

}  // namespace

Command add_occupancy(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "occupancy",
      "Resident blocks and warps per SM for a launch, what limits them, and sweeps (exact: the "
      "toolkit's cuda_occupancy.h; --arch needs no GPU)");
  auto o = std::make_shared<OccupancyOptions>();
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  sub->add_option("--threads,-t", o->threads, "Threads per block (1 to the device's maximum)");
  sub->add_option("--regs,-r", o->regs, "Registers per thread (default 0)");
  sub->add_option("--smem,-s", o->smem,
                  "Shared memory per block, static plus dynamic: 49152, 48K, 48KiB (default 0)");
  sub->add_option("--barriers", o->barriers, "Named block barriers per block (default 1)");
  sub->add_option("--arch,-a", o->arch,
                  "Architecture instead of a device, no GPU or driver needed: sm_90, sm_90a, "
                  "sm_100f, 9.0, compute_90 (excludes --device)")
      ->check(completion_choices(architecture_names()));
  sub->add_option("--device,-d", o->device,
                  "Device: ordinal, PCI bus id or UUID (default: CUDA_DEVICE, ~/.cuda-device, 0)");
  sub->add_option("--kernel-from", o->kernel_from,
                  "Take registers, static shared memory and barriers from a kernel of this "
                  "compiled binary (with --kernel; --smem then adds dynamic shared memory)");
  sub->add_option("--kernel", o->kernel,
                  "The kernel of --kernel-from: a regular expression matching one kernel's "
                  "mangled or demangled name");
  sub->add_option("--sms", o->sms, "Override the SM count (for the minimum grid size)");
  add_fresh_flag(*sub, o->fresh);
  o->sweep = sub->add_option("--sweep", o->sweep_list,
                             "Sweep block sizes: every multiple of the warp size, or a list "
                             "(--sweep 64,128,256)")
                 ->expected(0, 1)
                 ->default_str("all");
  sub->add_flag("--sweep-regs", o->sweep_regs,
                "Sweep registers per thread 0..255 for --threads: where the cliffs are");
  sub->add_flag("--sweep-smem", o->sweep_smem,
                "Sweep shared memory per block up to the opt-in limit for --threads");
  return {sub, [o, &global]() { return run(*o, table_format(global)); }};
}

}  // namespace cudatool::app
