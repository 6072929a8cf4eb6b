// libFuzzer target: the fatbin container reader, the scan for containers (in one pass and
// split into chunks, which must agree), and entry decompression (zstd, LZ4, with the size
// cap), driven through scan_bytes as `cudatool kernels` drives a file. Malformed input
// must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "binary/fatbin.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const cudatool::ByteReader r(bytes, "fuzz");
  try {
    const auto containers = cudatool::find_fatbin_containers(r, 0, r.size());
    // The chunked scan (on this thread) must find exactly what the single pass finds,
    // whatever the chunk size: chunks of 64 to 1024 bytes put boundaries everywhere.
    const std::uint64_t chunk = size ? 64 * (1 + data[size - 1] % 16) : 64;
    const auto split = cudatool::find_fatbin_containers(
        r, 0, r.size(), {.threads = 1, .chunk_bytes = chunk, .after_chunk = {}});
    if (split.size() != containers.size()) std::abort();
    for (std::size_t i = 0; i < split.size(); ++i)
      if (split[i].offset != containers[i].offset || split[i].size != containers[i].size)
        std::abort();
    for (const auto& c : containers) {
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
