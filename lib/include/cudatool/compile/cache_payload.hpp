// The payload of a compile cache entry (after the entry's own header, compile_cache.hpp):
// "<length>\n", that many bytes of JSON (the result without its image and cache fields, and
// the project headers it was compiled with), then the image. Also the headers' record and
// its check on a hit (compiler.hpp: size and mtime by stat, the SHA-256 only when they
// moved). Exposed for the tests and the fuzz harness (fuzz/cache_entry.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compile/compiler.hpp"

namespace cudatool::detail {

// One project header as it was when the entry was made.
struct Dependency {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;
};

struct CachedCompile {
  CompileResult result;  // without cache_key, cache_path, cache_hit, memo_hit; includes = paths
  std::vector<Dependency> dependencies;
};

std::string encode_cache_payload(const CachedCompile& compiled);
// nullopt for anything malformed; never throws.
std::optional<CachedCompile> decode_cache_payload(std::string_view payload);
// The lower layer of the above: the result, and, when `dependencies` is given, each
// recorded header as four strings (path, size, mtime in ns, SHA-256).
std::optional<CompileResult> decode_cache_payload(std::string_view payload,
                                                  std::vector<std::string>* dependencies);

// The headers as they are now (those that cannot be read are left out).
std::vector<Dependency> record_dependencies(const std::vector<std::filesystem::path>& paths);
// True when every recorded header is as it was: same size and mtime, or else same content.
bool dependencies_hold(const std::vector<Dependency>& dependencies);
// Whether a decoded result's image is one (a PTX text, a CUBIN read_cubin takes).
bool valid_image(const CompileResult& result);

}  // namespace cudatool::detail
