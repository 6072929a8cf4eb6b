// `cudatool kernels`' text: the tables (kernels_text_table.cpp), the entries without
// kernels, and a line where nothing is shown.
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernels_render.hpp"
#include "kernels_text_table.hpp"
#include "render.hpp"
#include "terminal_text.hpp"

namespace cudatool::app {
namespace {

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
