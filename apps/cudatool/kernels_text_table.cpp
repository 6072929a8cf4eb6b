#include "kernels_text_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>

#include "cudatool/base/parallel.hpp"
#include "render.hpp"
#include "terminal_text.hpp"

namespace cudatool::app {
namespace {

// Rows are made on all threads in blocks of this many, and written in order.
constexpr std::size_t kBlock = 512;

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

}  // namespace

KernelTables::KernelTables(const ScanResult& result, const KernelRows& rows,
                           const KernelsRequest& request)
    : result_(result), rows_(rows), request_(request), names_(result.kernels.size()) {
  // The names as printed (escaped, cut unless --wide) are made on all threads. Cut only
  // for a terminal, as ps does: a pipe or a file gets whole names.
  const bool cut_names = !request.wide && isatty(STDOUT_FILENO);
  const auto& shown = rows.shown;
  parallel_for_blocks(
      shown.size(), kBlock, request.jobs, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t n = begin; n < end; ++n) {
          const std::string name = for_terminal(result.kernels[shown[n]].resources.demangled);
          names_[shown[n]] = cut_names ? cut_middle(name, 60, 20) : name;
        }
      });
}

void KernelTables::print_group(const GroupKey& key, const std::vector<std::size_t>& list,
                               bool first) const {
  const auto& [file, arch, relocatable] = key;
  std::size_t images = 0;
  for (const auto& image : result_.images)
    if (image.file == file && image.arch == arch && image.relocatable == relocatable &&
        image.kind == ImageKind::elf && !image.skipped)
      ++images;
  if (!first) command_out() << '\n';
  command_out() << for_terminal(result_.files[file].path) << "  " << arch_text(arch)
                << (relocatable ? " relocatable" : "") << "  (" << list.size()
                << (list.size() == 1 ? " kernel" : " kernels") << ", " << images
                << (images == 1 ? " image" : " images") << ")\n";
  if (relocatable)
    command_out() << "(relocatable -dc code: registers, stack and shared memory are final only "
                     "after the device link; the driver does not load it as it is)\n";
  std::size_t width = 6;
  for (std::size_t i : list) width = std::max(width, names_[i].size());
  width = std::min(width, kMaxNameColumn);
  command_out() << pad("kernel", width) << "  regs  shared  local  const  threads  bar";
  if (request_.threads) command_out() << "  blocks/SM  occupancy  limited by";
  command_out() << '\n';
  std::vector<std::string> blocks((list.size() + kBlock - 1) / kBlock);
  parallel_for_blocks(list.size(), kBlock, request_.jobs,
                      [&](std::size_t b, std::size_t begin, std::size_t end) {
                        for (std::size_t n = begin; n < end; ++n)
                          row_text(list[n], width, blocks[b]);
                      });
  for (std::string& block : blocks) {
    command_out().write(block.data(), static_cast<std::streamsize>(block.size()));
    std::string().swap(block);
  }
}

void KernelTables::row_text(std::size_t i, std::size_t width, std::string& out) const {
  const ScannedKernel& k = result_.kernels[i];
  const KernelResources& r = k.resources;
  if (names_[i].size() > width) {
    // Whole on a line of its own, the numbers below it: one long name (warp.so has names
    // of 4,000 characters) does not widen every row of the table.
    out += names_[i];
    out += '\n';
    out.append(width, ' ');
  } else {
    out += pad(names_[i], width);
  }
  // Each column keeps at least one space before it, however wide its number.
  out += right_aligned(std::to_string(r.num_regs), 6);
  out += right_aligned(std::to_string(r.shared_size_bytes), 8);
  out += right_aligned(std::to_string(r.local_size_bytes) + (r.stack_unknown ? "?" : ""), 7);
  out += right_aligned(std::to_string(r.const_size_bytes), 7);
  out += right_aligned(std::to_string(r.max_threads_per_block), 9);
  out += right_aligned(std::to_string(r.num_barriers), 5);
  if (request_.threads) {
    const KernelOccupancy& oc = rows_.occupancy[i];
    if (oc.record) {
      out += right_aligned(std::to_string(oc.record->tb_per_mp), 11);
      out += right_aligned(percent(oc.record->occupancy), 11);
      out += "  ";
      out += oc.record->limited_by;
    } else {
      out += right_aligned("-", 11) + right_aligned("-", 11) + "  " + oc.reason;
    }
  }
  if (k.bounds.cluster) {
    out += "  [cluster " + dims_text(*k.bounds.cluster);
    if (request_.threads && rows_.occupancy[i].clusters)
      out += ": " + std::to_string(rows_.occupancy[i].clusters->max_active_clusters) +
             " clusters on the GPU";
    else if (request_.threads && !rows_.occupancy[i].cluster_reason.empty())
      out += ": clusters unknown";
    out += "]";
  }
  if (k.bounds.reqntid) out += "  [block " + dims_text(*k.bounds.reqntid) + "]";
  if (r.stack_unknown) out += "  [stack unknown: recursion; runs on the stack limit]";
  out += '\n';
}

}  // namespace cudatool::app
