// The request of `cudatool occupancy` from its flags (occupancy_command.hpp): numbers
// through the one strict parser, the question the sweep flags ask, and the kernel of
// --kernel-from, found and checked against the block size as kernels and compile check it.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/binary/kernel_filter.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "occupancy_command.hpp"

namespace cudatool::app {
namespace {

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

}  // namespace

OccupancyRequest occupancy_request(const OccupancyOptions& o) {
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

  return {.question = question,
          .threads = o.threads ? std::optional<int>(threads) : std::nullopt,
          .registers = registers,
          .shared_mem = shared_mem,
          .barriers = barriers,
          .source = std::move(source),
          .sms = sms,
          .block_sizes = std::move(block_sizes)};
}

}  // namespace cudatool::app
