// The on-disk compile cache: content-addressed (an entry's name is the SHA-256 of
// everything that determines the output, computed by the caller), self-healing and safe
// to share between processes.
//
// Layout: <dir>/v1/<first two hex digits>/<64 hex digits>.entry. An entry is a short text
// header ("cudatool-cache 1", the payload's size and SHA-256) and the payload. Writes go
// to a temporary file beside the entry and are renamed into place, so a reader sees a
// whole entry or none, and any number of processes may store the same key at once (the
// last rename wins; every version is whole and equal). A truncated or corrupted entry
// fails its checksum, is deleted, and reads as a miss. A hit refreshes the entry's mtime;
// after a store the cache is trimmed, oldest mtime first, to its size bound.
//
// A cache that cannot be written (a read-only directory, a path that is a file) turns
// itself off for the rest of the process and records one warning; compiling goes on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

struct CacheConfig {
  std::filesystem::path dir;
  bool enabled = true;
  std::string disabled_by;  // "--no-cache" or "CUDATOOL_DISABLE_CACHE" when disabled
  std::uint64_t max_bytes = 256ull << 20;

  // The directory: `dir_flag` (--cache-dir), else $CUDATOOL_CACHE_DIR, else
  // $XDG_CACHE_HOME/cudatool, else $HOME/.cache/cudatool. Disabled by `no_cache`
  // (--no-cache) or a CUDATOOL_DISABLE_CACHE that is set and not "", "0", "false", "no".
  // The bound: $CUDATOOL_CACHE_MAX_SIZE (bytes, or with a K, M or G suffix), default
  // 256M. Throws UsageError for a malformed size.
  static CacheConfig from_environment(const std::optional<std::string>& dir_flag, bool no_cache);
};

// Sizes are parsed by parse_size (units.hpp), shared by the whole tool.

struct CacheStats {
  std::string dir;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
};
void to_json(nlohmann::json& j, const CacheStats& s);

class CompileCache {
 public:
  explicit CompileCache(CacheConfig config);

  bool enabled() const { return config_.enabled && !broken_; }
  const CacheConfig& config() const { return config_; }
  std::filesystem::path entry_path(const std::string& key) const;

  // The payload stored under `key`, or nullopt for a miss (also for a damaged entry,
  // which is removed).
  std::optional<std::string> load(const std::string& key);
  // Stores atomically; returns false (and disables the cache, with one warning) when the
  // directory cannot be written.
  bool store(const std::string& key, std::string_view payload);

  CacheStats stats() const;
  // Removes every entry (and stray temporary files); returns how many entries went.
  std::uint64_t clear();
  // Removes oldest entries until the total is at most `max_bytes`; returns how many went.
  std::uint64_t trim(std::uint64_t max_bytes);

  // Warnings for the caller to print (the library prints nothing).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void disable(const std::string& why);
  CacheConfig config_;
  bool broken_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace cudatool
