// `cudatool occupancy`: its flags, and the request they make (occupancy_request.cpp):
// the question, the launch, and the kernel of --kernel-from, read and checked before any
// device is asked.
#pragma once

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
  bool sweep = false;      // --sweep, alone or with a list
  std::string sweep_list;  // its list; "all" (--sweep alone) for every warp multiple
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
  // Whether --regs and --smem were given: a register or shared-memory sweep then marks the
  // value and what less of it gives.
  bool given_registers = false;
  bool given_shared_mem = false;
};

// UsageError for a malformed value or flags that contradict each other, in the order the
// flags are checked (the grammar of each before any file is read); --kernel-from's file is
// scanned for the one kernel --kernel names.
OccupancyRequest occupancy_request(const OccupancyOptions& o);

// What the flags ask, answered whole: the request, the device or table row it names (a
// device through the device cache unless --fresh), the library's answer, and for --device
// --cluster the driver's own. The executable's `occupancy` and the Python module's
// kernel_occupancy().
OccupancyReport occupancy_report(const OccupancyOptions& o);
// `request` answered on `devdata` (`where`: "device 0", or "" for a table row): the Python
// module's sweeps, on the DeviceData its caller holds.
OccupancyReport occupancy_report(OccupancyRequest request, DeviceData devdata, std::string where);

}  // namespace cudatool::app
