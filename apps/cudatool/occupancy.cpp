// cudatool occupancy: resident blocks and warps per SM for a block size, register count
// and shared-memory size, what limits them, and sweeps over each parameter. With --arch
// it works from the compiled-in architecture table and never loads the driver.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "compile_json.hpp"
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
#include "occupancy_json.hpp"
#include "render.hpp"

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

// "64,128,256": block sizes, each a whole number of at least 1.
std::vector<int> parse_block_size_list(const std::string& text) {
  std::vector<int> sizes;
  std::string item;
  std::stringstream list(text);
  if (text.empty() || text.back() == ',')
    throw UsageError("--sweep " + quote_input(text) +
                     ": expected a list of block sizes such as 64,128,256");
  while (std::getline(list, item, ',')) {
    if (item.empty())
      throw UsageError("--sweep " + quote_input(text) + ": empty entry in the list of block sizes");
    try {
      sizes.push_back(parse_count(item, "--sweep", 1));
    } catch (const UsageError& e) {
      throw UsageError("--sweep " + quote_input(text) + ": entry " + quote_input(item) +
                       " is not a block size (a whole number 1.." +
                       std::to_string(std::numeric_limits<int>::max()) + ")");
    }
  }
  return sizes;
}

std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

std::string bar(double fraction, int width = 32) {
  const int filled = static_cast<int>(std::lround(fraction * width));
  return std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(width - filled), '.');
}

std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string describe(const DeviceData& devdata, const std::string& where) {
  const auto& p = devdata.properties();
  std::string text = where.empty() ? p.name : where + ": " + p.name;
  text += " (compute capability " + p.compute_capability.str();
  if (!p.family.empty()) text += ", " + p.family;
  if (devdata.origin() == DeviceDataOrigin::architecture_table)
    text += "; from cudatool's architecture table";
  return text + ")";
}

std::string block_text(int threads, int registers, std::size_t shared_mem, int barriers,
                       int warp_size) {
  std::string text;
  if (threads > 0) {
    const int warps = (threads + warp_size - 1) / warp_size;
    text = std::to_string(threads) + " threads (" + std::to_string(warps) +
           (warps == 1 ? " warp), " : " warps), ");
  }
  text += std::to_string(registers) + " registers per thread, " + format_bytes(shared_mem) +
          " shared memory";
  if (barriers != 1) text += ", " + std::to_string(barriers) + " block barriers";
  return text;
}

std::string improvement_text(const OccupancyImprovement& i, const OccupancyRecord& now) {
  const int more = i.tb_per_mp - now.tb_per_mp;
  std::string text;
  if (i.resource == "regs")
    text = std::to_string(i.reduction) + " fewer registers per thread (" + std::to_string(i.value) +
           ")";
  else
    text = std::to_string(i.reduction) + " fewer bytes of shared memory per block (" +
           std::to_string(i.value) + " B)";
  return text + " would give " + std::to_string(more) + " more " +
         (more == 1 ? "block" : "blocks") + " per SM: " + std::to_string(i.tb_per_mp) +
         " blocks, occupancy " + percent(now.occupancy) + " -> " + percent(i.occupancy);
}

