// The on-disk compile cache: content-addressed (an entry's name is the SHA-256 of
// everything that determines the output, computed by the caller), self-healing and safe
// to share between processes.
//
// Layout: <dir>/v2/<first two hex digits>/<64 hex digits>.entry. An entry is the cache
// store's (lib/src/base/cache_store.hpp, as the device cache's): a short text header and the
// payload:
//   cudatool-cache 2\n  key <64 hex digits>\n  size <decimal>\n  sha256 <64 hex digits>\n  payload
// The key is the entry's own (an entry copied over another is refused), the size and
// checksum cover the payload. Writes go to a temporary file beside the entry and are
// renamed into place, so a reader sees a whole entry or none, and any number of processes
// may store the same key at once. Anything wrong with an entry (its header, size, checksum,
// key, type: a directory, a link or a FIFO where the entry should be) makes it a miss and
// removes it; the caller removes an entry whose payload it cannot use (remove()). A hit
// refreshes the entry's mtime; after a store the cache is trimmed, oldest mtime first, to
// its size bound. (Format 1 lived in <dir>/v1; it is no longer read, and may be deleted.)
//
// Every path below <dir> is opened relative to a directory handle (openat) and never
// through a symbolic link (O_NOFOLLOW): a link planted at v2, at a two-digit directory or
// at an entry is not followed by a load, a store, --cache-stats, --cache-clear or
// --cache-trim; a store replaces it with a real directory, the others skip it. Clear, trim
// and stats touch only files named like entries (and clear the temporaries of stores).
//
// Trust, as ssh treats its files: the cache directory and everything cudatool creates in
// it are made 0700 (entries 0600). A directory below it (v2, a two-digit one) that is not
// owned by the user (or root) or is writable by group or others turns the cache off for the
// process with one warning; so does such a cache directory itself, unless it is sticky (a
// shared 1777 directory, where nobody can rename or remove another user's files). An entry
// not owned by the user, or writable by others, is a miss with one warning, and the store
// that follows replaces it. Stats, clear and trim skip all of these.
//
// --cache-clear leaves the temporaries of stores under way alone (younger than an hour);
// an older one was left by a store that died, and goes.
//
// A cache that cannot be written (a read-only directory, a path that is a file) turns
// itself off for the rest of the process and records one warning; compiling goes on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

struct CacheConfig {
  std::filesystem::path dir;
  bool enabled = true;
  std::string disabled_by;  // "no_cache", "CUDATOOL_DISABLE_CACHE", "HOME" when disabled
  std::string note;         // why the cache is off, when the user should be told
  std::uint64_t max_bytes = 256ull << 20;

  // The directory: `dir_flag` (cudatool's --cache-dir), else $CUDATOOL_CACHE_DIR, else
  // $XDG_CACHE_HOME/cudatool (an absolute XDG_CACHE_HOME only: the XDG Base Directory
  // spec says to ignore a relative one), else $HOME/.cache/cudatool. XDG_CACHE_HOME or HOME must be
  // an existing directory: cudatool creates only what is below it, and with a HOME that
  // does not exist the cache is off, with a note that names CUDATOOL_CACHE_DIR and, when
  // given, `dir_flag_name` (how the caller names `dir_flag`: cudatool's "--cache-dir").
  // Disabled by `no_cache` or a CUDATOOL_DISABLE_CACHE that is set and not "", "0",
  // "false", "no". The bound: $CUDATOOL_CACHE_MAX_SIZE (bytes, or with a K, M or G
  // suffix), default 256M. Throws UsageError for a malformed size.
  static CacheConfig from_environment(const std::optional<std::string>& dir_flag, bool no_cache,
                                      std::string_view dir_flag_name = "");
};

// Sizes are parsed by parse_size (units.hpp), shared by the whole tool.

struct CacheStats {
  std::string dir;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
};

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
  // Removes the entry stored under `key`, whatever it is (a payload the caller cannot use).
  void remove(const std::string& key);
  // Removes every entry (and stray temporary files); returns how many entries went.
  std::uint64_t clear();
  // Removes oldest entries until the total is at most `max_bytes`; returns how many went.
  std::uint64_t trim(std::uint64_t max_bytes);

  // Warnings for the caller to print (the library prints nothing).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void disable(const std::string& why);
  // False, and the cache disabled with one warning, when `fd` (the directory `path`) is not
  // the user's own or is writable by others (see above).
  bool trusted(int fd, const std::filesystem::path& path, bool top);
  bool distrust_warned_ = false;
  CacheConfig config_;
  bool broken_ = false;
  std::vector<std::string> warnings_;
};

// An entry file's bytes as written for `key`.
std::string format_cache_entry(std::string_view key, std::string_view payload);
// The payload of an entry file's bytes, checked against its header and `expected_key`;
// nullopt for anything else. Never throws.
std::optional<std::string_view> parse_cache_entry(std::string_view bytes,
                                                  std::string_view expected_key);

}  // namespace cudatool
