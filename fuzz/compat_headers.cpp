// libFuzzer target: what `cudatool compat` reads of untrusted bytes. The headers-only scan
// (fatbin and ELF headers, the first 4 KiB of each PTX entry through partial zstd/LZ4
// decompression, a CUBIN's ELF type, DT_NEEDED), the driver's decision per container over
// it, the PTX header parser and the RECORD (CSV) reader on the raw input. Malformed input
// must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "binary/ptx_header.hpp"
#include "compat/compat_inputs.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/compat/compat.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)cudatool::read_ptx_header(text);
  (void)cudatool::detail::record_paths(text);
  if (size == 0) return 0;
  try {
    cudatool::ScanOptions options;
    options.headers_only = true;
    options.threads = 1;
    const auto found =
        cudatool::scan_bytes(std::span<const std::uint8_t>(data, size), "fuzz", options);
    std::vector<const cudatool::ScannedImage*> entries;
    for (const auto& image : found.images) entries.push_back(&image);
    const cudatool::CompatDriver driver = cudatool::compat_driver_newest();
    for (const cudatool::ComputeCapability cc :
         {cudatool::ComputeCapability{7, 5}, {9, 0}, {12, 1}})
      for (const auto policy : {cudatool::JitPolicy::normal, cudatool::JitPolicy::force_ptx_jit,
                                cudatool::JitPolicy::disable_ptx_jit})
        (void)cudatool::decide_container(entries, cc, driver, policy);
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