void print_record(const DeviceData& devdata, const std::string& where, const OccupancyRecord& r,
                  const std::vector<OccupancyImprovement>& improvements) {
  const auto& p = devdata.properties();
  std::cout << describe(devdata, where) << '\n';
  std::cout << "Block: "
            << block_text(r.threads, r.registers, r.shared_mem, r.block_barriers, p.warp_size)
            << (r.opted_in ? " (above the default " + format_bytes(p.shared_memory_per_block) +
                                 ": taken as opted in)"
                           : "")
            << "\n\n";
  std::string also;
  for (const auto name : r.limiting_factors())
    if (name != r.limited_by) also += (also.empty() ? "" : ", ") + std::string(name);
  std::cout << "Active blocks per SM:  " << r.tb_per_mp << '\n'
            << "Active warps per SM:   " << r.warps_per_mp << " of " << r.max_warps_per_mp << '\n'
            << "Occupancy:             " << percent(r.occupancy) << '\n'
            << "Limited by:            " << r.limited_by
            << (also.empty() ? "" : " (tied with " + also + ")") << '\n';
  if (r.tb_per_mp == 0 && r.limited_by == "regs")
    std::cout << "The block cannot be launched: it is allocated " << r.allocated_registers_per_block
              << " registers, and a block may have at most " << p.registers_per_block << ".\n";

  const int warps_per_block = (r.threads + p.warp_size - 1) / p.warp_size;
  auto limit = [](const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; };
  std::cout << "\nBlocks per SM each resource allows (the smallest wins):\n";
  std::cout << "  device    " << right(std::to_string(r.limits.device), 5)
            << "  the hardware's maximum of resident blocks per SM\n";
  std::cout << "  warps     " << right(std::to_string(r.limits.warps), 5) << "  "
            << r.max_warps_per_mp << " warps per SM / " << warps_per_block << " per block\n";
  std::cout << "  regs      " << right(limit(r.limits.regs), 5) << "  "
            << (r.limits.regs
                    ? std::to_string(p.registers_per_multiprocessor) + " registers per SM / " +
                          std::to_string(r.allocated_registers_per_block) + " allocated per block"
                    : std::string("no registers used"))
            << '\n';
  std::cout << "  smem      " << right(limit(r.limits.smem), 5) << "  "
            << (r.limits.smem
                    ? format_bytes(p.shared_memory_per_multiprocessor) + " per SM / " +
                          std::to_string(r.allocated_shared_mem_per_block) +
                          " B allocated per block" +
                          (p.reserved_shared_memory_per_block
                               ? " (" + std::to_string(p.reserved_shared_memory_per_block) +
                                     " B of it reserved by the driver)"
                               : std::string())
                    : std::string("no shared memory used"))
            << '\n';
  std::cout << "  barriers  " << right(limit(r.limits.barriers), 5) << "  "
            << (r.limits.barriers
                    ? "block barriers per SM / " + std::to_string(r.block_barriers) + " per block"
                    : std::string("not a limit on this architecture"))
            << '\n';
  if (!improvements.empty()) {
    std::cout << "\nTo fit more blocks per SM:\n";
    for (const auto& i : improvements) std::cout << "  " << improvement_text(i, r) << '\n';
  }
}

std::string suggestion_text(const BlockSizeSuggestion& s, const DeviceProperties& p) {
  if (s.block_size == 0) return "No block size fits on one SM.";
  std::string text = "Suggested block size: " + std::to_string(s.block_size) + " threads (" +
                     std::to_string(s.tb_per_mp) + (s.tb_per_mp == 1 ? " block" : " blocks") +
                     " per SM, occupancy " + percent(s.occupancy) +
                     "): the largest block at the highest occupancy, as "
                     "cudaOccupancyMaxPotentialBlockSize chooses.";
  if (s.smallest_block_size != s.block_size)
    text += "\nThe smallest block at that occupancy: " + std::to_string(s.smallest_block_size) +
            " threads.";
  if (s.min_grid_size)
    text += "\nOne full wave: " + std::to_string(*s.min_grid_size) + " blocks on " +
            std::to_string(*p.sm_count) + " SMs" +
            (p.sm_count_part.empty() ? "" : " (" + p.sm_count_part + ")") + ".";
  return text;
}

