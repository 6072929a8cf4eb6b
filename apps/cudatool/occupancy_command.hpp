// `cudatool occupancy`: its flags, and the request they make (occupancy_request.cpp):
// the question, the launch, and the kernel of --kernel-from, read and checked before any
// device is asked.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "occupancy_report.hpp"

namespace cudatool::app {

// The flags, as given.
struct OccupancyOptions {
  std::optional<std::string> threads, regs, smem, barriers, arch, device, sms;
  std::optional<std::string> kernel_from, kernel;  // a kernel from a compiled binary
  std::optional<std::string> cluster, product;     // --cluster N or X,Y,Z; --product NAME
  bool non_portable = false;
  std::string sweep_list;
  CLI::Option* sweep = nullptr;
  bool sweep_regs = false;
  bool sweep_smem = false;
  bool fresh = false;
};

// What the flags ask, every value parsed and checked; the device (or table row) is asked
// for after (occupancy.cpp).
struct OccupancyRequest {
  OccupancyQuestion question = OccupancyQuestion::launch;
  std::optional<Arch> arch;    // --arch, parsed once (its table row is read where it is used)
  std::optional<int> threads;  // nullopt where the block size is swept
  int registers = 0;
  std::size_t shared_mem = 0;
  int barriers = 1;
  std::optional<KernelSource> source;  // --kernel-from: its registers, shared memory, barriers
  std::optional<int> sms;              // --sms
  std::vector<int> block_sizes;        // --sweep's list; empty for every warp multiple
  // --cluster, or the compile-time cluster dimensions of --kernel-from's kernel.
  std::optional<ClusterDims> cluster;
  bool non_portable = false;  // --non-portable (compile-time dimensions above 8 imply it)
  const ClusterTopology* product = nullptr;  // --product
};

// UsageError for a malformed value or flags that contradict each other, in the order the
// flags are checked (the grammar of each before any file is read); --kernel-from's file is
// scanned for the one kernel --kernel names.
OccupancyRequest occupancy_request(const OccupancyOptions& o);

}  // namespace cudatool::app
