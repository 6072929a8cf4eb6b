// libFuzzer harness for the compile cache's entry parser (compile_cache.hpp) and the
// payload decoder behind it (cache_payload.hpp, detail::decode_cache_payload): bytes from a
// cache directory that anyone with write access to it may have planted. Neither may crash,
// hang or read out of bounds; a parsed entry must be exactly what format_cache_entry writes
// for its key, so that the parser accepts nothing the writer could not have produced.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compile/cache_payload.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compiler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The key an entry claims (line 2), and one it cannot be (all zeros), tried alike.
  std::string claimed;
  if (const auto pos = bytes.find("\nkey "); pos != std::string_view::npos)
    claimed = std::string(bytes.substr(pos + 5, 64));
  for (const std::string& key : {claimed, std::string(64, '0')}) {
    const auto payload = cudatool::parse_cache_entry(bytes, key);
    if (!payload) continue;
    if (cudatool::format_cache_entry(key, *payload) != bytes) std::abort();
    std::vector<cudatool::detail::Dependency> dependencies;
    (void)cudatool::detail::decode_cache_payload(*payload, &dependencies);
  }
  // The payload decoder on raw bytes too (an entry whose checksum is valid over garbage).
  std::vector<cudatool::detail::Dependency> dependencies;
  if (cudatool::detail::decode_cache_payload(bytes, &dependencies)) {
    // What decodes encodes back to the same files.
    const auto decoded = cudatool::detail::decode_cache_payload(bytes);
    if (!decoded || decoded->dependencies.size() != dependencies.size()) std::abort();
    const auto again =
        cudatool::detail::decode_cache_payload(cudatool::detail::encode_cache_payload(*decoded));
    if (!again || again->dependencies.size() != dependencies.size()) std::abort();
    for (std::size_t i = 0; i < dependencies.size(); ++i)
      if (again->dependencies[i].path != dependencies[i].path ||
          again->dependencies[i].exists != dependencies[i].exists ||
          again->dependencies[i].sha256 != dependencies[i].sha256)
        std::abort();
  }
  return 0;
}