void print_block_size_sweep(const DeviceData& devdata, const std::string& where,
                            const OccupancySweep& sweep, const BlockSizeSuggestion& suggestion) {
  const auto& first = sweep.records.front();
  std::cout << describe(devdata, where) << '\n'
            << "Block-size sweep: "
            << block_text(0, first.registers, first.shared_mem, first.block_barriers, 32) << "\n\n";
  std::cout << "threads  blocks/SM  warps/SM  occupancy  limited by\n";
  for (const auto& r : sweep.records)
    std::cout << right(std::to_string(r.threads), 7) << "  "
              << right(std::to_string(r.tb_per_mp), 9) << "  "
              << right(std::to_string(r.warps_per_mp), 8) << "  " << right(percent(r.occupancy), 9)
              << "  " << pad(std::string(r.limited_by), 10) << "  " << bar(r.occupancy) << '\n';
  std::cout << '\n' << suggestion_text(suggestion, devdata.properties()) << '\n';
}

void print_steps(const DeviceData& devdata, const std::string& where, const OccupancySweep& sweep,
                 const std::optional<std::size_t>& current,
                 const std::optional<OccupancyImprovement>& improvement,
                 const std::optional<OccupancyRecord>& current_record) {
  const auto& first = sweep.records.front();
  const bool regs = sweep.parameter == "registers";
  std::cout << describe(devdata, where) << '\n'
            << (regs ? "Register sweep: " : "Shared-memory sweep: ") << first.threads
            << " threads per block, "
            << (regs ? format_bytes(first.shared_mem) + " shared memory"
                     : std::to_string(first.registers) + " registers per thread")
            << "\n\n";
  const std::string heading = regs ? "registers" : "shared memory (B)";
  const std::size_t width = regs ? 9 : 17;
  std::cout << pad(heading, width) << "  blocks/SM  warps/SM  occupancy  limited by\n";
  for (const auto& step : sweep_steps(sweep)) {
    const std::string range = step.first == step.last
                                  ? std::to_string(step.first)
                                  : std::to_string(step.first) + "-" + std::to_string(step.last);
    std::cout << pad(range, width) << "  " << right(std::to_string(step.tb_per_mp), 9) << "  "
              << right(std::to_string(step.warps_per_mp), 8) << "  "
              << right(percent(step.occupancy), 9) << "  " << pad(std::string(step.limited_by), 10)
              << "  " << bar(step.occupancy);
    if (current && *current >= step.first && *current <= step.last)
      std::cout << "  <- " << (regs ? "--regs " : "--smem ") << *current;
    std::cout << '\n';
  }
  if (improvement && current_record)
    std::cout << '\n' << improvement_text(*improvement, *current_record) << '\n';
}

// --format csv: one line per record (the one launch, or each step of a sweep), the
// inputs and the outcome, occupancy as a fraction.
void print_csv_records(const std::vector<OccupancyRecord>& records, bool header) {
  if (header)
    print_csv_row({"threads", "registers", "shared_mem_bytes", "block_barriers", "blocks_per_sm",
                   "warps_per_sm", "max_warps_per_sm", "occupancy", "limited_by"});
  for (const OccupancyRecord& r : records) {
    char occupancy[32];
    std::snprintf(occupancy, sizeof occupancy, "%.6g", r.occupancy);
    print_csv_row({std::to_string(r.threads), std::to_string(r.registers),
                   std::to_string(r.shared_mem), std::to_string(r.block_barriers),
                   std::to_string(r.tb_per_mp), std::to_string(r.warps_per_mp),
                   std::to_string(r.max_warps_per_mp), occupancy, std::string(r.limited_by)});
  }
}

