// libFuzzer target: the fatbin container reader, the scan for containers (in one pass and
// split into chunks, which must agree), and entry decompression (zstd, LZ4, with the size
// cap), driven through scan_bytes as `cudatool kernels` drives a file. Malformed input
// must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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
        r, 0, r.size(), {.threads = 1, .chunk_bytes = chunk, .after_chunk = {}, .copy = {}});
    // And searched through copied windows, as a mapped file is.
    const auto copied = cudatool::find_fatbin_containers(
        r, 0, r.size(),
        {.threads = 1,
         .chunk_bytes = chunk,
         .after_chunk = {},
         .copy = [&](std::uint64_t offset, std::span<std::uint8_t> to) {
           if (offset > size || to.size() > size - offset) std::abort();
           std::memcpy(to.data(), data + offset, to.size());
         }});
    for (const auto* found : {&split, &copied}) {
      if (found->size() != containers.size()) std::abort();
      for (std::size_t i = 0; i < found->size(); ++i)
        if ((*found)[i].offset != containers[i].offset || (*found)[i].size != containers[i].size)
          std::abort();
    }
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
