// Where the bytes of compiled CUDA binaries go, from a scan (kernel_scan.hpp) and nothing
// else: no byte is read again. Per file, the fatbin sections and what is in them; per
// architecture (SASS sm_90a, PTX compute_90), its entries stored and uncompressed and what
// they take in the file (headers and padding included: what dropping the architecture would
// save); per kernel, its machine code; the template families; and the duplicates: images
// whose stored bytes repeat another's, and kernels compiled into several images of one file
// for one architecture (the same instantiation in several translation units).
//
// A fatbin section holds containers, each a 16-byte header and its entries; the entries of
// each architecture plus the containers' headers and padding add up to the section's size
// (FileSizes::overhead_bytes is what is nobody's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/binary/kernel_scan.hpp"

namespace cudatool {

struct ArchitectureSize {
  std::optional<Arch> arch;  // nullopt: entries of a kind cudatool does not know
  std::size_t images = 0;
  std::size_t kernels = 0;
  std::uint64_t stored_bytes = 0;        // the payloads as stored (compressed or not)
  std::uint64_t uncompressed_bytes = 0;  // the same, decompressed
  std::uint64_t file_bytes = 0;          // with their entry headers: what dropping it saves
};

struct FileSizes {
  std::size_t file = 0;  // index into ScanResult::files
  std::uint64_t size = 0;
  // The sections holding fatbin containers, and what they add up to.
  std::uint64_t fatbin_section_bytes = 0;
  std::uint64_t entry_bytes = 0;     // the file_bytes of the images in those sections
  std::uint64_t overhead_bytes = 0;  // the rest of them: container headers, padding
  // Images elsewhere: bare CUBINs, fatbin files, containers outside a fatbin section.
  std::uint64_t other_image_bytes = 0;
  std::vector<ArchitectureSize> architectures;  // most file_bytes first
};

// Kernels whose demangled names differ only in their template arguments and parameters.
struct TemplateFamily {
  std::string name;  // "cutlass::Kernel2" for every cutlass::Kernel2<...>(...)
  std::size_t kernels = 0;
  std::uint64_t code_bytes = 0;
};

// One kernel (by mangled name) compiled into more than one distinct image of one file for
// one architecture.
struct DuplicateKernel {
  std::size_t file = 0;
  Arch arch;
  std::size_t kernel = 0;              // index into ScanResult::kernels of its first copy
  std::size_t copies = 0;              // images holding it, 2 or more
  std::uint64_t extra_code_bytes = 0;  // the code of every copy but the first
};

struct SizeReport {
  std::vector<FileSizes> files;
  std::vector<std::size_t> largest_kernels;  // indices into ScanResult::kernels, most code first
  std::vector<TemplateFamily> families;      // most code first
  // Images whose stored bytes are an earlier image's, and what they take in the files.
  std::size_t identical_images = 0;
  std::uint64_t identical_image_bytes = 0;
  std::vector<DuplicateKernel> duplicate_kernels;  // most extra code first
  std::size_t duplicate_kernel_copies = 0;         // copies beyond the first, all together
  std::uint64_t duplicate_kernel_bytes = 0;        // their code
};

// The report of a scan; `top` bounds the largest kernels, the families and the duplicate
// kernels listed (the totals count them all). Skipped images (--arch, relocatable leftovers)
// count in the files' sizes but in no architecture's kernels.
SizeReport size_report(const ScanResult& scan, std::size_t top);

// A kernel's template family: its demangled name without the return type, the template
// arguments and the parameter list ("void ns::k<int, 4>(float*)" -> "ns::k").
std::string template_family(std::string_view demangled);

}  // namespace cudatool