ExitStatus run(const OccupancyOptions& o, TableFormat format) {
  const bool json = format == TableFormat::json;
  const bool csv = format == TableFormat::csv || format == TableFormat::csv_noheader;
  const bool csv_header = format == TableFormat::csv;
  // Flags first: a malformed value is a usage error even where no GPU is.
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

  const int threads = o.threads ? parse_count(*o.threads, "--threads", 1) : 0;
  int registers = o.regs ? parse_count(*o.regs, "--regs", 0) : 0;
  std::size_t shared_mem = o.smem ? parse_size(*o.smem, "--smem") : 0;
  int barriers = o.barriers ? parse_count(*o.barriers, "--barriers", 0) : 1;
  // The grammar first; whether the table has the architecture is checked where it is read.
  const std::optional<Arch> arch_flag =
      o.arch ? std::optional<Arch>(Arch::parse(*o.arch, "--arch")) : std::nullopt;
  std::optional<std::string> arch = o.arch;
  std::optional<ScannedKernel> from;
  std::string from_arch;
  if (o.kernel_from.has_value() != o.kernel.has_value())
    throw UsageError("--kernel-from FILE and --kernel NAME go together");
  if (o.kernel_from) {
    if (o.regs || o.barriers)
      throw UsageError("--kernel-from takes --regs and --barriers from the kernel: leave them out");
    const KernelNameFilter pattern(*o.kernel, "--kernel");
    ScanOptions scan;
    if (arch_flag) scan.arch = {*arch_flag};
    const ScanResult found = scan_binaries({*o.kernel_from}, scan);
    KernelLookup lookup{.pattern = *o.kernel,
                        .source = "--kernel",
                        .file = *o.kernel_from,
                        .arch = o.arch ? std::optional<std::string_view>(*o.arch) : std::nullopt,
                        .arch_source = "--arch",
                        .several_architectures_ok = o.device.has_value()};
    from = find_one_kernel(found, pattern, lookup);
    from_arch = found.images[from->image].arch;
    if (!arch && !o.device) arch = from_arch;
    registers = from->resources.num_regs;
    shared_mem += static_cast<std::size_t>(from->resources.shared_size_bytes);  // --smem: dynamic
    barriers = std::max(1, from->resources.num_barriers);
    // The same answer as kernels and compile give (occupancy/kernel_occupancy.hpp).
    if (threads > 0)
      if (const auto problem = block_size_problem(from->resources, from->bounds,
                                                  found.images[from->image].relocatable, threads))
        throw UsageError("--threads " + std::to_string(threads) + ": " +
                         quote_input(from->resources.demangled) + ": " + *problem);
  }
  const std::optional<int> sms =
      o.sms ? std::optional<int>(parse_count(*o.sms, "--sms", 1)) : std::nullopt;
  std::vector<int> block_sizes;
  // `--sweep` alone (CLI11 then gives its default_str, "all") tries every block size;
  // `--sweep ""` is a malformed list.
  const bool sweep_listed = sweep_threads && o.sweep_list != "all";
  if (sweep_listed) block_sizes = parse_block_size_list(o.sweep_list);

  std::optional<DeviceData> devdata;
  std::string where;
  if (arch) {
    devdata.emplace(*arch, o.arch ? "--arch" : "architecture");  // the table only: no driver
  } else {
    use_device_cache(o.fresh, "--fresh");
    const Device device = select_device(o.device, "--device");
    devdata.emplace(device);
    where = "device " + std::to_string(device.ordinal());
  }
  if (sms) devdata->set_sm_count(*sms);
  nlohmann::json out;
  if (json) out["device"] = *devdata;
  if (from) {
    if (json) {
      out["kernel"] = from->resources;
      out["kernel"]["file"] = *o.kernel_from;
      out["kernel"]["arch"] = from_arch;
    } else if (!csv) {
      // The name and path as the terminal gets them (escaped, base/text.hpp), not cut.
      const std::string& name = from->resources.demangled;
      std::cout << "Kernel " << printable(name, name.size()) << " (" << from_arch << " image of "
                << printable(*o.kernel_from, o.kernel_from->size()) << ")\n";
    }
  }

  // An architecture whose limits the table does not fully know: say which, give no number.
  if (const auto unknown = occupancy_unknown(*devdata)) {
    const char* parameter = sweep_threads  ? "threads"
                            : o.sweep_regs ? "registers"
                            : o.sweep_smem ? "shared_mem"
                                           : nullptr;
    if (json) {
      out["threads"] = o.threads ? nlohmann::json(threads) : nlohmann::json(nullptr);
      out["registers"] = registers;
      out["shared_mem"] = shared_mem;
      out["block_barriers"] = barriers;
      out["tb_per_mp"] = nullptr;
      out["occupancy"] = nullptr;
      out["limited_by"] = nullptr;
      if (parameter) {
        out["parameter"] = parameter;
        out["records"] = nlohmann::json::array();
      }
      out["unknown"] = *unknown;
      print_json(out);
    } else if (csv) {
      print_csv_records({}, csv_header);
      std::string fields;
      for (const auto& field : unknown->fields) fields += (fields.empty() ? "" : ", ") + field;
      print_message("occupancy unknown: the architecture table does not know " + fields + " for " +
                    devdata->properties().name);
    } else {
      std::cout << describe(*devdata, where) << '\n'
                << "Occupancy: unknown. cudatool's architecture table does not know these values "
                   "for "
                << devdata->properties().name << ":\n";
      for (const auto& field : unknown->fields) std::cout << "  " << field << '\n';
      if (!unknown->reason.empty()) std::cout << "Why: " << unknown->reason << '\n';
      std::cout << "No number is given rather than a guess.\n";
    }
    return ExitStatus::success;
  }

  if (sweep_threads) {
    if (block_sizes.empty()) block_sizes = default_block_sizes(*devdata);
    const OccupancySweep sweep =
        sweep_block_sizes(*devdata, block_sizes, shared_mem, registers, barriers);
    const BlockSizeSuggestion suggestion =
        !sweep_listed ? suggest_block_size(*devdata, shared_mem, registers, barriers)
                      : suggest_block_size(*devdata, sweep);
    if (json) {
      out["parameter"] = sweep.parameter;
      out["records"] = sweep.records;
      out["suggestion"] = suggestion;
      print_json(out);
    } else if (csv) {
      print_csv_records(sweep.records, csv_header);
    } else {
      print_block_size_sweep(*devdata, where, sweep, suggestion);
    }
    return ExitStatus::success;
  }

  const OccupancyRecord record(*devdata, threads, shared_mem, registers, barriers);
  if (o.sweep_regs || o.sweep_smem) {
    const OccupancySweep sweep = o.sweep_regs
                                     ? sweep_registers(*devdata, threads, shared_mem, barriers)
                                     : sweep_shared_memory(*devdata, threads, registers, barriers);
    std::optional<std::size_t> current;
    std::optional<OccupancyImprovement> improvement;
    if (o.sweep_regs && o.regs) {
      current = static_cast<std::size_t>(registers);
      improvement = fewer_registers_for_more_blocks(*devdata, record);
    }
    if (o.sweep_smem && o.smem) {
      current = shared_mem;
      improvement = less_shared_memory_for_more_blocks(*devdata, record);
    }
    if (json) {
      out["parameter"] = sweep.parameter;
      out["records"] = sweep.records;
      out["steps"] = sweep_steps(sweep);
      out["improvement"] = improvement ? nlohmann::json(*improvement) : nlohmann::json(nullptr);
      print_json(out);
    } else if (csv) {
      print_csv_records(sweep.records, csv_header);
    } else {
      print_steps(*devdata, where, sweep, current, improvement,
                  current ? std::optional<OccupancyRecord>(record) : std::nullopt);
    }
    return ExitStatus::success;
  }

  std::vector<OccupancyImprovement> improvements;
  if (auto fewer = fewer_registers_for_more_blocks(*devdata, record))
    improvements.push_back(*fewer);
  if (auto less = less_shared_memory_for_more_blocks(*devdata, record))
    improvements.push_back(*less);
  if (json) {
    nlohmann::json record_json = record;
    out.update(record_json);
    out["improvements"] = improvements;
    print_json(out);
  } else if (csv) {
    print_csv_records({record}, csv_header);
  } else {
    print_record(*devdata, where, record, improvements);
  }
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
