#include <cstdio>
#include <string>
#include <vector>

#include "kernels_render.hpp"
#include "render.hpp"

namespace cudatool::app {

void print_kernels_csv(const ScanResult& result, const KernelRows& rows,
                       const KernelsRequest& request) {
  std::vector<std::string> columns = {
      "file",   "member", "arch",  "relocatable", "kernel",   "mangled",      "regs",
      "shared", "local",  "const", "threads",     "barriers", "stack_unknown"};
  if (request.threads)
    for (const char* c : {"block_threads", "blocks_per_sm", "occupancy", "limited_by"})
      columns.push_back(c);
  if (request.format == Format::csv) print_csv_row(columns);
  for (std::size_t i : rows.shown) {
    const ScannedKernel& k = result.kernels[i];
    const KernelResources& r = k.resources;
    const ScannedImage& image = result.images[k.image];
    std::vector<std::string> row = {result.files[image.file].path,
                                    image.member,
                                    arch_text(image.arch),
                                    image.relocatable ? "true" : "false",
                                    r.demangled,
                                    r.name,
                                    std::to_string(r.num_regs),
                                    std::to_string(r.shared_size_bytes),
                                    std::to_string(r.local_size_bytes),
                                    std::to_string(r.const_size_bytes),
                                    std::to_string(r.max_threads_per_block),
                                    std::to_string(r.num_barriers),
                                    r.stack_unknown ? "true" : "false"};
    if (request.threads) {
      const KernelOccupancy& oc = rows.occupancy[i];
      row.push_back(std::to_string(*request.threads));
      if (oc.record) {
        char fraction[32];
        std::snprintf(fraction, sizeof fraction, "%.6g", oc.record->occupancy);
        row.push_back(std::to_string(oc.record->tb_per_mp));
        row.push_back(fraction);
        row.push_back(std::string(oc.record->limited_by));
      } else {
        // No occupancy: the reason stands where the limit would.
        row.insert(row.end(), {"", "", oc.reason});
      }
    }
    print_csv_row(row);
  }
}

}  // namespace cudatool::app
