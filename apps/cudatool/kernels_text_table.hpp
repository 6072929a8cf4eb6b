// The text tables of `cudatool kernels` (kernels_text.cpp prints the rest of the text): one
// per file, architecture and relocatability, a row a kernel, made on all threads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cudatool/binary/kernel_scan.hpp"
#include "kernels_selection.hpp"

namespace cudatool::app {

// One table's rows: a file, an architecture, relocatable or not.
using GroupKey = std::tuple<std::size_t, std::optional<Arch>, bool>;

class KernelTables {
 public:
  // The names as printed (escaped, cut unless --wide where standard output is a terminal)
  // are made here, on all threads.
  KernelTables(const ScanResult& result, const KernelRows& rows, const KernelsRequest& request);

  // The widest the name column gets; a longer name has a line of its own.
  static constexpr std::size_t kMaxNameColumn = 64;

  // A group's heading line and table: `list` holds its kernels' indexes; `first` is false
  // where a table came before (a blank line separates them).
  void print_group(const GroupKey& key, const std::vector<std::size_t>& list, bool first) const;

 private:
  void row_text(std::size_t i, std::size_t width, std::string& out) const;

  const ScanResult& result_;
  const KernelRows& rows_;
  const KernelsRequest& request_;
  std::vector<std::string> names_;  // by kernel index, as printed
};

}  // namespace cudatool::app
