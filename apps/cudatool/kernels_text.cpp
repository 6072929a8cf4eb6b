#include <unistd.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cudatool/base/parallel.hpp"
#include "kernels_render.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// Rows are made on all threads in blocks of this many, and written in order.
constexpr std::size_t kBlock = 512;

// Long (demangled) names cut in the middle, so that the start (namespace, template) and
// the end (the parameter list) both stay readable.
std::string cut(const std::string& name, std::size_t width) {
  if (name.size() <= width || width < 12) return name;
  const std::size_t tail = width / 3;
  const std::size_t head = width - tail - 3;
  return name.substr(0, head) + "..." + name.substr(name.size() - tail);
}

// Right-aligned in `width`, always with a space before it (a number wider than its column
// pushes the row right rather than running into the column before).
std::string column(const std::string& text, std::size_t width) {
  return text.size() >= width ? " " + text : std::string(width - text.size(), ' ') + text;
}

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// Text from the file or the command line (kernel and member names, paths) as the terminal
// gets it: control characters and bytes that are not UTF-8 escaped (base/text.hpp), not cut.
std::string for_terminal(const std::string& text) {
  return printable(text, text.size());
}

// One table's rows: a file, an architecture, relocatable or not.
using GroupKey = std::tuple<std::size_t, std::optional<Arch>, bool>;

class KernelTables {
 public:
  KernelTables(const ScanResult& result, const KernelRows& rows, const KernelsRequest& request)
      : result_(result), rows_(rows), request_(request), names_(result.kernels.size()) {
    // The names as printed (escaped, cut unless --wide) are made on all threads. Cut only
    // for a terminal, as ps does: a pipe or a file gets whole names.
    const bool cut_names = !request.wide && isatty(STDOUT_FILENO);
    const auto& shown = rows.shown;
    parallel_for_blocks(
        shown.size(), kBlock, request.jobs, [&](std::size_t, std::size_t begin, std::size_t end) {
          for (std::size_t n = begin; n < end; ++n) {
            const std::string name = for_terminal(result.kernels[shown[n]].resources.demangled);
            names_[shown[n]] = cut_names ? cut(name, 60) : name;
          }
        });
  }

  // The widest the name column gets; a longer name has a line of its own.
  static constexpr std::size_t kMaxNameColumn = 64;

  void print_group(const GroupKey& key, const std::vector<std::size_t>& list, bool first) const {
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

 private:
  void row_text(std::size_t i, std::size_t width, std::string& out) const {
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
    out += column(std::to_string(r.num_regs), 6);
    out += column(std::to_string(r.shared_size_bytes), 8);
    out += column(std::to_string(r.local_size_bytes) + (r.stack_unknown ? "?" : ""), 7);
    out += column(std::to_string(r.const_size_bytes), 7);
    out += column(std::to_string(r.max_threads_per_block), 9);
    out += column(std::to_string(r.num_barriers), 5);
    if (request_.threads) {
      const KernelOccupancy& oc = rows_.occupancy[i];
      if (oc.record) {
        out += column(std::to_string(oc.record->tb_per_mp), 11);
        out += column(percent(oc.record->occupancy), 11);
        out += "  ";
        out += oc.record->limited_by;
      } else {
        out += column("-", 11) + column("-", 11) + "  " + oc.reason;
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

  const ScanResult& result_;
  const KernelRows& rows_;
  const KernelsRequest& request_;
  std::vector<std::string> names_;  // by kernel index, as printed
};

// PTX and unknown entries, which have no kernels to list, and the relocatable leftovers
// left out; each after a blank line where tables came before.
void print_other_entries(const ScanResult& result, bool after_tables) {
  const char* gap = after_tables ? "\n" : "";
  for (const auto& image : result.images) {
    if (image.kind == ImageKind::elf || image.skipped) continue;
    command_out() << gap << for_terminal(result.files[image.file].path);
    if (!image.member.empty()) command_out() << "(" << for_terminal(image.member) << ")";
    if (image.kind == ImageKind::ptx || image.kind == ImageKind::lto_ir)
      command_out() << "  " << arch_text(image.arch)
                    << (image.kind == ImageKind::ptx ? "  PTX" : "  LTO-IR")
                    << " only (no machine code to measure)\n";
    else
      command_out() << "  entry at offset " << image.offset << " of unknown kind: skipped\n";
  }
  for (const auto& f : result.files)
    if (f.relocatable_leftovers_skipped > 0)
      command_out() << gap << for_terminal(f.path) << "  " << f.relocatable_leftovers_skipped
                    << " relocatable leftover image"
                    << (f.relocatable_leftovers_skipped == 1 ? "" : "s")
                    << " in __nv_relfatbin not listed (the driver never loads them; "
                       "--relocatable lists them)\n";
}

}  // namespace

void print_kernels_text(const ScanResult& result, const KernelRows& rows,
                        const KernelsRequest& request, bool any_cuda) {
  // One table per file, architecture and relocatability, in the order they first appear.
  std::vector<GroupKey> groups;
  std::map<GroupKey, std::vector<std::size_t>> members;
  for (std::size_t i : rows.shown) {
    const auto& image = result.images[result.kernels[i].image];
    const GroupKey key{image.file, image.arch, image.relocatable};
    if (!members.count(key)) groups.push_back(key);
    members[key].push_back(i);
  }
  const KernelTables tables(result, rows, request);
  for (std::size_t g = 0; g < groups.size(); ++g)
    tables.print_group(groups[g], members[groups[g]], g == 0);
  print_other_entries(result, !groups.empty());
  if (rows.shown.empty() && any_cuda) {
    if (request.pattern) {
      command_out() << "no kernel matches --kernel\n";
    } else if (request.scan.arch.empty()) {
      command_out() << "no kernels\n";
    } else {
      // The value asked for, and what the files hold instead.
      std::string asked, held;
      std::set<std::string> seen;
      for (const Arch& a : request.scan.arch) asked += (asked.empty() ? "" : ",") + a.str();
      for (const auto& image : result.images)
        if (image.arch && seen.insert(image.arch->str()).second)
          held += (held.empty() ? "" : ", ") + image.arch->str();
      command_out() << "no kernels for --arch " << asked << " (the files hold "
                    << (held.empty() ? "no architecture" : held) << ")\n";
    }
  }
}

}  // namespace cudatool::app
