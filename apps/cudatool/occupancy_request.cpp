// The request of `cudatool occupancy` from its flags (occupancy_command.hpp): numbers
// through the one strict parser, the question the sweep flags ask, and the kernel of
// --kernel-from, found and checked against the block size as kernels and compile check it.
#include <algorithm>
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

// "64,128,256": block sizes, each 1..kMaxBlockThreads (occupancy.hpp; the list split by the
// one splitter of list-valued flags, base/text.hpp).
std::vector<int> parse_block_size_list(const std::string& text) {
  std::vector<int> sizes;
  for (const std::string& item : split_list(text, "--sweep", "64,128,256")) {
    try {
      sizes.push_back(parse_block_size(item, "--sweep"));
    } catch (const UsageError&) {
      throw UsageError("--sweep " + quote_input(text) + ": entry " + quote_input(item) +
                       " is not a block size (a whole number 1.." +
                       std::to_string(kMaxBlockThreads) + ")");
    }
  }
  return sizes;
}

// "4" or "2,2,1": a cluster's blocks in X (Y and Z 1), or in X, Y and Z, each at least 1.
ClusterDims parse_cluster(const std::string& text) {
  const std::vector<std::string> items = split_list(text, "--cluster", "2,2,1");
  if (items.size() != 1 && items.size() != 3)
    throw UsageError("--cluster " + quote_input(text) +
                     ": give the blocks of a cluster as N or X,Y,Z (2,2,1)");
  std::vector<int> dims;
  for (const std::string& item : items) dims.push_back(parse_int(item, "--cluster", 1, 1024));
  const ClusterDims cluster =
      items.size() == 1 ? ClusterDims{dims[0], 1, 1} : ClusterDims{dims[0], dims[1], dims[2]};
  if (cluster.x * cluster.y > 1024 || cluster.size() > 1024)
    throw UsageError("--cluster " + quote_input(text) + ": more than 1024 blocks in a cluster");
  return cluster;
}

// The question the flags ask; UsageError where they contradict each other.
OccupancyQuestion question_of(const OccupancyOptions& o) {
  if (o.arch && o.device)
    throw UsageError(
        "--arch and --device exclude each other: --arch computes for an architecture without a "
        "GPU, --device reads a real one");
  const bool sweep_threads = o.sweep;
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
  if (o.product && (o.arch || o.device || o.sms))
    throw UsageError(std::string("--product names the GPU: leave out ") + (o.arch     ? "--arch"
                                                                           : o.device ? "--device"
                                                                                      : "--sms"));
  if ((o.cluster || o.non_portable) && (sweep_threads || o.sweep_regs || o.sweep_smem))
    throw UsageError(std::string(o.cluster ? "--cluster" : "--non-portable") +
                     " answers one launch (with a sweep over cluster sizes): leave out the "
                     "block-size, register and shared-memory sweeps");
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
  const int threads = o.threads ? parse_block_size(*o.threads, "--threads") : 0;
  int registers = o.regs ? parse_count(*o.regs, "--regs", 0) : 0;
  std::size_t shared_mem = o.smem ? parse_size(*o.smem, "--smem") : 0;
  int barriers = o.barriers ? parse_count(*o.barriers, "--barriers", 0) : 1;
  // The grammar first; whether the table has the architecture is checked where it is read.
  const std::optional<Arch> arch_flag =
      o.arch ? std::optional<Arch>(Arch::parse(*o.arch, "--arch")) : std::nullopt;
  std::optional<ClusterDims> cluster =
      o.cluster ? std::optional<ClusterDims>(parse_cluster(*o.cluster)) : std::nullopt;
  const ClusterTopology* product = nullptr;
  if (o.product) {
    product = find_cluster_topology(*o.product);
    if (!product) {
      std::string known;
      for (const auto& t : known_cluster_topologies())
        known += (known.empty() ? "" : ", ") + t.product;
      throw UsageError(
          "--product " + quote_input(*o.product) +
          ": no measurement of this product's GPCs is in cudatool's table (known: " + known + ")");
    }
  }
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

  bool non_portable = o.non_portable;
  if (source && source->kernel.bounds.cluster && question == OccupancyQuestion::launch) {
    // The kernel's compile-time dimensions are the launch's; the compiler accepted them, so
    // a size above the portable one is allowed.
    const auto& d = *source->kernel.bounds.cluster;
    const ClusterDims compiled{std::max(1, d[0]), std::max(1, d[1]), std::max(1, d[2])};
    if (cluster && cluster->size() != compiled.size())
      throw UsageError("--cluster " + quote_input(*o.cluster) + ": " +
                       quote_input(source->kernel.resources.demangled) +
                       " was compiled with clusters of " + std::to_string(compiled.x) + "x" +
                       std::to_string(compiled.y) + "x" + std::to_string(compiled.z) +
                       " blocks, which its launches use");
    cluster = compiled;
    non_portable = non_portable || compiled.size() > 8;
  }
  if (cluster && cluster->size() > 8 && !non_portable)
    throw UsageError("--cluster " + quote_input(*o.cluster) + ": " +
                     std::to_string(cluster->size()) +
                     " blocks is above the portable cluster size of 8; a kernel that allows "
                     "non-portable sizes (cudaFuncAttributeNonPortableClusterSizeAllowed) may "
                     "use up to 16 on Hopper: add --non-portable");
  return {.question = question,
          .arch = arch_flag,
          .threads = o.threads ? std::optional<int>(threads) : std::nullopt,
          .registers = registers,
          .shared_mem = shared_mem,
          .barriers = barriers,
          .source = std::move(source),
          .sms = sms,
          .block_sizes = std::move(block_sizes),
          .cluster = cluster,
          .non_portable = non_portable,
          .product = product,
          .given_registers = o.regs.has_value(),
          .given_shared_mem = o.smem.has_value()};
}

}  // namespace cudatool::app
