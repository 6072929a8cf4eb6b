// The payload of a compile cache entry (after the entry's own header, compile_cache.hpp):
// "<length>\n", that many bytes of JSON (the result without its image and cache fields, and
// the files it was compiled with), then the image. Also the files' record and its check on
// a hit (compiler.hpp: size, mtime and ctime by stat, the SHA-256 only when one moved; a
// place the compiler looked at and found nothing must still hold nothing). Exposed for the
// tests and the fuzz harness (fuzz/cache_entry.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compile/compiler.hpp"

namespace cudatool::detail {

// One file the compile depended on, as it was when the entry was made: a header it read
// (CompileResult::includes), or a place it looked at (source_scan.hpp's `checked`), where a
// file may be (shadowed by an earlier one) or not.
struct Dependency {
  std::string path;
  bool read = true;    // a header the compiler read
  bool exists = true;  // false: no file there (size, times and hash unused)
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;  // moves on every write, and on `cp -p` or `touch -d` too
  std::string sha256;
};

struct CachedCompile {
  CompileResult result;  // without cache_key, cache_path, cache_hit, memo_hit; includes = paths
  std::vector<Dependency> dependencies;
};

std::string encode_cache_payload(const CachedCompile& compiled);
// nullopt for anything malformed; never throws.
std::optional<CachedCompile> decode_cache_payload(std::string_view payload);
// The lower layer of the above: the result, and, when `dependencies` is given, the
// recorded files.
std::optional<CompileResult> decode_cache_payload(std::string_view payload,
                                                  std::vector<Dependency>* dependencies);

// The files as they are now: `read` the headers the compiler reads, `checked` the places it
// looks at (source_scan.hpp).
std::vector<Dependency> record_dependencies(const std::vector<std::filesystem::path>& read,
                                            const std::vector<std::filesystem::path>& checked = {});
// True when every recorded file is as it was: same size, mtime and ctime, or else same
// content; still absent where there was none.
bool dependencies_hold(const std::vector<Dependency>& dependencies);
// Whether a decoded result's image is one (a PTX text, a CUBIN read_cubin takes).
bool valid_image(const CompileResult& result);

}  // namespace cudatool::detail
