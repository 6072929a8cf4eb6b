// libFuzzer target: the fatbin container reader, the scan for containers and entry
// decompression (zstd, LZ4, with the size cap), driven through scan_bytes as
// `cudatool kernels` drives a file. Malformed input must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <span>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/fatbin.hpp"
#include "cudatool/binary/kernel_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const cudatool::ByteReader r(bytes, "fuzz");
  try {
    for (const auto& c : cudatool::find_fatbin_containers(r, 0, r.size())) {
      cudatool::Decompressor decompressor;
      for (const auto& e : c.entries) {
        try {
          decompressor.contents(e, "fuzz");
        } catch (const cudatool::UsageError&) {
        }
      }
    }
  } catch (const cudatool::UsageError&) {
  }
  try {
    cudatool::ScanOptions options;
    options.threads = 1;
    cudatool::scan_bytes(bytes, "fuzz", options);
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
