// The text and CSV forms of `cudatool kernels` (its JSON: kernels_json.hpp), from the scan
// and the kernels select_kernels chose.
#pragma once

#include "cudatool/binary/kernel_scan.hpp"
#include "kernels_selection.hpp"

namespace cudatool::app {

// One table per file, architecture and relocatability, then the PTX and unknown entries,
// the relocatable leftovers left out, and a line where nothing is shown of files that hold
// CUDA code (`any_cuda`).
void print_kernels_text(const ScanResult& result, const KernelRows& rows,
                        const KernelsRequest& request, bool any_cuda);

// --format csv (csv,noheader: without the header line): one line per kernel, every value
// unformatted and whole (names never cut).
void print_kernels_csv(const ScanResult& result, const KernelRows& rows,
                       const KernelsRequest& request);

}  // namespace cudatool::app
